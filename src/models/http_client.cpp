#include "models/http_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <exception>
#include <memory>
#include <mutex>

namespace tollgate::models {
namespace {

// curl_global_init must run once before any handle exists; it keeps no state of ours.
void ensure_curl_initialised() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct Transfer {
  CURL* curl = nullptr;
  const HttpDataSink* sink = nullptr;
  HttpResponse* response = nullptr;
  std::exception_ptr sink_error;
};

std::string trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

size_t on_header(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  std::string_view line(data, size * count);
  if (line.rfind("HTTP/", 0) == 0) {
    t->response->headers.clear();  // a new response (after 100-continue or a redirect)
    return size * count;
  }
  auto colon = line.find(':');
  if (colon != std::string_view::npos) {
    std::string name = trim(line.substr(0, colon));
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    t->response->headers[name] = trim(line.substr(colon + 1));
  }
  return size * count;
}

size_t on_body(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t n = size * count;
  long status = 0;
  curl_easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &status);
  if (t->sink != nullptr && status >= 200 && status < 300) {
    try {
      (*t->sink)(std::string_view(data, n));
      t->response->streamed_any = true;
    } catch (...) {
      t->sink_error = std::current_exception();
      return 0;  // makes curl abort with CURLE_WRITE_ERROR
    }
  } else {
    t->response->body.append(data, n);
  }
  return n;
}

struct CurlDeleter {
  void operator()(CURL* c) const { curl_easy_cleanup(c); }
};
struct SlistDeleter {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};

}  // namespace

HttpResponse http_post(const HttpRequest& request, const HttpDataSink* on_data) {
  ensure_curl_initialised();
  HttpResponse response;
  std::unique_ptr<CURL, CurlDeleter> curl(curl_easy_init());
  if (!curl) {
    response.transport_error = "could not create an HTTP handle";
    return response;
  }
  std::unique_ptr<curl_slist, SlistDeleter> header_list;
  for (const auto& [name, value] : request.headers) {
    std::string line = name + ": " + value;
    curl_slist* next = curl_slist_append(header_list.get(), line.c_str());
    if (next == nullptr) {
      response.transport_error = "out of memory building headers";
      return response;
    }
    (void)header_list.release();
    header_list.reset(next);
  }
  // Without this curl sends "Expect: 100-continue" for large bodies and waits for the server.
  header_list.reset(curl_slist_append(header_list.release(), "Expect:"));

  Transfer transfer{curl.get(), on_data, &response, nullptr};
  char error_buffer[CURL_ERROR_SIZE] = {0};
  CURL* c = curl.get();
  curl_easy_setopt(c, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(c, CURLOPT_POST, 1L);
  curl_easy_setopt(c, CURLOPT_POSTFIELDS, request.body.data());
  curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, header_list.get());
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(request.timeout.count()));
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(request.connect_timeout.count()));
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);  // required for timeouts in multi-threaded programs
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, &on_header);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &transfer);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, &on_body);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &transfer);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, error_buffer);
  curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");  // whatever curl can decode

  CURLcode rc = curl_easy_perform(c);
  if (transfer.sink_error) std::rethrow_exception(transfer.sink_error);
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &response.status);
  if (rc != CURLE_OK) {
    response.timed_out = rc == CURLE_OPERATION_TIMEDOUT;
    response.transport_error = error_buffer[0] != '\0' ? error_buffer : curl_easy_strerror(rc);
  }
  return response;
}

}  // namespace tollgate::models
