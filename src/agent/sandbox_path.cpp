// sandbox_relative_path: the one spelling of a path inside a sandbox, so path rules compare what
// a tool would touch rather than how the model wrote it.
#include <system_error>

#include "tollgate/when_rules.h"

namespace tollgate {
namespace fs = std::filesystem;
namespace {

// "" for ".", "a/b" for "a/b/"; nullopt for anything that climbs above its start.
std::optional<std::string> relative_text(const fs::path& relative) {
  if (relative.empty()) return std::nullopt;
  const auto first = relative.begin();
  if (*first == "..") return std::nullopt;
  std::string text = relative.generic_string();
  if (text == ".") return std::string();
  while (!text.empty() && text.back() == '/') text.pop_back();
  return text;
}

}  // namespace

std::optional<std::string> sandbox_relative_path(std::string_view path, const fs::path& sandbox) {
  if (path.empty()) return std::nullopt;
  const fs::path given(path);
  if (sandbox.empty()) {
    if (given.is_absolute()) return std::nullopt;
    return relative_text(given.lexically_normal());
  }
  const fs::path joined = given.is_absolute() ? given : sandbox / given;
  // weakly_canonical follows the symlinks that exist, as opening the file would, and folds the
  // rest ("a/../b", "./", "//") as text.
  std::error_code error;
  fs::path real = fs::weakly_canonical(joined, error);
  if (error) real = joined.lexically_normal();
  return relative_text(real.lexically_relative(sandbox.lexically_normal()));
}

}  // namespace tollgate
