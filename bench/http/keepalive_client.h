// A blocking HTTP/1.1 client over one keep-alive connection (Boost.Beast), for the HTTP
// benchmark's load generator. It reconnects when the server closes the connection.
//
// Thread-safety: none; each load-generating thread owns its own client.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace tollgate::bench::http_load {

struct Reply {
  int status = 0;
  std::string body;
};

class KeepAliveClient {
 public:
  KeepAliveClient(std::string host, std::uint16_t port);
  ~KeepAliveClient();
  KeepAliveClient(const KeepAliveClient&) = delete;
  KeepAliveClient& operator=(const KeepAliveClient&) = delete;

  // Sends `method target` with a JSON body (empty: no body) and reads the whole reply
  // (chunked bodies included). Throws std::runtime_error on a transport failure.
  Reply request(const char* method, const std::string& target, const std::string& json_body);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tollgate::bench::http_load
