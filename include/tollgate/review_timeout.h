// Review deadlines: what both sides of a timed review agree on. The human-in-the-loop policy
// gives a reviewed tool a `timeout` and an `on_timeout` decision (human_in_the_loop.h); the
// paused review shows `expires_at`; when it passes, the server answers the review itself as
// kTimeoutIdentity (docs/config.md, "Review deadlines").
#pragma once

#include <string_view>

namespace tollgate {

// The message of a review answered on timeout when its policy names none, and of the other
// actions of the same review (rejected, never approved). A wire constant: clients and models
// see it verbatim.
inline constexpr std::string_view kReviewTimeoutMessage =
    "No reviewer decided within the time allowed, so the action was not executed.";

// The identity the server applies expired reviews as (audited as such). No client may
// authenticate as it: subjects starting with "system:" are refused.
inline constexpr std::string_view kTimeoutIdentity = "system:timeout";

}  // namespace tollgate
