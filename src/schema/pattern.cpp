#include "schema/pattern.h"

#include <re2/re2.h>

#include <string_view>

namespace tollgate::schema {
namespace {

bool digit(char c) {
  return c >= '0' && c <= '9';
}

// The length of the run of digits at `at`.
std::size_t digits_at(std::string_view text, std::size_t at) {
  std::size_t end = at;
  while (end < text.size() && digit(text[end])) ++end;
  return end - at;
}

// What std::regex must not be given: its compiler reads the digits of a back-reference or of a
// repeat count into a long without a bound, and past 18 digits that is undefined behaviour (the
// json_schema fuzz target found it). No such number is meaningful past nine digits (std::regex
// refuses more than 100,000 states), so a longer one is refused as std::regex refuses a bad
// pattern.
void refuse_what_std_regex_mishandles(std::string_view source) {
  constexpr std::size_t kMaxDigits = 9;
  bool in_class = false;
  for (std::size_t i = 0; i < source.size(); ++i) {
    const char c = source[i];
    if (c == '\\') {
      const std::size_t digits = digits_at(source, i + 1);
      if (digits > kMaxDigits) throw std::regex_error(std::regex_constants::error_backref);
      i += digits == 0 ? 1 : digits;  // the escaped character, or the back-reference
      continue;
    }
    if (in_class) {
      in_class = c != ']';
      continue;
    }
    if (c == '[') {
      in_class = true;
      continue;
    }
    if (c != '{') continue;
    // {m}, {m,} or {m,n}: each number of the count.
    for (std::size_t at = i + 1;;) {
      const std::size_t digits = digits_at(source, at);
      if (digits > kMaxDigits) throw std::regex_error(std::regex_constants::error_badbrace);
      at += digits;
      if (digits == 0 || at >= source.size() || source[at] != ',') break;
      ++at;
    }
  }
}

}  // namespace

Pattern::Pattern(std::string source) : source_(std::move(source)) {
  RE2::Options options;
  options.set_log_errors(false);
  auto compiled = std::make_unique<RE2>(source_, options);
  if (compiled->ok()) {
    re2_ = std::move(compiled);
    return;
  }
  refuse_what_std_regex_mishandles(source_);
  fallback_.emplace(source_, std::regex::ECMAScript);  // throws std::regex_error
}

Pattern::Pattern(Pattern&&) noexcept = default;
Pattern& Pattern::operator=(Pattern&&) noexcept = default;
Pattern::~Pattern() = default;

Pattern::Result Pattern::search(std::string_view text) const {
  if (re2_) {
    return RE2::PartialMatch(re2::StringPiece(text.data(), text.size()), *re2_) ? Result::kMatch
                                                                                : Result::kNoMatch;
  }
  if (text.size() > kMaxBacktrackingInput) return Result::kTooLong;
  return std::regex_search(text.begin(), text.end(), *fallback_) ? Result::kMatch
                                                                 : Result::kNoMatch;
}

}  // namespace tollgate::schema
