// book_flight{to, from?}: a demo tool that raises a form card before it books anything. The
// interrupt value is flight_booking_form(from, to): formType "flight_booking", a title, context
// (from, to, a note), fields of every kind the console renders (text, date, select, number,
// currency, checkbox, textarea) with defaults, and a responseSchema for the values. The answer
// is {"approved": bool, "values": {...}}: approved books (the result names what was booked),
// declined books nothing. Nothing leaves the machine.
#pragma once

#include <string>

#include "tollgate/json.h"
#include "tollgate/tool.h"

namespace tollgate {

Json flight_booking_form(const std::string& from, const std::string& to);

Tool make_book_flight_tool();

}  // namespace tollgate
