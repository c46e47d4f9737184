#include "schema/pattern.h"

#include <re2/re2.h>

namespace tollgate::schema {

Pattern::Pattern(std::string source) : source_(std::move(source)) {
  RE2::Options options;
  options.set_log_errors(false);
  auto compiled = std::make_unique<RE2>(source_, options);
  if (compiled->ok()) {
    re2_ = std::move(compiled);
    return;
  }
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
