#include "schema/pattern.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <re2/re2.h>

#include <string_view>

namespace tollgate::schema {
namespace {

// ECMAScript's reading of what PCRE2 reads otherwise: `$` only at the very end, `[]` and `[^]`
// as classes, `\uhhhh` as a code point, a back-reference to a group that did not take part
// matching the empty string. Strings are UTF-8 code points, as RE2 reads them.
constexpr std::uint32_t kCompileOptions =
    PCRE2_UTF | PCRE2_MATCH_INVALID_UTF | PCRE2_DOLLAR_ENDONLY | PCRE2_ALLOW_EMPTY_CLASS |
    PCRE2_ALT_BSUX | PCRE2_MATCH_UNSET_BACKREF | PCRE2_NEVER_BACKSLASH_C;

struct MatchContextDeleter {
  void operator()(pcre2_match_context* context) const { pcre2_match_context_free(context); }
};

// The limits every backtracking search runs under. pcre2_match only reads it, so one is shared
// by every thread (its pointer is not const only in PCRE2's signature).
pcre2_match_context* bounded_context() {
  static const std::unique_ptr<pcre2_match_context, MatchContextDeleter> context = [] {
    std::unique_ptr<pcre2_match_context, MatchContextDeleter> made(
        pcre2_match_context_create(nullptr));
    if (!made) throw std::bad_alloc();
    pcre2_set_match_limit(made.get(), Pattern::kMaxBacktrackingSteps);
    pcre2_set_heap_limit(made.get(), Pattern::kMaxBacktrackingHeapKiB);
    return made;
  }();
  return context.get();
}

std::string error_message(int code) {
  PCRE2_UCHAR buffer[256];
  const int length = pcre2_get_error_message(code, buffer, sizeof buffer);
  if (length < 0) return "error " + std::to_string(code);
  return std::string(reinterpret_cast<const char*>(buffer), static_cast<std::size_t>(length));
}

}  // namespace

struct Pattern::Backtracking {
  explicit Backtracking(const std::string& source) {
    int error = 0;
    PCRE2_SIZE offset = 0;
    code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(source.data()), source.size(),
                         kCompileOptions, &error, &offset, nullptr);
    if (code == nullptr) {
      throw PatternError(error_message(error) + " at offset " + std::to_string(offset));
    }
  }
  Backtracking(const Backtracking&) = delete;
  Backtracking& operator=(const Backtracking&) = delete;
  ~Backtracking() { pcre2_code_free(code); }

  Result search(std::string_view text) const {
    // One ovector pair: only whether it matched is read (a match with too small a vector
    // returns 0, still a match).
    pcre2_match_data* data = pcre2_match_data_create(1, nullptr);
    if (data == nullptr) throw std::bad_alloc();
    const int found = pcre2_match(code, reinterpret_cast<PCRE2_SPTR>(text.data()), text.size(), 0,
                                  0, data, bounded_context());
    pcre2_match_data_free(data);
    if (found >= 0) return Result::kMatch;
    if (found == PCRE2_ERROR_NOMATCH) return Result::kNoMatch;
    // The step or memory limit (or another matching error): the string was not shown to match,
    // and saying so is the only answer that cannot let a value through.
    return Result::kTooCostly;
  }

  pcre2_code* code = nullptr;
};

Pattern::Pattern(std::string source) : source_(std::move(source)) {
  RE2::Options options;
  options.set_log_errors(false);
  auto compiled = std::make_unique<RE2>(source_, options);
  if (compiled->ok()) {
    re2_ = std::move(compiled);
    return;
  }
  fallback_ = std::make_unique<Backtracking>(source_);
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
  return fallback_->search(text);
}

}  // namespace tollgate::schema
