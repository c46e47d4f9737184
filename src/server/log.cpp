#include "server/log.h"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

namespace tollgate::server {
namespace {

spdlog::logger& logger() {
  static spdlog::logger instance = [] {
    spdlog::logger l("tollgate", std::make_shared<spdlog::sinks::stderr_sink_mt>());
    l.set_pattern("%Y-%m-%dT%H:%M:%S.%eZ tollgate %l: %v", spdlog::pattern_time_type::utc);
    return l;
  }();
  return instance;
}

}  // namespace

void log_info(std::string_view message) {
  logger().info("{}", message);
}

void log_warning(std::string_view message) {
  logger().warn("{}", message);
}

void log_error(std::string_view message) {
  logger().error("{}", message);
}

}  // namespace tollgate::server
