#include "server/cors_policy.h"

#include <algorithm>
#include <cctype>

namespace tollgate::server {
namespace {

std::string normalized(std::string origin) {
  std::transform(origin.begin(), origin.end(), origin.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  while (!origin.empty() && origin.back() == '/') origin.pop_back();
  return origin;
}

bool all_digits(const std::string& text) {
  return std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); });
}

}  // namespace

bool is_loopback_origin(const std::string& origin) {
  const std::string o = normalized(origin);
  for (const char* host : {"http://localhost", "http://127.0.0.1", "http://[::1]"}) {
    const std::string prefix = host;
    if (o == prefix) return true;
    if (o.rfind(prefix + ":", 0) == 0) {
      const std::string port = o.substr(prefix.size() + 1);
      if (!port.empty() && port.size() <= 5 && all_digits(port)) return true;
    }
  }
  return false;
}

bool is_loopback_host_header(const std::string& host) {
  return is_loopback_origin("http://" + host);
}

CorsPolicy::CorsPolicy(std::vector<std::string> origins, bool trust_own_origin)
    : trust_own_origin_(trust_own_origin) {
  for (auto& origin : origins) origins_.push_back(normalized(std::move(origin)));
}

bool CorsPolicy::allows(const std::string& origin, const std::string& host) const {
  const std::string o = normalized(origin);
  if (trust_own_origin_ && !host.empty()) {
    const std::string own = normalized(host);
    if (o == "http://" + own || o == "https://" + own) return true;
  }
  if (origins_.empty()) return is_loopback_origin(o);
  return std::find(origins_.begin(), origins_.end(), o) != origins_.end() ||
         std::find(origins_.begin(), origins_.end(), "*") != origins_.end();
}

}  // namespace tollgate::server
