// The regular expressions of "pattern" and "patternProperties". RE2 runs them in linear time
// with no recursion, so a long or hostile string can neither crash the process (std::regex
// recurses once per character and overflows the stack near 100k characters) nor hang it.
// RE2 lacks ECMAScript's lookaround and backreferences; a pattern that needs them falls back to
// std::regex, which then only checks strings up to kMaxBacktrackingInput bytes.
#pragma once

#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <string_view>

namespace re2 {
class RE2;
}

namespace tollgate::schema {

class Pattern {
 public:
  static constexpr std::size_t kMaxBacktrackingInput = 4096;

  enum class Result { kMatch, kNoMatch, kTooLong };

  // Throws std::regex_error when neither engine accepts `source`, or when it needs std::regex
  // and holds a repeat count or back-reference of more than nine digits (which std::regex would
  // read with undefined behaviour).
  explicit Pattern(std::string source);
  Pattern(Pattern&&) noexcept;
  Pattern& operator=(Pattern&&) noexcept;
  ~Pattern();

  // Unanchored search, as JSON Schema asks.
  Result search(std::string_view text) const;
  const std::string& source() const { return source_; }

 private:
  std::string source_;
  std::unique_ptr<re2::RE2> re2_;
  std::optional<std::regex> fallback_;
};

}  // namespace tollgate::schema
