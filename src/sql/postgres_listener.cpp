#include "sql/postgres_listener.h"

#include <libpq-fe.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <exception>
#include <utility>

#include "core/sha256.h"
#include "core/thread_name.h"
#include "sql/postgres_connection.h"
#include "tollgate/error.h"

namespace tollgate::sql {
namespace {

// As PostgresConnection's connect_timeout, which libpq leaves to whoever polls a started session.
constexpr std::chrono::seconds kConnectTimeout{10};

// How the listener's messages begin.
const std::string kWho = "postgres listener: ";

}  // namespace

PostgresListener::PostgresListener(std::string url, PostgresListenerOptions options)
    : url_(std::move(url)), options_(std::move(options)) {
  assert(options_.on_notification);
  wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) throw Error::Internal("postgres listener: no eventfd");
}

PostgresListener::~PostgresListener() {
  stop();
  close(wake_fd_);
}

void PostgresListener::start() {
  assert(!thread_.joinable() && session_ == nullptr);
  session_ = connect();
  if (std::string error = listen_on_session(true); !error.empty()) {
    PQfinish(session_);
    session_ = nullptr;
    backend_pid_ = 0;
    throw Error::Unavailable(kWho + error);
  }
  connected_ = true;
  std::lock_guard lock(mutex_);
  started_ = true;
  thread_ = std::thread([this] {
    core::name_this_thread("tg-pg-listen");
    run();
  });
}

void PostgresListener::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    listened_.notify_all();
  }
  wake();
  if (thread_.joinable()) thread_.join();
  PQfinish(session_);
  session_ = nullptr;
  connected_ = false;
  backend_pid_ = 0;
}

void PostgresListener::listen(const std::string& channel) {
  std::unique_lock lock(mutex_);
  if (!channels_.insert(channel).second && !added_.contains(channel)) return;
  added_.insert(channel);
  const std::uint64_t ticket = ++requested_;
  if (!started_ || std::this_thread::get_id() == thread_id_) return;
  wake();
  listened_.wait(lock, [&] { return served_ >= ticket || stopping_; });
}

void PostgresListener::run() {
  {
    std::lock_guard lock(mutex_);
    thread_id_ = std::this_thread::get_id();
  }
  std::chrono::milliseconds delay = options_.first_retry_delay;
  while (!stopping_) {
    if (session_ == nullptr) {
      if (!reconnect_after(delay)) {
        delay = std::min(delay * 2, options_.max_retry_delay);
        continue;
      }
      delay = options_.first_retry_delay;
    }
    std::string error = listen_on_session(false);
    deliver_notifications();  // also those that came while LISTENing
    if (error.empty() && wait(PQsocket(session_), POLLIN, Clock::time_point::max()) &&
        (PQconsumeInput(session_) == 0 || PQstatus(session_) != CONNECTION_OK)) {
      error = postgres_message_line(PQerrorMessage(session_));
    }
    if (!error.empty() && !stopping_) {
      deliver_notifications();  // what the session read before it broke
      drop_session(error);
    }
  }
}

pg_conn* PostgresListener::connect() {
  pg_conn* conn = open_postgres_session(url_, PostgresSessionKind::kListener);
  const Clock::time_point deadline = Clock::now() + kConnectTimeout;
  // libpq's first step is to wait until the socket is writable.
  PostgresPollingStatusType status =
      PQstatus(conn) == CONNECTION_BAD ? PGRES_POLLING_FAILED : PGRES_POLLING_WRITING;
  while (status != PGRES_POLLING_OK && status != PGRES_POLLING_FAILED && !stopping_ &&
         Clock::now() < deadline) {
    const short events = status == PGRES_POLLING_READING ? POLLIN : POLLOUT;
    if (wait(PQsocket(conn), events, deadline)) status = PQconnectPoll(conn);
  }
  where_ = postgres_where(conn);
  if (status == PGRES_POLLING_OK) {
    backend_pid_ = PQbackendPID(conn);
    // libpq would print what the server says outside a query (e.g. "terminating connection due
    // to administrator command") on standard error; the owner decides instead.
    PQsetNoticeProcessor(
        conn,
        [](void* self, const char* message) {
          static_cast<PostgresListener*>(self)->report(
              kWho + "the server says: " + postgres_message_line(message));
        },
        this);
    return conn;
  }
  const std::string message = status == PGRES_POLLING_FAILED
                                  ? postgres_message_line(PQerrorMessage(conn))
                              : stopping_ ? std::string("stopped")
                                          : std::string("timeout expired");
  PQfinish(conn);
  throw Error::Unavailable(kWho + "cannot connect to " + where_ + ": " + message);
}

bool PostgresListener::reconnect_after(std::chrono::milliseconds delay) {
  const Clock::time_point until = Clock::now() + delay;
  while (!stopping_ && Clock::now() < until) {
    wait(-1, 0, until);
    listen_on_session(false);  // no session: a listen() is served by the LISTENs to come
  }
  if (stopping_) return false;
  try {
    session_ = connect();
  } catch (const Error& e) {
    if (!stopping_) report(e.what());
    return false;
  }
  if (std::string error = listen_on_session(true); !error.empty()) {
    drop_session(error);
    return false;
  }
  connected_ = true;
  if (options_.on_reconnect) call_safely("on_reconnect", options_.on_reconnect);
  return true;
}

std::string PostgresListener::listen_on_session(bool every_channel) {
  std::set<std::string> channels;
  std::uint64_t ticket = 0;
  {
    std::lock_guard lock(mutex_);
    channels = every_channel ? channels_ : std::move(added_);
    added_.clear();
    ticket = requested_;
  }
  std::string sql;
  for (const std::string& channel : channels) sql += "LISTEN " + quote_identifier(channel) + ";";
  std::string error;
  if (session_ != nullptr && !sql.empty()) {
    error = exec_on_session(sql);
    if (!error.empty()) error = "cannot LISTEN at " + where_ + ": " + error;
  }
  std::lock_guard lock(mutex_);
  served_ = std::max(served_, ticket);
  listened_.notify_all();
  return error;
}

std::string PostgresListener::exec_on_session(const std::string& sql) {
  if (PQsendQuery(session_, sql.c_str()) == 0)
    return postgres_message_line(PQerrorMessage(session_));
  std::string error;
  for (;;) {
    while (PQisBusy(session_) == 0) {
      PGresult* result = PQgetResult(session_);
      if (result == nullptr) return error;
      if (PQresultStatus(result) != PGRES_COMMAND_OK && error.empty()) {
        error = postgres_message_line(PQresultErrorMessage(result));
      }
      PQclear(result);
    }
    if (stopping_) return "stopped";
    if (wait(PQsocket(session_), POLLIN, Clock::time_point::max()) &&
        PQconsumeInput(session_) == 0) {
      return postgres_message_line(PQerrorMessage(session_));
    }
  }
}

void PostgresListener::drop_session(const std::string& why) {
  PQfinish(session_);
  session_ = nullptr;
  connected_ = false;
  backend_pid_ = 0;
  report(kWho + "session to " + where_ + " lost (" + why + "); connecting again");
  listen_on_session(false);  // lets waiting listen() calls return: on_reconnect will follow
}

void PostgresListener::deliver_notifications() {
  while (PGnotify* notify = PQnotifies(session_)) {
    const Notification notification{notify->relname, notify->extra, notify->be_pid};
    PQfreemem(notify);
    call_safely("on_notification", [&] { options_.on_notification(notification); });
  }
}

bool PostgresListener::wait(int socket, short events, Clock::time_point deadline) {
  int timeout_ms = -1;
  if (deadline != Clock::time_point::max()) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
    timeout_ms = static_cast<int>(std::max<std::int64_t>(0, left.count()));
  }
  pollfd fds[2] = {{wake_fd_, POLLIN, 0}, {socket, events, 0}};
  if (poll(fds, 2, timeout_ms) < 0) return false;  // EINTR: the caller looks again
  if ((fds[0].revents & POLLIN) != 0) {
    std::uint64_t count = 0;
    [[maybe_unused]] const ssize_t read_bytes = read(wake_fd_, &count, sizeof count);
  }
  return (fds[1].revents & (events | POLLERR | POLLHUP)) != 0;
}

void PostgresListener::wake() {
  const std::uint64_t one = 1;
  [[maybe_unused]] const ssize_t written = write(wake_fd_, &one, sizeof one);
}

void PostgresListener::call_safely(const char* callback_name,
                                   const std::function<void()>& callback) {
  try {
    callback();
  } catch (const std::exception& e) {
    report(kWho + callback_name + " threw: " + e.what());
  } catch (...) {
    report(kWho + callback_name + " threw");
  }
}

void PostgresListener::report(const std::string& problem) {
  if (!options_.on_problem) return;
  try {
    options_.on_problem(problem);
  } catch (...) {
    // Nowhere left to tell it.
  }
}

void notify(Connection& connection, std::string_view channel, std::string_view payload) {
  assert(connection.dialect() == Dialect::kPostgres);
  if (payload.size() >= kNotificationPayloadLimit) {
    throw Error::InvalidArgument("postgres: a notification's payload must be shorter than " +
                                 std::to_string(kNotificationPayloadLimit) + " bytes, not " +
                                 std::to_string(payload.size()));
  }
  std::unique_ptr<Statement> statement = connection.prepare("SELECT pg_notify($1, $2)");
  statement->bind(1, channel).bind(2, payload);
  statement->run();
}

std::string channel_name(std::string_view schema, std::string_view topic) {
  assert(!topic.empty() && topic.size() <= 40);
  assert(std::all_of(topic.begin(), topic.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  }));
  return "tollgate_" + std::string(topic) + "_" + core::sha256_hex(schema).substr(0, 12);
}

}  // namespace tollgate::sql
