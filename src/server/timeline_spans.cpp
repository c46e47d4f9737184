// A thread's timeline as OpenTelemetry spans in the OTLP/JSON encoding: resourceSpans →
// scopeSpans → spans, ids in hex, times as decimal strings of nanoseconds since the epoch,
// attributes as [{key, value: {stringValue | intValue}}].
#include <string>

#include "core/sha256.h"
#include "server/thread_timeline.h"
#include "tollgate/iso_time.h"

namespace tollgate::server {
namespace {

constexpr int kSpanKindInternal = 1;
constexpr int kStatusOk = 1;
constexpr int kStatusError = 2;

// 32 hex digits: the thread's UUID without dashes (any other id: digits of its SHA-256).
std::string trace_id(const std::string& thread_id) {
  std::string hex;
  for (char c : thread_id) {
    if (c != '-') hex += c;
  }
  if (hex.size() == 32 && hex.find_first_not_of("0123456789abcdef") == std::string::npos) return hex;
  return core::sha256_hex(thread_id).substr(0, 32);
}

std::string span_id(const std::string& seed) {
  return core::sha256_hex(seed).substr(0, 16);
}

std::string nanos(const Json& iso) {
  if (!iso.is_string()) return "0";
  const std::int64_t millis = parse_iso_utc_millis(iso.get<std::string>()).value_or(0);
  return std::to_string(millis) + "000000";
}

class Attributes {
 public:
  void add(const std::string& key, const Json& value) {
    if (value.is_null()) return;
    Json typed;
    if (value.is_string()) typed = {{"stringValue", value}};
    else if (value.is_boolean()) typed = {{"boolValue", value}};
    // OTLP/JSON writes 64-bit integers as strings.
    else if (value.is_number_integer()) typed = {{"intValue", std::to_string(value.get<std::int64_t>())}};
    else if (value.is_number()) typed = {{"doubleValue", value}};
    else typed = {{"stringValue", value.dump()}};
    list_.push_back(Json{{"key", key}, {"value", std::move(typed)}});
  }
  Json take() { return std::move(list_); }

 private:
  Json list_ = Json::array();
};

std::string step_name(const Json& step) {
  const std::string kind = step.value("kind", "");
  if (kind == "tool_call") return "tool " + step.value("name", std::string("?"));
  if (kind == "model_call") return "model " + step.value("node", std::string());
  return kind + " " + step.value("node", std::string());
}

Json step_span(const Json& step, const std::string& trace, const std::string& parent,
               const std::string& seed) {
  Attributes attributes;
  attributes.add("tollgate.step.kind", step.value("kind", Json()));
  attributes.add("tollgate.node", step.value("node", Json()));
  attributes.add("tollgate.step", step.value("step", Json()));
  attributes.add("tollgate.checkpoint_id", step.value("checkpoint_id", Json()));
  Json start = step.value("started_at", Json());
  Json end = step.value("ended_at", Json());
  const std::string kind = step.value("kind", "");
  if (kind == "model_call") {
    attributes.add("gen_ai.request.model", step.value("model", Json()));
    const Json usage = step.value("usage", Json());
    if (usage.is_object()) {
      attributes.add("gen_ai.usage.input_tokens", usage.value("input_tokens", Json()));
      attributes.add("gen_ai.usage.output_tokens", usage.value("output_tokens", Json()));
    }
    attributes.add("tollgate.input.message_count", step["input"].value("message_count", Json()));
  } else if (kind == "tool_call") {
    attributes.add("gen_ai.tool.name", step.value("name", Json()));
    attributes.add("gen_ai.tool.call.id", step.value("tool_call_id", Json()));
    attributes.add("tollgate.tool.args", step.value("args", Json()));
    attributes.add("tollgate.tool.answered_by", step.value("answered_by", Json()));
  } else if (kind == "interrupt") {
    start = end = step.value("at", Json());
    const Json decisions = step.value("decisions", Json::array());
    for (std::size_t i = 0; i < decisions.size(); ++i) {
      const std::string prefix = "tollgate.decision." + std::to_string(i) + ".";
      attributes.add(prefix + "decided_by", decisions[i].value("decided_by", Json()));
      attributes.add(prefix + "received_at", decisions[i].value("received_at", Json()));
      attributes.add(prefix + "outcome", decisions[i].value("outcome", Json()));
      attributes.add(prefix + "decided", decisions[i].value("decided", Json()));
      if (decisions[i]["received_at"].is_string()) end = decisions[i]["received_at"];
    }
  }
  Json span{{"traceId", trace},
            {"spanId", span_id(seed)},
            {"parentSpanId", parent},
            {"name", step_name(step)},
            {"kind", kSpanKindInternal},
            {"startTimeUnixNano", nanos(start)},
            {"endTimeUnixNano", nanos(end)},
            {"attributes", attributes.take()}};
  const Json error = step.value("error", Json());
  span["status"] = error.is_null() ? Json{{"code", kStatusOk}}
                                   : Json{{"code", kStatusError},
                                          {"message", error.is_string() ? error.get<std::string>() : error.dump()}};
  return span;
}

Json run_span(const Json& run, const std::string& trace) {
  Attributes attributes;
  attributes.add("tollgate.run_id", run["run_id"]);
  attributes.add("tollgate.run.status", run["status"]);
  attributes.add("tollgate.run.kind", run["kind"]);
  attributes.add("tollgate.assistant_id", run["assistant_id"]);
  attributes.add("tollgate.started_by", run["started_by"]);
  attributes.add("tollgate.decided_by", run["decided_by"]);
  attributes.add("tollgate.resumed_run_id", run["resumed_run_id"]);
  Json span{{"traceId", trace},
            {"spanId", span_id("run:" + run["run_id"].get<std::string>())},
            {"parentSpanId", ""},
            {"name", "run " + run["run_id"].get<std::string>()},
            {"kind", kSpanKindInternal},
            {"startTimeUnixNano", nanos(run["created_at"])},
            {"endTimeUnixNano", nanos(run["updated_at"])},
            {"attributes", attributes.take()}};
  const std::string status = run["status"].get<std::string>();
  span["status"] = status == "error" || status == "timeout" ? Json{{"code", kStatusError}}
                                                            : Json{{"code", kStatusOk}};
  // A resumed run points at the run that paused.
  if (run["resumed_run_id"].is_string()) {
    span["links"] = Json::array({Json{{"traceId", trace},
                                      {"spanId", span_id("run:" + run["resumed_run_id"].get<std::string>())},
                                      {"attributes", Json::array()}}});
  }
  return span;
}

}  // namespace

Json timeline_to_otel(const Json& timeline) {
  const std::string thread_id = timeline["thread_id"].get<std::string>();
  const std::string trace = trace_id(thread_id);
  Json spans = Json::array();
  for (const Json& run : timeline["runs"]) {
    Json span = run_span(run, trace);
    const std::string parent = span["spanId"].get<std::string>();
    spans.push_back(std::move(span));
    const Json& steps = run["steps"];
    for (std::size_t i = 0; i < steps.size(); ++i) {
      spans.push_back(step_span(steps[i], trace, parent,
                                run["run_id"].get<std::string>() + ":" + std::to_string(i)));
    }
  }
  Attributes resource;
  resource.add("service.name", "tollgate");
  resource.add("tollgate.thread_id", thread_id);
  return Json{{"resourceSpans",
               Json::array({Json{{"resource", {{"attributes", resource.take()}}},
                                 {"scopeSpans",
                                  Json::array({Json{{"scope", {{"name", "tollgate.timeline"}}},
                                                    {"spans", std::move(spans)}}})}}})}};
}

}  // namespace tollgate::server
