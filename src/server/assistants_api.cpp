// Routes: GET /ok, GET /info, and /assistants (§4.1).
#include <algorithm>

#include "server/api.h"
#include "server/cluster.h"
#include "server/ids.h"
#include "server/wire_format.h"

namespace tollgate::server {
namespace {

AssistantRecord require_assistant(ApiContext& context, const std::string& id) {
  auto assistant = find_assistant(context, id);
  if (!assistant) throw Error::NotFound("Assistant not found");
  return *assistant;
}

std::vector<AssistantRecord> matching_assistants(ApiContext& context, const Json& body) {
  auto graph_id = optional_string(body, "graph_id");
  auto name = optional_string(body, "name");
  Json metadata = optional_object(body, "metadata");
  std::string needle = name ? *name : "";
  std::transform(needle.begin(), needle.end(), needle.begin(), ::tolower);
  std::vector<AssistantRecord> out;
  for (AssistantRecord& a : context.store.list_assistants()) {
    if (graph_id && a.graph_id != *graph_id) continue;
    if (!json_contains(a.metadata, metadata)) continue;
    if (name) {
      std::string lower = a.name;
      std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
      if (lower.find(needle) == std::string::npos) continue;
    }
    out.push_back(std::move(a));
  }
  return out;
}

Json select_fields(const Json& object, const Json& select) {
  if (!select.is_array() || select.empty()) return object;
  Json out = Json::object();
  for (const Json& field : select) {
    if (field.is_string() && object.contains(field.get<std::string>())) {
      out[field.get<std::string>()] = object[field.get<std::string>()];
    }
  }
  return out;
}

}  // namespace

// What /info tells of authentication: whether a credential is needed, and whom the request's
// credential names (null without a valid one), so a client knows to ask for a key.
Json auth_info(const ApiContext& context, const Identity& who) {
  Json identity = nullptr;
  if (!who.empty()) identity = Json{{"id", who.id}, {"name", who.name}, {"roles", who.roles}};
  return Json{{"enabled", context.auth_enabled}, {"identity", identity}};
}

void add_meta_routes(Router& router, ApiContext& context) {
  const ApiContext* ctx = &context;
  // A replica whose heartbeat does not reach the database answers 503, so a load balancer
  // sends its requests elsewhere until the database is back.
  router.add_open("GET", "/ok", [ctx](HttpRequest&) {
    if (ctx->cluster != nullptr && !ctx->cluster->healthy()) {
      return HttpResponse::json(
          {{"ok", false}, {"detail", "the database cannot be reached from this replica"}}, 503);
    }
    return HttpResponse::json({{"ok", true}});
  });
  router.add_open("GET", "/info", [ctx](HttpRequest& request) {
    Json info{{"version", "0.1.0"},
              {"server", "tollgate"},
              {"context", "cpp"},
              {"flags", {{"assistants", true}, {"crons", false}, {"langsmith", false}}},
              {"auth", auth_info(*ctx, request.identity)}};
    if (ctx->cluster != nullptr) info["replica"] = ctx->cluster->replica_id();
    return HttpResponse::json(info);
  });
}

void add_assistant_routes(Router& router, ApiContext& context) {
  ApiContext* ctx = &context;

  router.add("POST", "/assistants", [ctx](HttpRequest& request) {
    require_admin(request.identity, "create assistants");
    Json body = require_object_body(request);
    auto graph_id = optional_string(body, "graph_id");
    if (!graph_id) throw Error::InvalidArgument("graph_id: required");
    if (ctx->runs.graph(*graph_id) == nullptr) {
      throw Error::NotFound("Graph \"" + *graph_id + "\" not found");
    }
    std::string if_exists = enum_field(body, "if_exists", {"raise", "do_nothing"}, "raise");
    AssistantRecord a;
    a.assistant_id = optional_string(body, "assistant_id").value_or(new_uuid7(*ctx->clock));
    require_uuid(a.assistant_id, "assistant_id");
    if (auto existing = ctx->store.get_assistant(a.assistant_id)) {
      if (if_exists == "do_nothing") return HttpResponse::json(assistant_to_json(*existing));
      throw Error::Conflict("Assistant already exists");
    }
    a.graph_id = *graph_id;
    a.name = optional_string(body, "name").value_or("Untitled");
    a.description = optional_string(body, "description");
    a.config = optional_object(body, "config");
    a.context = optional_object(body, "context");
    a.metadata = optional_object(body, "metadata");
    a.created_at = a.updated_at = now_millis(*ctx->clock);
    ctx->store.put_assistant(a);
    return HttpResponse::json(assistant_to_json(a));
  });

  router.add("POST", "/assistants/search", [ctx](HttpRequest& request) {
    Json body = require_object_body(request);
    std::size_t limit = optional_count(body, "limit", 10);
    std::size_t offset = optional_count(body, "offset", 0);
    std::string sort_by =
        enum_field(body, "sort_by",
                   {"assistant_id", "graph_id", "name", "created_at", "updated_at"}, "created_at");
    std::string order = enum_field(body, "sort_order", {"asc", "desc"}, "desc");
    std::vector<AssistantRecord> found = matching_assistants(*ctx, body);
    std::stable_sort(found.begin(), found.end(),
                     [&](const AssistantRecord& x, const AssistantRecord& y) {
                       Json a = assistant_to_json(x)[sort_by];
                       Json b = assistant_to_json(y)[sort_by];
                       return order == "asc" ? a < b : b < a;
                     });
    Json out = Json::array();
    for (std::size_t i = offset; i < found.size() && out.size() < limit; ++i) {
      out.push_back(select_fields(assistant_to_json(found[i]), body.value("select", Json())));
    }
    HttpResponse response = HttpResponse::json(out);
    response.add_header("X-Pagination-Total", std::to_string(found.size()));
    if (offset + limit < found.size()) {
      response.add_header("X-Pagination-Next", std::to_string(offset + limit));
    }
    return response;
  });

  router.add("POST", "/assistants/count", [ctx](HttpRequest& request) {
    return HttpResponse::json(matching_assistants(*ctx, require_object_body(request)).size());
  });

  router.add("GET", "/assistants/:id", [ctx](HttpRequest& request) {
    return HttpResponse::json(assistant_to_json(require_assistant(*ctx, request.params[0])));
  });

  router.add("PATCH", "/assistants/:id", [ctx](HttpRequest& request) {
    require_admin(request.identity, "change assistants");
    Json body = require_object_body(request);
    AssistantRecord a = require_assistant(*ctx, request.params[0]);
    if (auto graph_id = optional_string(body, "graph_id")) {
      if (ctx->runs.graph(*graph_id) == nullptr) {
        throw Error::NotFound("Graph \"" + *graph_id + "\" not found");
      }
      a.graph_id = *graph_id;
    }
    if (body.contains("config")) a.config = optional_object(body, "config");
    if (body.contains("context")) a.context = optional_object(body, "context");
    if (body.contains("metadata")) a.metadata.update(optional_object(body, "metadata"));
    if (auto name = optional_string(body, "name")) a.name = *name;
    if (body.contains("description")) a.description = optional_string(body, "description");
    a.version += 1;
    a.updated_at = now_millis(*ctx->clock);
    ctx->store.put_assistant(a);
    return HttpResponse::json(assistant_to_json(a));
  });

  router.add("DELETE", "/assistants/:id", [ctx](HttpRequest& request) {
    require_admin(request.identity, "delete assistants");
    AssistantRecord a = require_assistant(*ctx, request.params[0]);
    // The assistant every run of a served graph resolves to: deleting it would 404 them all.
    if (a.assistant_id == system_assistant_id(a.graph_id) &&
        ctx->runs.graph(a.graph_id) != nullptr) {
      throw Error::Conflict("Assistant " + a.assistant_id + " is the system assistant of graph " +
                            a.graph_id + " and cannot be deleted");
    }
    ctx->store.delete_assistant(a.assistant_id);
    return HttpResponse::json(Json::array({a.assistant_id}));
  });

  router.add("GET", "/assistants/:id/graph", [ctx](HttpRequest& request) {
    AssistantRecord a = require_assistant(*ctx, request.params[0]);
    const CompiledGraph* graph = ctx->runs.graph(a.graph_id);
    Json nodes = Json::array({{{"id", "__start__"}, {"type", "schema"}, {"data", "__start__"}}});
    if (graph != nullptr) {
      for (const std::string& name : graph->node_names()) {
        if (name == "__start__" || name == "__end__") continue;
        nodes.push_back({{"id", name},
                         {"type", "runnable"},
                         {"data", {{"id", {"tollgate", "Node"}}, {"name", name}}},
                         {"metadata", Json::object()}});
      }
    }
    nodes.push_back({{"id", "__end__"}, {"type", "schema"}, {"data", "__end__"}});
    return HttpResponse::json({{"nodes", nodes}, {"edges", Json::array()}});
  });

  router.add("GET", "/assistants/:id/schemas", [ctx](HttpRequest& request) {
    AssistantRecord a = require_assistant(*ctx, request.params[0]);
    return HttpResponse::json({{"graph_id", a.graph_id},
                               {"input_schema", nullptr},
                               {"output_schema", nullptr},
                               {"state_schema", nullptr},
                               {"config_schema", nullptr},
                               {"context_schema", nullptr}});
  });

  router.add("GET", "/assistants/:id/subgraphs", [ctx](HttpRequest& request) {
    require_assistant(*ctx, request.params[0]);
    return HttpResponse::json(Json::object());
  });
}

}  // namespace tollgate::server
