// The identifiers every module mints: random (uuid4), name-based (uuid5) and time-ordered
// (uuid7) UUIDs, and checkpoint ids. All are lowercase 8-4-4-4-12 text and thread-safe.
//
// Randomness comes from the kernel's CSPRNG (getrandom), fetched in batches into a per-thread
// pool; a forked child drops the pool it inherited, so parent and child never share an id. A
// checkpoint id's node, unique but not secret, comes from a per-thread generator seeded from
// that pool (and seeded again in a forked child): kernel bytes are too slow for every step.
// Time comes from a Clock (the system clock by default); the time-ordered ids stay increasing
// within the process even when that clock stands still or goes back.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "tollgate/clock.h"

namespace tollgate::core {

// A random (version 4) UUID: 122 random bits.
std::string uuid4();

// A name-based (version 5, SHA-1) UUID of `name` in `namespace_uuid`, which must be a UUID in
// its text form (asserted).
std::string uuid5(std::string_view namespace_uuid, std::string_view name);

// A time-ordered (version 7) UUID: the milliseconds since the Unix epoch by `clock`, a 12-bit
// counter and 62 random bits. Every id compares greater, as a string, than the ids made
// before it in this process: when the clock has not moved past the last id's millisecond,
// that millisecond is reused with the counter counting up (4096 ids later it borrows the
// next millisecond).
std::string uuid7(const Clock& clock = system_clock());

// A checkpoint id: a version 6 UUID whose time (100 ns intervals since 1582-10-15, by
// `clock`) leads, whose clock sequence is the low 14 bits of `step` and whose node is random.
// Every id compares greater, as a string, than the ids made before it in this process (a clock
// that has not moved gives the last time plus 100 ns), and ids of a later run compare greater
// as long as the clock moved forward in between.
std::string checkpoint_id(std::int64_t step, const Clock& clock = system_clock());

// True for a UUID in its text form (8-4-4-4-12 hex digits, either case), of any version.
bool is_uuid(std::string_view text);

// The text form of 16 bytes: 8-4-4-4-12 lowercase hex digits.
std::string format_uuid(const std::array<std::uint8_t, 16>& bytes);

}  // namespace tollgate::core
