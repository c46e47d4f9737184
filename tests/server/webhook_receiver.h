// A webhook receiver on 127.0.0.1 for the notification tests: a real HTTP server of our own (the
// server's HTTP front end) that records what it was sent, answers the first `fail_next` tries
// with 500, and notes how many tries it had in flight at once.
//
//   WebhookReceiver receiver;
//   options.webhooks = {WebhookOptions{receiver.url(), ...}};
//   auto got = receiver.wait_for(2);
#pragma once

#include <algorithm>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "server/http_server.h"
#include "server/router.h"
#include "tollgate/json.h"

namespace tollgate::server::testing {

class WebhookReceiver {
 public:
  // `answer_after`: how long each try takes to be answered (a slow receiver keeps a try in
  // flight, so that a second one at the same time would be seen).
  explicit WebhookReceiver(std::chrono::milliseconds answer_after = std::chrono::milliseconds(0)) {
    router_.add("POST", "/hook", [this, answer_after](HttpRequest& request) {
      {
        std::lock_guard lock(mutex_);
        ++tries_;
        most_in_flight_ = std::max(most_in_flight_, ++in_flight_);
      }
      std::this_thread::sleep_for(answer_after);
      std::lock_guard lock(mutex_);
      --in_flight_;
      if (failing_ > 0) {
        --failing_;
        return HttpResponse::error(500, "not now");
      }
      received_.push_back({request.body, request.header("tollgate-signature")});
      return HttpResponse::empty(204);
    });
    HttpServerOptions options;
    options.heartbeat_seconds = 0;
    options.threads = 4;  // tries made at once are answered at once
    http_ = std::make_unique<HttpServer>(router_, options);
    http_->start();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(http_->port()) + "/hook"; }
  void fail_next(int tries) {
    std::lock_guard lock(mutex_);
    failing_ = tries;
  }
  struct Delivery {
    std::string body;
    std::string signature;
    Json json() const { return Json::parse(body); }
  };
  std::vector<Delivery> received() {
    std::lock_guard lock(mutex_);
    return received_;
  }
  int tries() {
    std::lock_guard lock(mutex_);
    return tries_;
  }
  // The most tries it was answering at one time.
  int most_in_flight() {
    std::lock_guard lock(mutex_);
    return most_in_flight_;
  }
  // Waits (a bounded number of short sleeps) until `count` deliveries arrived.
  std::vector<Delivery> wait_for(std::size_t count) {
    for (int i = 0; i < 2000 && received().size() < count; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    return received();
  }

 private:
  Router router_;
  std::unique_ptr<HttpServer> http_;
  std::mutex mutex_;  // guards failing_, tries_, in_flight_, most_in_flight_ and received_
  int failing_ = 0;
  int tries_ = 0;
  int in_flight_ = 0;
  int most_in_flight_ = 0;
  std::vector<Delivery> received_;
};

}  // namespace tollgate::server::testing
