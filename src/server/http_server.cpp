#include "server/http_server.h"

#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cctype>
#include <chrono>
#include <thread>
#include <vector>

#include "core/hex.h"
#include "core/thread_name.h"
#include "server/cors_policy.h"
#include "server/log.h"
#include "server/request_reader.h"
#include "tollgate/error.h"

namespace tollgate::server {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;

namespace {

// Names a thread of the handler pool at its first job (the pool cannot name its threads as it
// makes them).
void name_handler_thread() {
  thread_local bool named = false;
  if (named) return;
  core::name_this_thread("tg-http-handler");
  named = true;
}

// A request on its way through the handler pool, and what became of it.
struct HandlerJob {
  HttpRequest request;
  HttpResponse response;
  std::string failure;  // not empty: the handler threw (answered with a 500)
};

// A streamed response's head settled on the handler pool (HttpResponse::settle).
struct SettleJob {
  std::function<std::optional<HttpResponse>()> settle;
  std::optional<HttpResponse> head;
  std::string failure;  // not empty: the settle threw
};

constexpr const char* kExposeHeaders =
    "content-location,location,x-pagination-total,x-pagination-next";

std::string reason_phrase(int status) {
  return std::string(http::obsolete_reason(static_cast<http::status>(status)));
}

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, const Router& router, const HttpServerOptions& options,
          net::thread_pool::executor_type handlers)
      : stream_(std::move(socket)),
        router_(router),
        options_(options),
        handlers_(std::move(handlers)),
        heartbeat_timer_(stream_.get_executor()) {}

  void start() {
    net::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->read(); });
  }

 private:
  void read() {
    parser_.emplace();
    apply_limits(*parser_, options_.limits);
    stream_.expires_after(std::chrono::seconds(120));
    http::async_read(
        stream_, buffer_, *parser_,
        [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_read(ec); });
  }

  void on_read(beast::error_code ec) {
    if (ec) {
      const auto& unparsed = buffer_.cdata();
      auto refusal = refusal_for_read_error(
          ec, std::string_view(static_cast<const char*>(unparsed.data()), unparsed.size()),
          options_.limits);
      if (refusal) {
        refuse(std::move(*refusal));
      } else {
        close();
      }
      return;
    }
    auto& message = parser_->get();
    if (auto refusal = refusal_for_request(message, options_.limits)) {
      refuse(std::move(*refusal));
      return;
    }
    keep_alive_ = message.keep_alive();
    try {
      HttpRequest request = to_http_request(message);
      request_line_ = request.method + " " + request.path;
      respond(request);
    } catch (const std::exception& e) {
      fail(std::string("Internal error: ") + e.what());
    } catch (...) {
      fail("Internal error: unknown exception");
    }
  }

  // A request the origin rules refuse (cors_policy.h), or nullopt. Sets cors_origin_ to the
  // Origin to echo when the request's page may read the answer.
  std::optional<HttpResponse> refused_by_origin(const HttpRequest& request) {
    cors_origin_.clear();
    const std::string host = request.header("host");
    if (options_.loopback_hosts_only && !is_loopback_host_header(host)) {
      return HttpResponse::error(403, "Host " + host +
                                          " is not a loopback name; a server without auth "
                                          "answers only requests sent to localhost");
    }
    const std::string origin = request.header("origin");
    if (origin.empty()) return std::nullopt;
    if (!options_.cors.allows(origin, host)) {
      return HttpResponse::error(403, "Origin " + origin +
                                          " may not call this server (see cors_origins in "
                                          "docs/security.md)");
    }
    cors_origin_ = origin;
    return std::nullopt;
  }

  void respond(HttpRequest& request) {
    if (auto refusal = refused_by_origin(request)) {
      deliver(std::move(*refusal));
    } else if (request.method == "OPTIONS") {
      HttpResponse response = HttpResponse::empty(204);
      response.add_header("Access-Control-Allow-Methods", "GET,HEAD,PUT,POST,DELETE,PATCH,QUERY");
      std::string requested = request.header("access-control-request-headers");
      if (!requested.empty()) response.add_header("Access-Control-Allow-Headers", requested);
      response.add_header("Vary", "Origin, Access-Control-Request-Headers");
      deliver(std::move(response));
    } else {
      handle(std::move(request));
    }
  }

  // The router's handler runs on the handler pool: handlers read and write the stores (SQL,
  // and locks a run may hold for a while), so the I/O threads only move bytes and a slow
  // handler never holds up another connection's reads, writes or streams. The answer comes
  // back to this session's strand. Nothing else touches the session meanwhile: its next read
  // starts only once the answer is written.
  void handle(HttpRequest request) {
    auto job = std::make_shared<HandlerJob>();
    job->request = std::move(request);
    net::post(handlers_, [self = shared_from_this(), job] {
      name_handler_thread();
      try {
        job->response = self->router_.dispatch(job->request);
      } catch (const std::exception& e) {
        job->failure = std::string("Internal error: ") + e.what();
      } catch (...) {
        job->failure = "Internal error: unknown exception";
      }
      net::post(self->stream_.get_executor(), [self, job] {
        if (job->failure.empty()) {
          self->deliver(std::move(job->response));
        } else {
          self->fail(job->failure);
        }
      });
    });
  }

  void deliver(HttpResponse response) {
    if (response.stream) {
      start_stream(std::move(response));
    } else {
      write_plain(std::move(response), keep_alive_);
    }
  }

  // Answers a request that cannot be served and closes. The client may still be sending (a
  // body over the limit, endless headers): answer, then read and drop the rest so it sees the
  // answer instead of a reset connection.
  void refuse(HttpResponse response) {
    drain_after_write_ = true;
    write_plain(std::move(response), false);
  }

  // Something on this I/O thread threw while answering (a bug, or memory ran out): a 500
  // while nothing of the response was sent, else the connection closes mid-response (a
  // chunked body that stops short tells the client it is incomplete). Never further up: an
  // exception out of an I/O handler would end the process.
  void fail(const std::string& message) {
    log_error(request_line_ + ": " + message);
    if (closed_ || head_sent_ || writing_ || done_) {
      close();
      return;
    }
    done_ = true;
    heartbeat_timer_.cancel();
    write_plain(HttpResponse::error(500, message), false);
  }

  // Runs a call into the response body (API code, on this I/O thread); false when it threw
  // and the response was ended by fail().
  template <typename Call>
  bool body_call(Call&& call) {
    try {
      call();
      return true;
    } catch (const std::exception& e) {
      fail(std::string("Internal error: ") + e.what());
    } catch (...) {
      fail("Internal error: unknown exception");
    }
    return false;
  }

  // CORS headers for the page that sent the request, when it may read the answer.
  void add_cors(http::fields& fields) const {
    fields.set("Vary", "Origin");
    if (cors_origin_.empty()) return;
    fields.set("Access-Control-Allow-Origin", cors_origin_);
    fields.set("Access-Control-Expose-Headers", kExposeHeaders);
  }

  void write_plain(HttpResponse response, bool keep_alive) {
    if (response.shared_body) {
      // Sent from the shared text, which the write holds until it is done.
      auto message = std::make_shared<http::response<http::span_body<const char>>>();
      message->body() = {response.shared_body->data(), response.shared_body->size()};
      write_message(message, response, keep_alive, response.shared_body);
      return;
    }
    auto message = std::make_shared<http::response<http::string_body>>();
    message->body() = std::move(response.body);
    write_message(message, response, keep_alive, nullptr);
  }

  // Writes `message` (its body set) with the response's status and headers; `keep` is held
  // until the write is done.
  template <typename Message>
  void write_message(const std::shared_ptr<Message>& message, const HttpResponse& response,
                     bool keep_alive, std::shared_ptr<const std::string> keep) {
    message->version(11);
    message->result(static_cast<unsigned>(response.status));
    add_cors(message->base());
    if (!response.content_type.empty()) {
      message->set(http::field::content_type, response.content_type);
    }
    for (const auto& [name, value] : response.headers) message->set(name, value);
    message->keep_alive(keep_alive);
    message->prepare_payload();
    http::async_write(stream_, *message,
                      [self = shared_from_this(), message, keep = std::move(keep)](
                          beast::error_code ec, std::size_t) {
                        if (!ec && self->drain_after_write_) {
                          self->drain();
                        } else if (ec || !message->keep_alive()) {
                          self->done_ = true;
                          self->close();
                        } else if (self->streaming_) {
                          self->next_request_after_stream();
                        } else {
                          self->read();
                        }
                      });
  }

  void drain() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    stream_.expires_after(std::chrono::seconds(10));
    stream_.async_read_some(net::buffer(probe_),
                            [self = shared_from_this()](beast::error_code ec, std::size_t) {
                              if (ec) {
                                self->done_ = true;
                                self->close();
                              } else {
                                self->drain();
                              }
                            });
  }

  // ------------------------------------------------------------------ streamed responses

  void start_stream(HttpResponse response) {
    streaming_ = true;
    head_ = std::move(response);
    body_ = head_.stream;
    stream_.expires_never();
    std::weak_ptr<Session> weak = shared_from_this();
    auto executor = stream_.get_executor();
    body_->set_waker([weak, executor] {
      net::post(executor, [weak] {
        if (auto self = weak.lock()) self->on_wake();
      });
    });
    watch_disconnect();
    on_wake();
  }

  void on_wake() {
    if (closed_ || done_ || !body_) return;  // a late wake of a finished response
    if (!head_sent_) {
      if (settling_) {  // asked again once the settle under way answers
        wake_while_settling_ = true;
        return;
      }
      bool ready = false;
      if (!body_call([&] { ready = body_->head_ready(head_); }) || !ready) return;
      if (head_.settle) {
        settle_head();
        return;
      }
      send_head();
      if (done_) return;  // it was a plain response
    }
    pump();
  }

  // The head depends on the stores: settled on the handler pool (as a handler would be), the
  // answer brought back to this strand.
  void settle_head() {
    settling_ = true;
    wake_while_settling_ = false;
    auto job = std::make_shared<SettleJob>();
    job->settle = std::move(head_.settle);
    head_.settle = nullptr;
    net::post(handlers_, [self = shared_from_this(), job] {
      name_handler_thread();
      try {
        job->head = job->settle();
      } catch (const std::exception& e) {
        job->failure = std::string("Internal error: ") + e.what();
      } catch (...) {
        job->failure = "Internal error: unknown exception";
      }
      job->settle = nullptr;
      net::post(self->stream_.get_executor(), [self, job] { self->settled(*job); });
    });
  }

  void settled(SettleJob& job) {
    settling_ = false;
    if (closed_ || done_ || !body_) return;
    if (!job.failure.empty()) {
      fail(job.failure);
      return;
    }
    if (!job.head) {  // not ready after all: wait for a wake (or take the one that came)
      if (wake_while_settling_) on_wake();
      return;
    }
    head_ = std::move(*job.head);
    if (head_.stream && head_.stream != body_) {
      fail("Internal error: a settled head brought another stream");
      return;
    }
    send_head();
    if (!done_) pump();
  }

  // Writes the head once it is ready: a plain response, or the streamed response's head.
  void send_head() {
    if (!head_.stream) {  // turned into a plain response
      done_ = true;
      heartbeat_timer_.cancel();
      write_plain(std::move(head_), keep_alive_);
      return;
    }
    head_sent_ = true;
    std::string head =
        "HTTP/1.1 " + std::to_string(head_.status) + " " + reason_phrase(head_.status) + "\r\n";
    head += "Vary: Origin\r\n";
    if (!cors_origin_.empty()) {
      head += "Access-Control-Allow-Origin: " + cors_origin_ + "\r\n";
      head += std::string("Access-Control-Expose-Headers: ") + kExposeHeaders + "\r\n";
    }
    if (!head_.content_type.empty()) head += "Content-Type: " + head_.content_type + "\r\n";
    for (auto& [name, value] : head_.headers) head += name + ": " + value + "\r\n";
    head += keep_alive_ ? "Cache-Control: no-cache\r\nConnection: keep-alive\r\n"
                        : "Cache-Control: no-cache\r\nConnection: close\r\n";
    head += "Transfer-Encoding: chunked\r\n\r\n";
    outgoing_ = std::move(head);
    schedule_heartbeat();
  }

  void pump() {
    if (writing_ || closed_) return;
    while (!finished_) {
      std::string data;
      StreamBody::Poll result = StreamBody::Poll::kWait;
      if (!body_call([&] { result = body_->poll(data); })) return;
      if (!data.empty()) append_chunk(data);
      if (result == StreamBody::Poll::kDone) {
        outgoing_ += "0\r\n\r\n";
        finished_ = true;
      }
      if (result == StreamBody::Poll::kWait || !outgoing_.empty()) break;
    }
    if (outgoing_.empty()) {
      if (finished_) {
        done_ = true;
        if (keep_alive_) {
          next_request_after_stream();
        } else {
          close();
        }
      }
      return;
    }
    writing_ = true;
    sending_ = std::move(outgoing_);
    outgoing_.clear();
    net::async_write(stream_, net::buffer(sending_),
                     [self = shared_from_this()](beast::error_code ec, std::size_t) {
                       self->writing_ = false;
                       if (ec) {
                         self->disconnected();
                         return;
                       }
                       self->pump();
                     });
  }

  void append_chunk(const std::string& data) {
    core::append_hex(outgoing_, data.size());
    outgoing_ += "\r\n";
    outgoing_ += data;
    outgoing_ += "\r\n";
  }

  void schedule_heartbeat() {
    if (options_.heartbeat_seconds <= 0) return;
    if (!body_call([&] { heartbeat_ = body_->heartbeat(); }) || heartbeat_.empty()) return;
    heartbeat_timer_.expires_after(std::chrono::seconds(options_.heartbeat_seconds));
    heartbeat_timer_.async_wait([self = shared_from_this()](beast::error_code ec) {
      if (ec || self->closed_ || self->finished_ || !self->body_) return;
      self->append_chunk(self->heartbeat_);
      self->pump();
      self->schedule_heartbeat();
    });
  }

  // While a response streams, the connection is read only to learn that the client went
  // away (the body is told). Bytes that arrive meanwhile (a pipelined next request) are kept
  // in buffer_ for the next read(); a client that sends more than kMaxEarlyBytes is dropped.
  void watch_disconnect() {
    watching_ = true;
    stream_.socket().async_read_some(
        buffer_.prepare(4096), [self = shared_from_this()](beast::error_code ec, std::size_t n) {
          self->watching_ = false;
          if (!ec) self->buffer_.commit(n);
          if (self->closed_) return;
          if (self->next_request_) {  // the response is complete: serve the next request
            self->next_request_ = false;
            if (ec && ec != net::error::operation_aborted) {
              self->close();
            } else {
              self->read();
            }
          } else if (ec || self->buffer_.size() > kMaxEarlyBytes) {
            self->disconnected();
          } else {
            self->watch_disconnect();
          }
        });
  }

  // A streamed (or wait-then-plain) response is complete and the client keeps the connection:
  // stop watching for a disconnect and read the next request once that read has unwound.
  void next_request_after_stream() {
    heartbeat_timer_.cancel();
    body_.reset();
    head_ = HttpResponse();
    outgoing_.clear();
    sending_.clear();
    streaming_ = head_sent_ = writing_ = finished_ = done_ = false;
    if (!watching_) {
      read();
      return;
    }
    next_request_ = true;
    beast::error_code ignored;
    stream_.socket().cancel(ignored);
  }

  void disconnected() {
    if (!done_ && !closed_ && body_) body_->on_disconnect();
    close();
  }

  void close() {
    if (closed_) return;
    closed_ = true;
    heartbeat_timer_.cancel();
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.socket().close(ignored);
    body_.reset();  // breaks the body -> waker -> session cycle
  }

  beast::tcp_stream stream_;
  const Router& router_;
  const HttpServerOptions& options_;
  net::thread_pool::executor_type handlers_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  net::steady_timer heartbeat_timer_;
  // Streamed response state, touched only on the session's strand.
  HttpResponse head_;
  std::shared_ptr<StreamBody> body_;
  std::string outgoing_;
  std::string sending_;
  std::string heartbeat_;     // the body's heartbeat bytes
  std::string request_line_;  // "METHOD /path" of the current request, for the log
  std::string cors_origin_;   // the Origin the current response lets read it; "" for none
  char probe_[512];
  static constexpr std::size_t kMaxEarlyBytes = 64 * 1024;
  bool keep_alive_ = false;    // the current request asked to keep the connection
  bool watching_ = false;      // a watch_disconnect read is pending
  bool next_request_ = false;  // that read was cancelled to serve the next request
  bool streaming_ = false;
  bool drain_after_write_ = false;
  bool head_sent_ = false;
  bool settling_ = false;             // a head's settle is on the handler pool
  bool wake_while_settling_ = false;  // a wake came meanwhile
  bool writing_ = false;
  bool finished_ = false;  // the terminating chunk is queued
  bool done_ = false;      // the response is complete
  bool closed_ = false;
};

}  // namespace

struct HttpServer::Impl {
  const Router& router;
  HttpServerOptions options;
  net::io_context io;
  tcp::acceptor acceptor{io};
  std::vector<std::thread> threads;
  // Declared after io: destroyed first, while the sessions its queued jobs hold can still
  // close their sockets.
  net::thread_pool handlers;
  std::atomic<bool> stopped{false};
  std::uint16_t bound_port = 0;

  Impl(const Router& r, HttpServerOptions o)
      : router(r),
        options(std::move(o)),
        io(static_cast<int>(options.threads)),
        handlers(options.handler_threads == 0 ? 1 : options.handler_threads) {}

  // An I/O thread. Sessions turn what their handlers throw into answers; should anything
  // still escape a handler, it is logged and the thread goes on serving the other connections
  // (that handler's session is dropped with it) instead of ending the process.
  void run_io() {
    while (true) {
      try {
        io.run();
        return;
      } catch (const std::exception& e) {
        log_error(std::string("I/O thread: uncaught exception: ") + e.what());
      } catch (...) {
        log_error("I/O thread: uncaught exception of an unknown type");
      }
    }
  }

  void accept() {
    acceptor.async_accept(net::make_strand(io), [this](beast::error_code ec, tcp::socket socket) {
      if (ec) {
        if (ec == net::error::operation_aborted || stopped) return;
      } else {
        std::make_shared<Session>(std::move(socket), router, options, handlers.get_executor())
            ->start();
      }
      accept();
    });
  }
};

HttpServer::HttpServer(const Router& router, HttpServerOptions options)
    : impl_(std::make_unique<Impl>(router, std::move(options))) {}

HttpServer::~HttpServer() {
  stop();
}

void HttpServer::bind() {
  if (impl_->acceptor.is_open()) return;
  beast::error_code ec;
  auto address = net::ip::make_address(impl_->options.host, ec);
  if (ec) throw Error::InvalidArgument("host: not an IP address: " + impl_->options.host);
  tcp::endpoint endpoint(address, impl_->options.port);
  impl_->acceptor.open(endpoint.protocol(), ec);
  if (!ec) impl_->acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) impl_->acceptor.bind(endpoint, ec);
  if (!ec) impl_->acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec) {
    throw Error::Unavailable("cannot listen on " + impl_->options.host + ":" +
                             std::to_string(impl_->options.port) + ": " + ec.message());
  }
  impl_->bound_port = impl_->acceptor.local_endpoint().port();
}

void HttpServer::start() {
  bind();
  impl_->accept();
  std::size_t count = impl_->options.threads == 0 ? 1 : impl_->options.threads;
  for (std::size_t i = 0; i < count; ++i) {
    impl_->threads.emplace_back([this] {
      core::name_this_thread("tg-http-io");
      impl_->run_io();
    });
  }
}

void HttpServer::stop() {
  if (impl_->stopped.exchange(true)) return;
  net::post(impl_->io, [this] {
    beast::error_code ignored;
    impl_->acceptor.close(ignored);
  });
  impl_->io.stop();
  for (auto& thread : impl_->threads) {
    if (thread.joinable()) thread.join();
  }
  // Handlers already running finish (the router outlives the server); queued ones are dropped
  // with their connections.
  impl_->handlers.stop();
  impl_->handlers.join();
}

std::uint16_t HttpServer::port() const {
  return impl_->bound_port;
}

}  // namespace tollgate::server
