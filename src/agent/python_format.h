// Renders JSON values the way Python prints them, for texts that quote Python's wording:
// repr() of a dict/list (error messages) and json.dumps() with its default separators (the
// edit notice shown to the model).
#pragma once

#include <string>

#include "tollgate/json.h"

namespace tollgate {

// {'a': [1, True, None]} — strings in single quotes (double quotes when the text holds a
// single quote and no double quote, as Python does).
std::string python_repr(const Json& value);
// {"a": [1, true, null]} — ", " and ": " separators, non-ASCII escaped as \uXXXX.
std::string python_json_dumps(const Json& value);

}  // namespace tollgate
