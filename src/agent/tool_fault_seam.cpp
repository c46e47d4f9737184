// The TOLLGATE_FAULT test seam (tool_fault_seam.h).
#include "agent/tool_fault_seam.h"

#include <unistd.h>

#include <cstdlib>
#include <string>

namespace tollgate::tool_faults {
namespace {

enum class Point { kNone, kBefore, kAfter };

struct Plan {
  Point point = Point::kNone;
  std::string tool;
};

Plan read_plan() {
  const char* text = std::getenv("TOLLGATE_FAULT");
  if (text == nullptr) return {};
  const std::string value(text);
  for (const auto& [prefix, point] : {std::pair<std::string_view, Point>{"crash_before_tool:", Point::kBefore},
                                      std::pair<std::string_view, Point>{"crash_after_tool:", Point::kAfter}}) {
    if (value.rfind(prefix, 0) == 0) return Plan{point, value.substr(prefix.size())};
  }
  return {};
}

const Plan& plan() {
  static const Plan kPlan = read_plan();
  return kPlan;
}

void crash_if(Point point, std::string_view tool) {
  const Plan& planned = plan();
  if (planned.point == point && planned.tool == tool) _exit(137);
}

}  // namespace

void crash_if_planned_before(std::string_view tool) {
  crash_if(Point::kBefore, tool);
}

void crash_if_planned_after(std::string_view tool) {
  crash_if(Point::kAfter, tool);
}

}  // namespace tollgate::tool_faults
