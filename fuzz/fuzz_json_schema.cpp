// The JSON Schema validator: an input [schema, value] compiles the schema and validates the
// value; any other JSON is compiled as a schema and validates a few values and itself.
#include <cstdint>

#include "fuzz_input.h"
#include "tollgate/error.h"
#include "tollgate/json_parse.h"
#include "tollgate/json_schema.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tollgate;
  const Json input = try_parse_json(fuzz::as_string(data, size));
  if (input.is_discarded()) return 0;
  const bool pair = input.is_array() && input.size() == 2;
  const Json schema = pair ? input[0] : input;
  const Json values = pair ? Json::array({input[1]})
                           : Json::array({nullptr, 1, 2.5, "text", Json::array({1, "a"}),
                                          Json{{"a", 1}, {"b", "x"}}, input});
  try {
    const JsonSchema compiled = JsonSchema::compile(schema);
    for (const Json& value : values) {
      const std::vector<SchemaError> errors = compiled.validate(value);
      if (compiled.is_valid(value) != errors.empty()) __builtin_trap();  // the two must agree
      (void)format_schema_errors(errors);
    }
  } catch (const Error&) {
  }
  return 0;
}
