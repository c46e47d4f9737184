// The regular expressions of "pattern" and "patternProperties". RE2 runs them in linear time
// with no recursion, so a long or hostile string can neither crash the process nor hang it.
// RE2 lacks ECMAScript's lookaround and backreferences; a pattern that needs them falls back to
// PCRE2 (with ECMAScript's `$`, `[^]`, `\uhhhh` and unset back-references), a backtracking
// engine whose work is bounded: it checks strings up to kMaxBacktrackingInput bytes, and a
// search that takes more than kMaxBacktrackingSteps steps or kMaxBacktrackingHeapKiB of memory
// ends as kTooCostly, never as a hang (a pattern like `^(?=a)(a|aa)*[^a]` backtracks
// exponentially).
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

namespace re2 {
class RE2;
}

namespace tollgate::schema {

// Neither engine accepts the pattern; what() says why (PCRE2's message and offset).
class PatternError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Pattern {
 public:
  static constexpr std::size_t kMaxBacktrackingInput = 4096;
  static constexpr std::uint32_t kMaxBacktrackingSteps = 1'000'000;  // ~20 ms at worst
  static constexpr std::uint32_t kMaxBacktrackingHeapKiB = 16 * 1024;

  enum class Result { kMatch, kNoMatch, kTooLong, kTooCostly };

  // Throws PatternError when neither engine accepts `source`.
  explicit Pattern(std::string source);
  Pattern(Pattern&&) noexcept;
  Pattern& operator=(Pattern&&) noexcept;
  ~Pattern();

  // Unanchored search, as JSON Schema asks.
  Result search(std::string_view text) const;
  const std::string& source() const { return source_; }

 private:
  struct Backtracking;

  std::string source_;
  std::unique_ptr<re2::RE2> re2_;
  std::unique_ptr<Backtracking> fallback_;
};

}  // namespace tollgate::schema
