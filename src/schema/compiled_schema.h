// The compiled form of a JsonSchema: a flat vector of nodes that refer to each other by
// index, so $ref cycles need no ownership cycles. Built by schema_compiler.cpp, walked by
// schema_validator.cpp. Immutable once built.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "schema/pattern.h"
#include "tollgate/json_schema.h"

namespace tollgate::schema {

// Bits of Node::types; 0 means "any type".
enum TypeBit : std::uint8_t {
  kNullBit = 1,
  kBooleanBit = 2,
  kIntegerBit = 4,
  kNumberBit = 8,
  kStringBit = 16,
  kArrayBit = 32,
  kObjectBit = 64,
};

inline constexpr int kNoNode = -1;

struct PatternRule {
  Pattern pattern;
  int node = kNoNode;  // patternProperties: the schema for matching members
};

// "dependencies": either required properties or a schema, when `property` is present.
struct Dependency {
  std::string property;
  std::vector<std::string> required;
  int node = kNoNode;
};

struct Node {
  enum class Kind : std::uint8_t { kAcceptAll, kRejectAll, kKeywords, kRef };
  Kind kind = Kind::kAcceptAll;

  // The $ref target, resolved after the walk. kRef: the whole schema; kKeywords (2019-09 and
  // later): checked next to the other keywords.
  int ref = kNoNode;
  std::string ref_text;  // "#/definitions/x"; empty when there is no $ref

  std::uint8_t types = 0;

  // numbers
  std::optional<double> minimum, maximum, exclusive_minimum, exclusive_maximum, multiple_of;
  // strings
  std::optional<std::size_t> min_length, max_length;
  std::optional<PatternRule> pattern;
  // arrays
  int items = kNoNode;         // one schema for every item
  std::vector<int> item_list;  // positional schemas ("items": [...])
  bool has_item_list = false;
  int additional_items = kNoNode;  // only meaningful with has_item_list
  int contains = kNoNode;
  std::optional<std::size_t> min_items, max_items;
  bool unique_items = false;
  // objects
  std::vector<std::pair<std::string, int>> properties;  // sorted by name
  std::vector<std::string> required;
  std::vector<PatternRule> pattern_properties;
  int additional_properties = kNoNode;
  int property_names = kNoNode;
  std::optional<std::size_t> min_properties, max_properties;
  std::vector<Dependency> dependencies;
  // any type
  std::optional<std::vector<Json>> enum_values;
  std::optional<Json> const_value;
  std::vector<int> all_of, any_of, one_of;
  int not_schema = kNoNode;
  int if_schema = kNoNode, then_schema = kNoNode, else_schema = kNoNode;
};

}  // namespace tollgate::schema

namespace tollgate {

struct JsonSchema::Compiled {
  Json source;
  std::vector<schema::Node> nodes;  // nodes[0] is the root
};

}  // namespace tollgate
