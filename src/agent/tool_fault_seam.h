// TEST SEAM (docs/effects.md): the environment variable TOLLGATE_FAULT makes the process end at
// a chosen point of a tool call, as a kill -9 or a power cut would, so that crash tests hit
// exactly the moment the effect ledger exists for:
//   TOLLGATE_FAULT=crash_before_tool:<name>  _exit(137) just before the call starts (before its
//                                            intent is stored: nothing durable says it began)
//   TOLLGATE_FAULT=crash_after_tool:<name>   _exit(137) right after the tool returned (or
//                                            threw), before its result is saved
// The variable is read once, on the first tool call; unset, each check is one load of a
// flag. Nothing in the product sets it.
#pragma once

#include <string_view>

namespace tollgate::tool_faults {

void crash_if_planned_before(std::string_view tool);
void crash_if_planned_after(std::string_view tool);

}  // namespace tollgate::tool_faults
