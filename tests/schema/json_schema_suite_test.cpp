// Runs the official JSON-Schema-Test-Suite (Debian package json-schema-test-suite, draft 7)
// against our validator: one test per keyword file, every case of the file checked, with the
// few cases that need features we refuse on purpose listed below with the reason.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "tollgate/error.h"
#include "tollgate/json_schema.h"

namespace tollgate {
namespace {

constexpr const char* kSuiteDir = "/usr/share/json-schema-test-suite/tests/draft7/";

struct Skip {
  const char* file;
  const char* group;  // test group description
  const char* reason;
};

// Groups whose schema we refuse at compile time, on purpose.
constexpr Skip kSkips[] = {
    {"ref.json", "remote ref, containing refs itself",
     "references the remote draft-07 meta-schema; remote references are not supported"},
    {"ref.json", "Recursive references between schemas",
     "resolves $ref against an $id base URI; only JSON-pointer references are supported"},
};

const char* skip_reason(const std::string& file, const std::string& group) {
  for (const auto& skip : kSkips) {
    if (file == skip.file && group == skip.group) return skip.reason;
  }
  return nullptr;
}

// Left out entirely: refRemote.json and definitions.json (every case needs a remote
// reference), optional/format (formats are annotations here), optional/content and
// optional/ecmascript-regex (its one group checks "format": "regex").
const std::vector<std::string> kFiles = {
    "additionalItems.json",
    "additionalProperties.json",
    "allOf.json",
    "anyOf.json",
    "boolean_schema.json",
    "const.json",
    "contains.json",
    "default.json",
    "dependencies.json",
    "enum.json",
    "exclusiveMaximum.json",
    "exclusiveMinimum.json",
    "if-then-else.json",
    "items.json",
    "maxItems.json",
    "maxLength.json",
    "maxProperties.json",
    "maximum.json",
    "minItems.json",
    "minLength.json",
    "minProperties.json",
    "minimum.json",
    "multipleOf.json",
    "not.json",
    "oneOf.json",
    "pattern.json",
    "patternProperties.json",
    "properties.json",
    "propertyNames.json",
    "ref.json",
    "required.json",
    "type.json",
    "uniqueItems.json",
    "optional/zeroTerminatedFloats.json",
    "optional/bignum.json",
};

Json load(const std::string& file) {
  std::ifstream in(std::string(kSuiteDir) + file);
  EXPECT_TRUE(in.good()) << "missing suite file " << file
                         << " (apt package json-schema-test-suite)";
  return Json::parse(in);
}

class JsonSchemaSuite : public testing::TestWithParam<std::string> {};

TEST_P(JsonSchemaSuite, EveryCaseOfTheFileValidatesAsExpected) {
  const std::string& file = GetParam();
  Json groups = load(file);
  int checked = 0;
  for (const auto& group : groups) {
    const std::string description = group.at("description").get<std::string>();
    if (const char* reason = skip_reason(file, description)) {
      std::cout << "[ SKIPPED ] " << file << " / " << description << ": " << reason << "\n";
      continue;
    }
    std::optional<JsonSchema> schema;
    try {
      schema = JsonSchema::compile(group.at("schema"));
    } catch (const Error& e) {
      ADD_FAILURE() << file << " / " << description << ": schema refused: " << e.what();
      continue;
    }
    for (const auto& test : group.at("tests")) {
      bool expected = test.at("valid").get<bool>();
      const Json& data = test.at("data");
      std::vector<SchemaError> errors = schema->validate(data);
      EXPECT_EQ(errors.empty(), expected)
          << file << " / " << description << " / " << test.at("description").get<std::string>()
          << "\n  data: " << data.dump() << "\n  errors: " << format_schema_errors(errors);
      EXPECT_EQ(schema->is_valid(data), expected)
          << "is_valid disagrees: " << file << " / " << description << " / "
          << test.at("description").get<std::string>();
      ++checked;
    }
  }
  EXPECT_GT(checked, 0);
}

std::string test_name(const testing::TestParamInfo<std::string>& info) {
  std::string name;
  for (char c : info.param) {
    if (c == '.') break;
    name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Draft7, JsonSchemaSuite, testing::ValuesIn(kFiles), test_name);

}  // namespace
}  // namespace tollgate
