// Assertions on tollgate::Error for tests:
//   EXPECT_TRUE(throws_error([&] { model->invoke(request); }, ErrorCode::kUnavailable,
//                            {"timed out"}));
// A failure names what was thrown instead (another code, a message lacking a part, another
// exception type, or nothing at all) at the caller's line.
#pragma once

#include <gtest/gtest.h>

#include <exception>
#include <initializer_list>
#include <string_view>

#include "tollgate/error.h"

namespace tollgate::testing {

// Runs `call`; succeeds when it throws a tollgate::Error with `code` whose message contains
// every one of `parts`.
template <class Call>
::testing::AssertionResult throws_error(Call&& call, ErrorCode code,
                                        std::initializer_list<std::string_view> parts = {}) {
  try {
    call();
  } catch (const Error& e) {
    if (e.code() != code) {
      return ::testing::AssertionFailure()
             << "threw error code " << static_cast<int>(e.code()) << " instead of "
             << static_cast<int>(code) << ": " << e.what();
    }
    for (std::string_view part : parts) {
      if (std::string_view(e.what()).find(part) == std::string_view::npos) {
        return ::testing::AssertionFailure()
               << "the message lacks \"" << part << "\": " << e.what();
      }
    }
    return ::testing::AssertionSuccess();
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "threw a non-tollgate exception: " << e.what();
  }
  return ::testing::AssertionFailure() << "threw nothing";
}

}  // namespace tollgate::testing
