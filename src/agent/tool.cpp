// Tool: a named function with a compiled argument schema.
#include "tollgate/tool.h"

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

Tool::Tool(std::string name, std::string description, Json args_schema, ToolFunction function)
    : name_(std::move(name)),
      description_(std::move(description)),
      schema_(compile_args_schema(name_, args_schema)),
      function_(std::move(function)) {
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

const Tool* find_tool(const std::vector<Tool>& tools, std::string_view name) {
  for (const auto& tool : tools) {
    if (tool.name() == name) return &tool;
  }
  return nullptr;
}

}  // namespace tollgate
