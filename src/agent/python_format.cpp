#include "agent/python_format.h"

#include "core/hex.h"

namespace tollgate {
namespace {

std::string repr_string(const std::string& text) {
  const bool has_single = text.find('\'') != std::string::npos;
  const bool has_double = text.find('"') != std::string::npos;
  const char quote = (has_single && !has_double) ? '"' : '\'';
  std::string out(1, quote);
  for (const char c : text) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c == quote) {
          out += '\\';
          out += c;
        } else if (static_cast<unsigned char>(c) < 0x20) {
          out += "\\x";
          core::append_hex(out, static_cast<unsigned char>(c), 2);
        } else {
          out += c;
        }
    }
  }
  out += quote;
  return out;
}

template <typename Scalar, typename Key>
std::string render(const Json& value, Scalar scalar, Key key) {
  if (value.is_object()) {
    std::string out = "{";
    bool first = true;
    for (const auto& [k, v] : value.items()) {
      if (!first) out += ", ";
      first = false;
      out += key(k) + ": " + render(v, scalar, key);
    }
    return out + "}";
  }
  if (value.is_array()) {
    std::string out = "[";
    bool first = true;
    for (const auto& item : value) {
      if (!first) out += ", ";
      first = false;
      out += render(item, scalar, key);
    }
    return out + "]";
  }
  return scalar(value);
}

}  // namespace

std::string python_repr(const Json& value) {
  return render(
      value,
      [](const Json& v) -> std::string {
        if (v.is_null()) return "None";
        if (v.is_boolean()) return v.get<bool>() ? "True" : "False";
        if (v.is_string()) return repr_string(v.get<std::string>());
        return v.dump();
      },
      [](const std::string& k) { return repr_string(k); });
}

std::string python_json_dumps(const Json& value) {
  return render(
      value, [](const Json& v) { return v.dump(-1, ' ', true); },
      [](const std::string& k) { return Json(k).dump(-1, ' ', true); });
}

}  // namespace tollgate
