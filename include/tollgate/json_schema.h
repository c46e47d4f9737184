// JSON Schema validation for tool arguments, interrupt answers and config files.
//
// A schema is compiled once (regexes built, $refs resolved) and then validates many values.
// Supported keywords (draft-7 semantics): type (a name or a list; "integer" accepts 1.0),
// properties, required, additionalProperties, patternProperties, propertyNames,
// dependencies, items (schema or list), additionalItems, prefixItems (2020-12 tuples),
// contains, enum, const, minimum, maximum, exclusiveMinimum, exclusiveMaximum (numeric form),
// multipleOf, minLength and maxLength (in code points), pattern (unanchored search; RE2
// syntax, falling back to PCRE2 read as ECMAScript for what RE2 refuses, such as lookaround,
// with bounded work: a string it cannot check in time fails with "is too costly to check"),
// minItems, maxItems, uniqueItems, minProperties, maxProperties, allOf, anyOf, oneOf, not,
// if/then/else, boolean schemas, and local $ref ("#", "#/definitions/..", "#/$defs/..", any
// JSON pointer into the document). A $ref replaces its sibling keywords, as in draft 7,
// unless "$schema" names draft 2019-09 or 2020-12, where they apply next to it.
// Annotations (title, description, default, examples, format, $comment, ...) are ignored,
// as are keywords this validator does not know. Remote references are refused at compile
// time, so a schema never silently validates less than it says.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tollgate/json.h"

namespace tollgate {

// One violation. `path` names the offending value inside the validated document:
// "" for the root, "to", "items[2].name". `message` is short and names no path itself;
// to_string() joins them as `to: expected string, got number` (root shown as "(root)").
struct SchemaError {
  std::string path;
  std::string message;

  std::string to_string() const;
  bool operator==(const SchemaError&) const = default;
};

// A compiled schema. Immutable after compile(): validate() may be called from any number of
// threads at once. Copies are cheap and share the compiled form.
class JsonSchema {
 public:
  // Compiles `schema` (an object or a boolean). Throws Error(kInvalidArgument) naming the
  // keyword when the schema itself is malformed (wrong keyword type, bad regex, a $ref that
  // points nowhere or outside the document).
  static JsonSchema compile(const Json& schema);

  // All violations of `value`, in document order; empty when the value is valid. Combinators
  // (anyOf, oneOf, not) report one summarising error at the value's path.
  std::vector<SchemaError> validate(const Json& value) const;
  // Faster than validate(): stops at the first violation and builds no messages.
  bool is_valid(const Json& value) const;

  // The schema as given to compile().
  const Json& source() const;

  struct Compiled;  // internal

 private:
  explicit JsonSchema(std::shared_ptr<const Compiled> compiled);
  // Shared because the compiled form is immutable and copied along with every tool.
  std::shared_ptr<const Compiled> compiled_;
};

// "to: expected string, got number\nsubject: ..." — one line per error.
std::string format_schema_errors(const std::vector<SchemaError>& errors);

}  // namespace tollgate
