#include "server/record_status.h"

#include <array>
#include <cstddef>

#include "tollgate/error.h"

namespace tollgate::server {
namespace {

// Each enum's names, indexed by its values in declaration order.
template <std::size_t N>
using Names = std::array<std::string, N>;

const Names<6> kRunStatusNames{"pending", "running", "success", "error", "interrupted", "timeout"};
const Names<4> kThreadStatusNames{"idle", "busy", "interrupted", "error"};
const Names<5> kReviewStatusNames{"pending", "decided", "superseded", "expired", "refused"};
const Names<3> kDeliveryStatusNames{"pending", "delivered", "failed"};

template <typename Status, std::size_t N>
std::optional<Status> named(const Names<N>& names, std::string_view text) {
  for (std::size_t i = 0; i < N; ++i) {
    if (names[i] == text) return static_cast<Status>(i);
  }
  return std::nullopt;
}

template <typename Status, std::size_t N>
Status parse(const Names<N>& names, std::string_view text, std::string_view field) {
  if (std::optional<Status> status = named<Status>(names, text)) return *status;
  std::string expected;
  for (const std::string& name : names) expected += (expected.empty() ? "" : ", ") + name;
  throw Error::Internal(std::string(field) + ": unknown value \"" + std::string(text) +
                        "\"; expected one of " + expected);
}

}  // namespace

const std::string& to_string(RunStatus status) {
  return kRunStatusNames.at(static_cast<std::size_t>(status));
}
std::optional<RunStatus> run_status_named(std::string_view text) {
  return named<RunStatus>(kRunStatusNames, text);
}
RunStatus parse_run_status(std::string_view text, std::string_view field) {
  return parse<RunStatus>(kRunStatusNames, text, field);
}

const std::string& to_string(ThreadStatus status) {
  return kThreadStatusNames.at(static_cast<std::size_t>(status));
}
std::optional<ThreadStatus> thread_status_named(std::string_view text) {
  return named<ThreadStatus>(kThreadStatusNames, text);
}
ThreadStatus parse_thread_status(std::string_view text, std::string_view field) {
  return parse<ThreadStatus>(kThreadStatusNames, text, field);
}

const std::string& to_string(ReviewStatus status) {
  return kReviewStatusNames.at(static_cast<std::size_t>(status));
}
ReviewStatus parse_review_status(std::string_view text, std::string_view field) {
  return parse<ReviewStatus>(kReviewStatusNames, text, field);
}

const std::string& to_string(DeliveryStatus status) {
  return kDeliveryStatusNames.at(static_cast<std::size_t>(status));
}
std::optional<DeliveryStatus> delivery_status_named(std::string_view text) {
  return named<DeliveryStatus>(kDeliveryStatusNames, text);
}
DeliveryStatus parse_delivery_status(std::string_view text, std::string_view field) {
  return parse<DeliveryStatus>(kDeliveryStatusNames, text, field);
}

}  // namespace tollgate::server
