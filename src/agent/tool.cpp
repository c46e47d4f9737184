// Tool: a named function with a compiled argument schema.
#include "tollgate/tool.h"

#include "core/sha256.h"
#include "tollgate/error.h"

namespace tollgate {
namespace {

JsonSchema compile_args_schema(const std::string& tool, const Json& schema) {
  try {
    return JsonSchema::compile(schema);
  } catch (const Error& e) {
    throw Error::InvalidArgument("tool '" + tool + "': args schema: " + e.what());
  }
}

}  // namespace

Tool::Tool(std::string name, std::string description, Json args_schema, ToolFunction function,
           ToolOptions options)
    : name_(std::move(name)),
      description_(std::move(description)),
      schema_(compile_args_schema(name_, args_schema)),
      function_(std::move(function)),
      options_(options) {
  if (name_.empty()) throw Error::InvalidArgument("tool.name: must not be empty");
  if (!function_) throw Error::InvalidArgument("tool '" + name_ + "': function is empty");
}

std::vector<SchemaError> Tool::check_args(const Json& args) const {
  if (!args.is_object()) {
    return {SchemaError{"", std::string("expected object, got ") + args.type_name()}};
  }
  return schema_.validate(args);
}

Json Tool::invoke(const Json& args, const ToolContext& context) const {
  return function_(args, context);
}

std::string tool_call_digest(const std::string& name, const Json& args) {
  return core::sha256_hex(json_object("args", args, "name", name).dump());
}

std::string idempotency_key(const std::string& thread_id, const std::string& tool_call_id,
                            const std::string& digest) {
  // Lengths first, so that no two (thread, call) pairs join to the same text.
  return core::sha256_hex(std::to_string(thread_id.size()) + ":" + thread_id + "\n" +
                          std::to_string(tool_call_id.size()) + ":" + tool_call_id + "\n" +
                          digest);
}

const Tool* find_tool(const std::vector<Tool>& tools, std::string_view name) {
  for (const auto& tool : tools) {
    if (tool.name() == name) return &tool;
  }
  return nullptr;
}

}  // namespace tollgate
