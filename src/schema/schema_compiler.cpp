// JsonSchema::compile: walks the schema document once, turning each subschema into a Node,
// then resolves local $refs by JSON pointer (compiling referenced parts not reached by the
// walk, such as definitions only used through a $ref).
#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <string_view>
#include <unordered_map>

#include "core/percent.h"
#include "schema/compiled_schema.h"
#include "tollgate/error.h"

namespace tollgate {
namespace {

using schema::Node;
using schema::PatternRule;

std::string escape_pointer_token(std::string_view token) {
  std::string out;
  out.reserve(token.size());
  for (char c : token) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

class Compiler {
 public:
  explicit Compiler(JsonSchema::Compiled& out) : out_(out) {}

  void run() {
    // Since draft 2019-09 a $ref is one keyword among others; before, it replaced them.
    if (out_.source.is_object()) {
      auto dialect = out_.source.find("$schema");
      if (dialect != out_.source.end() && dialect->is_string()) {
        const auto& uri = dialect->get_ref<const std::string&>();
        ref_has_siblings_ =
            uri.find("2019-09") != std::string::npos || uri.find("2020-12") != std::string::npos;
      }
    }
    compile_at(out_.source, "");
    // Resolving a $ref may compile new parts of the document, which may hold new $refs.
    for (std::size_t i = 0; i < out_.nodes.size(); ++i) {
      if (out_.nodes[i].ref_text.empty()) continue;
      std::string pointer = ref_to_pointer(out_.nodes[i].ref_text, i);
      const Json* target = find_pointer(pointer);
      if (target == nullptr) {
        fail(pointer_of_[i], "$ref", "'" + out_.nodes[i].ref_text + "' points to nothing");
      }
      int index = compile_at(*target, pointer);
      out_.nodes[i].ref = index;
    }
    reject_ref_cycles();
  }

 private:
  [[noreturn]] void fail(const std::string& pointer, std::string_view keyword,
                         const std::string& what) {
    throw Error::InvalidArgument("invalid JSON schema at '#" + pointer + "': '" +
                                 std::string(keyword) + "' " + what);
  }

  int compile_at(const Json& schema, const std::string& pointer) {
    if (auto it = index_of_.find(pointer); it != index_of_.end()) return it->second;
    int index = static_cast<int>(out_.nodes.size());
    out_.nodes.emplace_back();
    pointer_of_.push_back(pointer);
    index_of_.emplace(pointer, index);
    Node node = build(schema, pointer);
    out_.nodes[static_cast<std::size_t>(index)] = std::move(node);
    return index;
  }

  Node build(const Json& schema, const std::string& pointer) {
    Node node;
    if (schema.is_boolean()) {
      node.kind = schema.get<bool>() ? Node::Kind::kAcceptAll : Node::Kind::kRejectAll;
      return node;
    }
    if (!schema.is_object()) {
      throw Error::InvalidArgument("invalid JSON schema at '#" + pointer +
                                   "': a schema must be an object or a boolean, got " +
                                   std::string(schema.type_name()));
    }
    if (auto ref = schema.find("$ref"); ref != schema.end() && ref->is_string()) {
      node.ref_text = ref->get<std::string>();
      if (node.ref_text.empty()) fail(pointer, "$ref", "must not be empty");
      if (!ref_has_siblings_) {
        node.kind = Node::Kind::kRef;
        return node;  // draft 7: a $ref replaces every sibling keyword
      }
    }
    node.kind = Node::Kind::kKeywords;
    for (auto it = schema.begin(); it != schema.end(); ++it) {
      keyword(node, it.key(), it.value(), pointer);
    }
    std::sort(node.properties.begin(), node.properties.end());
    apply_draft4_exclusive(schema, node);
    apply_prefix_items(schema, node, pointer);
    return node;
  }

  // Draft 2020-12 tuples (pydantic's Tuple[...]): "prefixItems" are the positional schemas and
  // an "items" schema next to them applies to the items after them.
  void apply_prefix_items(const Json& schema, Node& node, const std::string& pointer) {
    auto prefix = schema.find("prefixItems");
    if (prefix == schema.end()) return;
    if (!prefix->is_array()) fail(pointer, "prefixItems", "must be an array");
    node.has_item_list = true;
    node.item_list.clear();
    for (std::size_t i = 0; i < prefix->size(); ++i) {
      node.item_list.push_back(sub((*prefix)[i], pointer + "/prefixItems/" + std::to_string(i)));
    }
    if (node.items != schema::kNoNode) {
      node.additional_items = node.items;
      node.items = schema::kNoNode;
    }
  }

  static void apply_draft4_exclusive(const Json& schema, Node& node) {
    auto flag = [&](const char* key) {
      auto it = schema.find(key);
      return it != schema.end() && it->is_boolean() && it->get<bool>();
    };
    if (flag("exclusiveMinimum") && node.minimum) {
      node.exclusive_minimum = node.minimum;
      node.minimum.reset();
    }
    if (flag("exclusiveMaximum") && node.maximum) {
      node.exclusive_maximum = node.maximum;
      node.maximum.reset();
    }
  }

  int sub(const Json& schema, const std::string& pointer) { return compile_at(schema, pointer); }

  std::size_t count(const Json& value, const std::string& pointer, std::string_view key) {
    if (value.is_number_unsigned()) return value.get<std::size_t>();
    if (value.is_number_integer() && value.get<std::int64_t>() >= 0) {
      return static_cast<std::size_t>(value.get<std::int64_t>());
    }
    if (value.is_number_float()) {
      double d = value.get<double>();
      if (d >= 0 && std::floor(d) == d) {
        // A count past what size_t holds (2.1e32) is one no string, array or object reaches:
        // the largest count says the same, and converting it would be undefined.
        constexpr std::size_t kLargest = std::numeric_limits<std::size_t>::max();
        if (d >= static_cast<double>(kLargest)) return kLargest;  // the double rounds up past it
        return static_cast<std::size_t>(d);
      }
    }
    fail(pointer, key, "must be a non-negative integer");
  }

  double number(const Json& value, const std::string& pointer, std::string_view key) {
    if (!value.is_number()) fail(pointer, key, "must be a number");
    return value.get<double>();
  }

  schema::Pattern regex(const std::string& source, const std::string& pointer,
                        std::string_view key) {
    try {
      return schema::Pattern(source);
    } catch (const schema::PatternError& e) {
      fail(pointer, key, "is not a valid regular expression '" + source + "': " + e.what());
    }
  }

  std::uint8_t type_bit(const Json& name, const std::string& pointer) {
    if (name.is_string()) {
      const auto& s = name.get_ref<const std::string&>();
      if (s == "null") return schema::kNullBit;
      if (s == "boolean") return schema::kBooleanBit;
      if (s == "integer") return schema::kIntegerBit;
      if (s == "number") return schema::kNumberBit;
      if (s == "string") return schema::kStringBit;
      if (s == "array") return schema::kArrayBit;
      if (s == "object") return schema::kObjectBit;
    }
    fail(pointer, "type", "has an unknown type " + name.dump());
  }

  std::vector<std::string> strings(const Json& value, const std::string& pointer,
                                   std::string_view key) {
    if (!value.is_array()) fail(pointer, key, "must be an array of strings");
    std::vector<std::string> out;
    for (const auto& item : value) {
      if (!item.is_string()) fail(pointer, key, "must be an array of strings");
      out.push_back(item.get<std::string>());
    }
    return out;
  }

  std::vector<int> schema_list(const Json& value, const std::string& pointer,
                               std::string_view key) {
    if (!value.is_array() || value.empty()) fail(pointer, key, "must be a non-empty array");
    std::vector<int> out;
    for (std::size_t i = 0; i < value.size(); ++i) {
      out.push_back(sub(value[i], pointer + "/" + std::string(key) + "/" + std::to_string(i)));
    }
    return out;
  }

  void keyword(Node& node, const std::string& key, const Json& value, const std::string& ptr) {
    const std::string here = ptr + "/" + escape_pointer_token(key);
    if (key == "type") {
      if (value.is_array()) {
        for (const auto& name : value) node.types |= type_bit(name, ptr);
        if (node.types == 0) fail(ptr, key, "must not be an empty list");
      } else {
        node.types = type_bit(value, ptr);
      }
      // "number" includes "integer".
      if (node.types & schema::kNumberBit) node.types |= schema::kIntegerBit;
    } else if (key == "properties" || key == "patternProperties") {
      if (!value.is_object()) fail(ptr, key, "must be an object");
      for (auto it = value.begin(); it != value.end(); ++it) {
        int index = sub(it.value(), here + "/" + escape_pointer_token(it.key()));
        if (key == "properties") {
          node.properties.emplace_back(it.key(), index);
        } else {
          node.pattern_properties.push_back(PatternRule{regex(it.key(), ptr, key), index});
        }
      }
    } else if (key == "required") {
      node.required = strings(value, ptr, key);
    } else if (key == "additionalProperties") {
      node.additional_properties = sub(value, here);
    } else if (key == "propertyNames") {
      node.property_names = sub(value, here);
    } else if (key == "dependencies") {
      if (!value.is_object()) fail(ptr, key, "must be an object");
      for (auto it = value.begin(); it != value.end(); ++it) {
        schema::Dependency dependency;
        dependency.property = it.key();
        if (it.value().is_array()) {
          dependency.required = strings(it.value(), ptr, key);
        } else {
          dependency.node = sub(it.value(), here + "/" + escape_pointer_token(it.key()));
        }
        node.dependencies.push_back(std::move(dependency));
      }
    } else if (key == "items") {
      if (value.is_array()) {
        node.has_item_list = true;
        for (std::size_t i = 0; i < value.size(); ++i) {
          node.item_list.push_back(sub(value[i], here + "/" + std::to_string(i)));
        }
      } else {
        node.items = sub(value, here);
      }
    } else if (key == "additionalItems") {
      node.additional_items = sub(value, here);
    } else if (key == "contains") {
      node.contains = sub(value, here);
    } else if (key == "enum") {
      if (!value.is_array()) fail(ptr, key, "must be an array");
      node.enum_values = value.get<std::vector<Json>>();
    } else if (key == "const") {
      node.const_value = value;
    } else if (key == "minimum") {
      node.minimum = number(value, ptr, key);
    } else if (key == "maximum") {
      node.maximum = number(value, ptr, key);
    } else if (key == "exclusiveMinimum" || key == "exclusiveMaximum") {
      exclusive_bound(node, key, value, ptr);
    } else if (key == "multipleOf") {
      double d = number(value, ptr, key);
      if (!(d > 0)) fail(ptr, key, "must be greater than 0");
      node.multiple_of = d;
    } else if (key == "minLength") {
      node.min_length = count(value, ptr, key);
    } else if (key == "maxLength") {
      node.max_length = count(value, ptr, key);
    } else if (key == "pattern") {
      if (!value.is_string()) fail(ptr, key, "must be a string");
      node.pattern = PatternRule{regex(value.get<std::string>(), ptr, key), schema::kNoNode};
    } else if (key == "minItems") {
      node.min_items = count(value, ptr, key);
    } else if (key == "maxItems") {
      node.max_items = count(value, ptr, key);
    } else if (key == "uniqueItems") {
      if (!value.is_boolean()) fail(ptr, key, "must be a boolean");
      node.unique_items = value.get<bool>();
    } else if (key == "minProperties") {
      node.min_properties = count(value, ptr, key);
    } else if (key == "maxProperties") {
      node.max_properties = count(value, ptr, key);
    } else if (key == "allOf") {
      node.all_of = schema_list(value, ptr, key);
    } else if (key == "anyOf") {
      node.any_of = schema_list(value, ptr, key);
    } else if (key == "oneOf") {
      node.one_of = schema_list(value, ptr, key);
    } else if (key == "not") {
      node.not_schema = sub(value, here);
    } else if (key == "if") {
      node.if_schema = sub(value, here);
    } else if (key == "then") {
      node.then_schema = sub(value, here);
    } else if (key == "else") {
      node.else_schema = sub(value, here);
    } else if (key == "definitions" || key == "$defs") {
      if (!value.is_object()) fail(ptr, key, "must be an object");
      // Compiled on demand, when a $ref reaches them.
    }
    // Everything else is an annotation (title, description, default, examples, format, ...).
  }

  // Draft 6+: a number. Draft 4: a boolean that makes minimum/maximum exclusive.
  void exclusive_bound(Node& node, const std::string& key, const Json& value,
                       const std::string& ptr) {
    bool is_min = key == "exclusiveMinimum";
    if (value.is_boolean()) return;  // handled in build(), once minimum/maximum are known
    double d = number(value, ptr, key);
    (is_min ? node.exclusive_minimum : node.exclusive_maximum) = d;
  }

  std::string ref_to_pointer(const std::string& ref, std::size_t node_index) {
    if (ref.empty() || ref[0] != '#') {
      fail(pointer_of_[node_index], "$ref",
           "'" + ref + "' is not a local reference (remote references are not supported)");
    }
    // A $ref is a URI fragment: "%25" stands for "%".
    std::string pointer = core::percent_decode(std::string_view(ref).substr(1));
    if (!pointer.empty() && pointer[0] != '/') {
      fail(pointer_of_[node_index], "$ref",
           "'" + ref + "' is not a JSON pointer (named anchors are not supported)");
    }
    return pointer;
  }

  const Json* find_pointer(const std::string& pointer) const {
    const Json* at = &out_.source;
    std::size_t pos = 0;
    while (pos < pointer.size()) {
      std::size_t next = pointer.find('/', pos + 1);
      std::string token =
          pointer.substr(pos + 1, next == std::string::npos ? std::string::npos : next - pos - 1);
      std::string decoded;
      for (std::size_t i = 0; i < token.size(); ++i) {
        if (token[i] == '~' && i + 1 < token.size() &&
            (token[i + 1] == '0' || token[i + 1] == '1')) {
          decoded += token[i + 1] == '0' ? '~' : '/';
          ++i;
        } else {
          decoded += token[i];
        }
      }
      if (at->is_object()) {
        auto it = at->find(decoded);
        if (it == at->end()) return nullptr;
        at = &*it;
      } else if (at->is_array()) {
        if (decoded.empty() || !std::all_of(decoded.begin(), decoded.end(),
                                            [](char c) { return c >= '0' && c <= '9'; })) {
          return nullptr;
        }
        // An index past size_t (forty digits) points to nothing, as one past the array does.
        std::size_t index = 0;
        const auto parsed = std::from_chars(decoded.data(), decoded.data() + decoded.size(), index);
        if (parsed.ec != std::errc() || index >= at->size()) return nullptr;
        at = &(*at)[index];
      } else {
        return nullptr;
      }
      if (next == std::string::npos) break;
      pos = next;
    }
    return at;
  }

  // {"$ref": "#"} at the root, or two definitions referring to each other, would loop
  // forever without ever looking at the value.
  void reject_ref_cycles() {
    for (std::size_t start = 0; start < out_.nodes.size(); ++start) {
      std::size_t steps = 0;
      int at = static_cast<int>(start);
      while (out_.nodes[static_cast<std::size_t>(at)].kind == Node::Kind::kRef) {
        at = out_.nodes[static_cast<std::size_t>(at)].ref;
        if (++steps > out_.nodes.size()) {
          fail(pointer_of_[start], "$ref", "forms a cycle of references");
        }
      }
    }
  }

 private:
  JsonSchema::Compiled& out_;
  bool ref_has_siblings_ = false;
  std::unordered_map<std::string, int> index_of_;
  std::vector<std::string> pointer_of_;
};

}  // namespace

JsonSchema::JsonSchema(std::shared_ptr<const Compiled> compiled) : compiled_(std::move(compiled)) {}

JsonSchema JsonSchema::compile(const Json& schema) {
  auto compiled = std::make_shared<Compiled>();
  compiled->source = schema;
  Compiler compiler(*compiled);
  compiler.run();
  return JsonSchema(std::move(compiled));
}

const Json& JsonSchema::source() const {
  return compiled_->source;
}

}  // namespace tollgate
