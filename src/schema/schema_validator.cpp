// JsonSchema::validate / is_valid: one recursive walk over the compiled nodes. With no error
// sink it stops at the first violation and builds no strings (is_valid, and the trial runs
// of anyOf/oneOf/not branches); with a sink it reports every violation with its path.
#include <cmath>
#include <string_view>

#include "schema/compiled_schema.h"

namespace tollgate {
namespace {

using schema::kNoNode;
using schema::Node;

// The location of a value, as a linked list up to the root; turned into text only when an
// error is reported.
struct Path {
  const Path* parent = nullptr;
  const std::string* key = nullptr;  // object member, or
  std::size_t index = 0;             // array item when key is null
};

void append_path(const Path* path, std::string& out) {
  if (path == nullptr) return;
  append_path(path->parent, out);
  if (path->key != nullptr) {
    if (!out.empty()) out += '.';
    out += *path->key;
  } else {
    out += '[';
    out += std::to_string(path->index);
    out += ']';
  }
}

std::string path_text(const Path* path) {
  std::string out;
  append_path(path, out);
  return out;
}

const char* json_type_name(const Json& value) {
  switch (value.type()) {
    case Json::value_t::null:
      return "null";
    case Json::value_t::boolean:
      return "boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
    case Json::value_t::number_float:
      return "number";
    case Json::value_t::string:
      return "string";
    case Json::value_t::array:
      return "array";
    case Json::value_t::object:
      return "object";
    default:
      return "unknown";
  }
}

bool is_integral(const Json& value) {
  if (value.is_number_integer()) return true;  // includes unsigned
  if (!value.is_number_float()) return false;
  double d = value.get<double>();
  return std::isfinite(d) && std::floor(d) == d;
}

bool type_matches(std::uint8_t types, const Json& value) {
  switch (value.type()) {
    case Json::value_t::null:
      return types & schema::kNullBit;
    case Json::value_t::boolean:
      return types & schema::kBooleanBit;
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
      return types & (schema::kIntegerBit | schema::kNumberBit);
    case Json::value_t::number_float:
      return (types & schema::kNumberBit) || ((types & schema::kIntegerBit) && is_integral(value));
    case Json::value_t::string:
      return types & schema::kStringBit;
    case Json::value_t::array:
      return types & schema::kArrayBit;
    case Json::value_t::object:
      return types & schema::kObjectBit;
    default:
      return false;
  }
}

std::string type_list(std::uint8_t types) {
  static constexpr std::pair<std::uint8_t, const char*> kNames[] = {
      {schema::kStringBit, "string"},   {schema::kNumberBit, "number"},
      {schema::kIntegerBit, "integer"}, {schema::kBooleanBit, "boolean"},
      {schema::kObjectBit, "object"},   {schema::kArrayBit, "array"},
      {schema::kNullBit, "null"}};
  std::vector<const char*> names;
  for (const auto& [bit, name] : kNames) {
    if (!(types & bit)) continue;
    // "number" already says "integer".
    if (bit == schema::kIntegerBit && (types & schema::kNumberBit)) continue;
    names.push_back(name);
  }
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " or " : ", ";
    out += names[i];
  }
  return out;
}

std::size_t code_points(const std::string& text) {
  std::size_t n = 0;
  for (unsigned char c : text) n += (c & 0xC0) != 0x80;
  return n;
}

// Shortest text for a bound: 80 rather than 80.000000.
std::string number_text(double d) {
  Json j = d;
  if (std::isfinite(d) && std::floor(d) == d && std::fabs(d) < 9.0e15) {
    j = static_cast<std::int64_t>(d);
  }
  return j.dump();
}

bool is_multiple_of(const Json& value, double divisor) {
  if (value.is_number_integer() && std::floor(divisor) == divisor && divisor < 9.0e18) {
    auto d = static_cast<std::int64_t>(divisor);
    if (value.is_number_unsigned())
      return value.get<std::uint64_t>() % static_cast<std::uint64_t>(d) == 0;
    return value.get<std::int64_t>() % d == 0;
  }
  double quotient = value.get<double>() / divisor;
  if (!std::isfinite(quotient)) return false;
  return std::fabs(quotient - std::nearbyint(quotient)) <=
         1e-9 * std::fmax(1.0, std::fabs(quotient));
}

// Why a string could not be checked against a pattern that needs the backtracking engine.
std::string unchecked(const schema::Pattern& pattern, schema::Pattern::Result result) {
  if (result == schema::Pattern::Result::kTooLong) {
    return "is too long to check against pattern '" + pattern.source() + "' (at most " +
           std::to_string(schema::Pattern::kMaxBacktrackingInput) + " bytes)";
  }
  return "is too costly to check against pattern '" + pattern.source() + "' (more than " +
         std::to_string(schema::Pattern::kMaxBacktrackingSteps) + " backtracking steps or " +
         std::to_string(schema::Pattern::kMaxBacktrackingHeapKiB / 1024) + " MiB)";
}

std::string plural(std::size_t n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

class Validator {
 public:
  Validator(const JsonSchema::Compiled& compiled, std::vector<SchemaError>* sink)
      : nodes_(compiled.nodes), sink_(sink) {}

  bool check(int index, const Json& value, const Path* path, int depth) {
    if (depth > kMaxDepth) {
      return fail(path, "schema nesting exceeds " + std::to_string(kMaxDepth) + " levels");
    }
    const Node& node = nodes_[static_cast<std::size_t>(index)];
    switch (node.kind) {
      case Node::Kind::kAcceptAll:
        return true;
      case Node::Kind::kRejectAll:
        return fail(path, "no value is allowed here");
      case Node::Kind::kRef:
        return check(node.ref, value, path, depth + 1);
      case Node::Kind::kKeywords:
        break;
    }
    if (node.types != 0 && !type_matches(node.types, value)) {
      // Other keywords would only repeat the same complaint in other words.
      return fail(path, "expected " + type_list(node.types) + ", got " + json_type_name(value));
    }
    bool ok = true;
    auto keep = [&](bool passed) {
      ok = ok && passed;
      return passed || sink_ != nullptr;  // false: stop now, nobody wants the rest
    };
    if (node.enum_values && !keep(check_enum(*node.enum_values, value, path))) return false;
    if (node.const_value && *node.const_value != value &&
        !keep(fail(path, "must be equal to " + node.const_value->dump()))) {
      return false;
    }
    if (value.is_number() && !keep(check_number(node, value, path))) return false;
    if (value.is_string() && !keep(check_string(node, value, path))) return false;
    if (value.is_array() && !keep(check_array(node, value, path, depth))) return false;
    if (value.is_object() && !keep(check_object(node, value, path, depth))) return false;
    if (!keep(check_combinators(node, value, path, depth))) return false;
    return ok;
  }

 private:
  static constexpr int kMaxDepth = 256;

  bool fail(const Path* path, std::string message) {
    if (sink_ != nullptr) sink_->push_back(SchemaError{path_text(path), std::move(message)});
    return false;
  }

  // Runs a subschema without reporting: the combinators decide what to say.
  bool passes(int index, const Json& value, const Path* path, int depth) {
    Validator quiet(nodes_, nullptr);
    return quiet.check(index, value, path, depth);
  }

  Validator(const std::vector<Node>& nodes, std::vector<SchemaError>* sink)
      : nodes_(nodes), sink_(sink) {}

  bool check_enum(const std::vector<Json>& allowed, const Json& value, const Path* path) {
    for (const auto& candidate : allowed) {
      if (candidate == value) return true;
    }
    return fail(path, "must be one of " + Json(allowed).dump());
  }

  bool check_number(const Node& node, const Json& value, const Path* path) {
    double d = value.get<double>();
    bool ok = true;
    auto bound = [&](bool violated, const char* relation, double limit) {
      if (!violated) return true;
      ok = false;
      fail(path, std::string("must be ") + relation + " " + number_text(limit));
      return sink_ != nullptr;
    };
    if (node.minimum && !bound(d < *node.minimum, ">=", *node.minimum)) return false;
    if (node.maximum && !bound(d > *node.maximum, "<=", *node.maximum)) return false;
    if (node.exclusive_minimum &&
        !bound(d <= *node.exclusive_minimum, ">", *node.exclusive_minimum)) {
      return false;
    }
    if (node.exclusive_maximum &&
        !bound(d >= *node.exclusive_maximum, "<", *node.exclusive_maximum)) {
      return false;
    }
    if (node.multiple_of && !is_multiple_of(value, *node.multiple_of)) {
      ok = false;
      fail(path, "must be a multiple of " + number_text(*node.multiple_of));
    }
    return ok;
  }

  bool check_string(const Node& node, const Json& value, const Path* path) {
    const auto& text = value.get_ref<const std::string&>();
    bool ok = true;
    if (node.min_length || node.max_length) {
      std::size_t length = code_points(text);
      if (node.min_length && length < *node.min_length) {
        ok = fail(path, "must be at least " + plural(*node.min_length, "character"));
        if (sink_ == nullptr) return false;
      }
      if (node.max_length && length > *node.max_length) {
        ok = fail(path, "must be at most " + plural(*node.max_length, "character"));
        if (sink_ == nullptr) return false;
      }
    }
    if (node.pattern) {
      const schema::Pattern& pattern = node.pattern->pattern;
      switch (const schema::Pattern::Result found = pattern.search(text)) {
        case schema::Pattern::Result::kMatch:
          break;
        case schema::Pattern::Result::kNoMatch:
          ok = fail(path, "must match pattern '" + pattern.source() + "'");
          break;
        case schema::Pattern::Result::kTooLong:
        case schema::Pattern::Result::kTooCostly:
          ok = fail(path, unchecked(pattern, found));
          break;
      }
    }
    return ok;
  }

  bool check_array(const Node& node, const Json& value, const Path* path, int depth) {
    bool ok = true;
    const std::size_t size = value.size();
    if (node.min_items && size < *node.min_items) {
      ok = fail(path, "must have at least " + plural(*node.min_items, "item"));
      if (sink_ == nullptr) return false;
    }
    if (node.max_items && size > *node.max_items) {
      ok = fail(path, "must have at most " + plural(*node.max_items, "item"));
      if (sink_ == nullptr) return false;
    }
    if (node.unique_items) {
      for (std::size_t i = 0; i < size && ok; ++i) {
        for (std::size_t j = i + 1; j < size; ++j) {
          if (value[i] == value[j]) {
            ok = fail(path, "items must be unique (items " + std::to_string(i) + " and " +
                                std::to_string(j) + " are equal)");
            if (sink_ == nullptr) return false;
            break;
          }
        }
      }
    }
    for (std::size_t i = 0; i < size; ++i) {
      int item_schema = node.items;
      if (node.has_item_list) {
        item_schema = i < node.item_list.size() ? node.item_list[i] : node.additional_items;
      }
      if (item_schema == kNoNode) continue;
      Path item{path, nullptr, i};
      if (node.has_item_list && i >= node.item_list.size() &&
          nodes_[static_cast<std::size_t>(item_schema)].kind == Node::Kind::kRejectAll) {
        ok = fail(&item, "additional item is not allowed");
      } else if (!check(item_schema, value[i], &item, depth + 1)) {
        ok = false;
      }
      if (!ok && sink_ == nullptr) return false;
    }
    if (node.contains != kNoNode) {
      bool found = false;
      for (std::size_t i = 0; i < size && !found; ++i) {
        Path item{path, nullptr, i};
        found = passes(node.contains, value[i], &item, depth + 1);
      }
      if (!found) ok = fail(path, "must contain at least one matching item");
    }
    return ok;
  }

  bool check_object(const Node& node, const Json& value, const Path* path, int depth) {
    bool ok = true;
    for (const auto& name : node.required) {
      if (!value.contains(name)) {
        ok = fail(path, "missing required property '" + name + "'");
        if (sink_ == nullptr) return false;
      }
    }
    const std::size_t size = value.size();
    if (node.min_properties && size < *node.min_properties) {
      ok = fail(path, "must have at least " + plural(*node.min_properties, "property"));
      if (sink_ == nullptr) return false;
    }
    if (node.max_properties && size > *node.max_properties) {
      ok = fail(path, "must have at most " + plural(*node.max_properties, "property"));
      if (sink_ == nullptr) return false;
    }
    for (const auto& dependency : node.dependencies) {
      if (!value.contains(dependency.property)) continue;
      for (const auto& name : dependency.required) {
        if (!value.contains(name)) {
          ok = fail(path, "property '" + name + "' is required when '" + dependency.property +
                              "' is present");
          if (sink_ == nullptr) return false;
        }
      }
      if (dependency.node != kNoNode && !check(dependency.node, value, path, depth + 1)) {
        ok = false;
        if (sink_ == nullptr) return false;
      }
    }
    for (auto it = value.begin(); it != value.end(); ++it) {
      const std::string& key = it.key();
      Path member{path, &key, 0};
      if (node.property_names != kNoNode &&
          !passes(node.property_names, Json(key), &member, depth + 1)) {
        ok = fail(path, "property name '" + key + "' is not allowed");
        if (sink_ == nullptr) return false;
      }
      bool matched = false;
      auto prop = std::lower_bound(node.properties.begin(), node.properties.end(), key,
                                   [](const std::pair<std::string, int>& entry,
                                      const std::string& k) { return entry.first < k; });
      if (prop != node.properties.end() && prop->first == key) {
        matched = true;
        if (!check(prop->second, it.value(), &member, depth + 1)) {
          ok = false;
          if (sink_ == nullptr) return false;
        }
      }
      for (const auto& rule : node.pattern_properties) {
        schema::Pattern::Result found = rule.pattern.search(key);
        if (found == schema::Pattern::Result::kTooLong ||
            found == schema::Pattern::Result::kTooCostly) {
          ok = fail(&member, "property name " + unchecked(rule.pattern, found));
          if (sink_ == nullptr) return false;
          continue;
        }
        if (found == schema::Pattern::Result::kNoMatch) continue;
        matched = true;
        if (!check(rule.node, it.value(), &member, depth + 1)) {
          ok = false;
          if (sink_ == nullptr) return false;
        }
      }
      if (matched || node.additional_properties == kNoNode) continue;
      const Node& extra = nodes_[static_cast<std::size_t>(node.additional_properties)];
      if (extra.kind == Node::Kind::kRejectAll) {
        ok = fail(&member, "additional property is not allowed");
      } else if (!check(node.additional_properties, it.value(), &member, depth + 1)) {
        ok = false;
      }
      if (!ok && sink_ == nullptr) return false;
    }
    return ok;
  }

  bool check_combinators(const Node& node, const Json& value, const Path* path, int depth) {
    bool ok = true;
    if (node.ref != kNoNode && !check(node.ref, value, path, depth + 1)) {
      ok = false;
      if (sink_ == nullptr) return false;
    }
    for (int branch : node.all_of) {
      if (!check(branch, value, path, depth + 1)) {
        ok = false;
        if (sink_ == nullptr) return false;
      }
    }
    if (!node.any_of.empty() && !check_any_of(node.any_of, value, path, depth)) {
      ok = false;
      if (sink_ == nullptr) return false;
    }
    if (!node.one_of.empty()) {
      std::vector<std::size_t> matched;
      for (std::size_t i = 0; i < node.one_of.size() && matched.size() < 2; ++i) {
        if (passes(node.one_of[i], value, path, depth + 1)) matched.push_back(i);
      }
      if (matched.empty()) {
        ok = fail(path, "must match exactly one schema in oneOf, matched none");
      } else if (matched.size() > 1) {
        ok = fail(path, "must match exactly one schema in oneOf, matched " +
                            std::to_string(matched[0]) + " and " + std::to_string(matched[1]));
      }
      if (!ok && sink_ == nullptr) return false;
    }
    if (node.not_schema != kNoNode && passes(node.not_schema, value, path, depth + 1)) {
      ok = fail(path, "must not match the schema in 'not'");
      if (sink_ == nullptr) return false;
    }
    if (node.if_schema != kNoNode) {
      int branch =
          passes(node.if_schema, value, path, depth + 1) ? node.then_schema : node.else_schema;
      if (branch != kNoNode && !check(branch, value, path, depth + 1)) ok = false;
    }
    return ok;
  }

  // When every branch only disagrees about the type (Optional[int] is anyOf integer/null),
  // say which types would do; otherwise a summary.
  bool check_any_of(const std::vector<int>& branches, const Json& value, const Path* path,
                    int depth) {
    for (int branch : branches) {
      if (passes(branch, value, path, depth + 1)) return true;
    }
    if (sink_ == nullptr) return false;
    std::uint8_t types = 0;
    bool only_types = true;
    for (int branch : branches) {
      const Node* node = &nodes_[static_cast<std::size_t>(branch)];
      while (node->kind == Node::Kind::kRef) node = &nodes_[static_cast<std::size_t>(node->ref)];
      if (node->kind != Node::Kind::kKeywords || node->types == 0 ||
          type_matches(node->types, value)) {
        only_types = false;
        break;
      }
      types |= node->types;
    }
    if (only_types) {
      return fail(path, "expected " + type_list(types) + ", got " + json_type_name(value));
    }
    return fail(path, "must match at least one schema in anyOf");
  }

  const std::vector<Node>& nodes_;
  std::vector<SchemaError>* sink_;
};

}  // namespace

std::string SchemaError::to_string() const {
  return (path.empty() ? std::string("(root)") : path) + ": " + message;
}

std::string format_schema_errors(const std::vector<SchemaError>& errors) {
  std::string out;
  for (const auto& error : errors) {
    if (!out.empty()) out += '\n';
    out += error.to_string();
  }
  return out;
}

std::vector<SchemaError> JsonSchema::validate(const Json& value) const {
  std::vector<SchemaError> errors;
  Validator validator(*compiled_, &errors);
  validator.check(0, value, nullptr, 0);
  return errors;
}

bool JsonSchema::is_valid(const Json& value) const {
  Validator validator(*compiled_, nullptr);
  return validator.check(0, value, nullptr, 0);
}

}  // namespace tollgate
