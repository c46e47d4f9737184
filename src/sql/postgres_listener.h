// PostgreSQL's LISTEN/NOTIFY, the way replicas of `tollgate serve` on one database tell each
// other that something happened ("a run was queued", "run R appended events"). A notification
// only says "look now": the tables stay the source of truth, and a receiver must re-read them
// whenever notifications may have been missed (after start, after on_reconnect) and also now and
// then, since a notification can be lost with the connection that would have carried it.
//
// PostgresListener keeps a libpq session of its own (never a PostgresConnection's: a session that
// LISTENs must be read continually) and hands each notification to a callback on its own thread,
// in the order the server sent them. A lost session is opened again after a pause that doubles
// from first_retry_delay up to max_retry_delay; once its channels are LISTENed again,
// on_reconnect says that notifications may have been missed.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <thread>

#include "sql/connection.h"

struct pg_conn;

namespace tollgate::sql {

struct Notification {
  std::string channel;
  std::string payload;
  // The server process of the session that sent it (pg_backend_pid() there); a receiver
  // compares it with its own sessions' to skip what it told itself.
  int sender_pid = 0;
};

// The callbacks run on the listener thread, one at a time (on_problem also on the thread calling
// start(), during it), and must return quickly: they hold up every later notification, so hand
// work to another thread. An exception from one is caught and reported to on_problem. They must
// not call stop() (it waits for the listener thread).
struct PostgresListenerOptions {
  std::function<void(const Notification&)> on_notification;
  // After a lost session is back and LISTENs on every channel again (not after start()), before
  // any notification of the new session.
  std::function<void()> on_reconnect;
  // What the owner may want to log: a lost session, a failed reconnect, a callback that threw,
  // what the server said outside a query. (The sql module logs nothing itself.)
  std::function<void(const std::string&)> on_problem;
  std::chrono::milliseconds first_retry_delay{50};
  std::chrono::milliseconds max_retry_delay{2000};
};

// Thread-safety: start() and stop() are called by the owner, one thread; listen(),
// is_connected() and backend_pid() from any thread, also from the callbacks.
class PostgresListener {
 public:
  // `url` as for PostgresConnection. options.on_notification is required.
  PostgresListener(std::string url, PostgresListenerOptions options);
  // Stops.
  ~PostgresListener();
  PostgresListener(const PostgresListener&) = delete;
  PostgresListener& operator=(const PostgresListener&) = delete;

  // Connects and LISTENs on the channels given so far, then starts the thread; a notification
  // sent after start() returns is delivered (unless the session is lost meanwhile, which
  // on_reconnect reports). Throws Error(kUnavailable) when the server cannot be reached, and
  // Error(kInvalidArgument) for a URL of another scheme. At most once.
  void start();
  // Ends the thread and the session; returns promptly, also during a connect or a retry pause.
  void stop();

  // Adds a channel. Once started, returns after the server LISTENs on it (or after the session
  // was found lost: then on_reconnect follows); not waiting when called from a callback.
  void listen(const std::string& channel);

  // True while the session is up and LISTENs on every channel.
  bool is_connected() const { return connected_; }
  // The server process of the session (pg_backend_pid()), for tests that end it; 0 when none.
  int backend_pid() const { return backend_pid_; }

 private:
  using Clock = std::chrono::steady_clock;
  void run();
  // Opens a session, polling its socket so that stop() can interrupt it.
  pg_conn* connect();
  // After `delay`, opens a session and LISTENs on every channel; false when that failed.
  bool reconnect_after(std::chrono::milliseconds delay);
  // LISTENs on every channel (a new session) or on those added since, and lets the listen()
  // calls made so far return. Returns why a LISTEN failed; empty when none did.
  std::string listen_on_session(bool every_channel);
  // Runs `sql` on the session, polling its socket so that stop() can interrupt it. Returns the
  // error, empty when none.
  std::string exec_on_session(const std::string& sql);
  void drop_session(const std::string& why);
  void deliver_notifications();
  // Waits until `socket` has `events` (true), a wake-up or `deadline` (false).
  bool wait(int socket, short events, Clock::time_point deadline);
  void wake();
  void call_safely(const char* callback_name, const std::function<void()>& callback);
  // Hands a message to on_problem.
  void report(const std::string& problem);

  const std::string url_;
  const PostgresListenerOptions options_;
  int wake_fd_ = -1;            // an eventfd that stop() and listen() write, to end a poll()
  pg_conn* session_ = nullptr;  // used by the listener thread only, once started
  std::string where_;           // host:port/database of the last session
  std::atomic<bool> stopping_{false};
  std::atomic<bool> connected_{false};
  std::atomic<int> backend_pid_{0};
  std::thread thread_;

  std::mutex mutex_;  // guards the members below
  std::condition_variable listened_;
  std::set<std::string> channels_;
  std::set<std::string> added_;  // channels the session does not LISTEN on yet
  std::uint64_t requested_ = 0;  // listen() calls made
  std::uint64_t served_ = 0;     // listen() calls that may return
  bool started_ = false;
  std::thread::id thread_id_;
};

// Sends a notification through `connection` (a PostgreSQL one: SELECT pg_notify($1, $2)). In a
// transaction it is delivered when the transaction commits and dropped if it rolls back; within
// one transaction PostgreSQL folds identical (channel, payload) pairs into one. Throws
// Error(kInvalidArgument) for a payload of kNotificationPayloadLimit bytes or more (the server's
// limit).
inline constexpr std::size_t kNotificationPayloadLimit = 8000;
void notify(Connection& connection, std::string_view channel, std::string_view payload);

// The channel of `topic` (lowercase letters, digits and _, at most 40 bytes: asserted) for the
// Tollgate installation in `schema` (PostgresOptions::schema, as every replica passes it).
// Channels belong to the database, not to a schema, so the name carries a hash of the schema:
// "tollgate_<topic>_<12 hex digits of SHA-256(schema)>", a lowercase identifier of at most 63
// bytes, used unquoted or quoted alike.
std::string channel_name(std::string_view schema, std::string_view topic);

}  // namespace tollgate::sql
