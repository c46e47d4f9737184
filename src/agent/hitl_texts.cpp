#include "agent/hitl_texts.h"

namespace tollgate::hitl_texts {

std::string format_text(std::string_view text,
                        std::initializer_list<std::pair<std::string_view, std::string>> values) {
  std::string out;
  out.reserve(text.size() + 64);
  std::size_t i = 0;
  while (i < text.size()) {
    if (text[i] == '{') {
      const std::size_t close = text.find('}', i + 1);
      if (close != std::string_view::npos) {
        const std::string_view key = text.substr(i + 1, close - i - 1);
        bool replaced = false;
        for (const auto& [name, value] : values) {
          if (name == key) {
            out += value;
            replaced = true;
            break;
          }
        }
        if (replaced) {
          i = close + 1;
          continue;
        }
      }
    }
    out += text[i++];
  }
  return out;
}

}  // namespace tollgate::hitl_texts
