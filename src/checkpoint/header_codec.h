// The persisted form of a checkpoint without its values: id-independent fields and the
// ValueRefs that say where each channel's value is stored. Encoded as MessagePack with a
// format number so that later layouts can still read older rows: format 3 is written (an
// array: each channel name and checkpoint id once, named by index where used, and the values
// kept inline in their refs); format 2 (the same without inline values) and format 1 (a map
// keyed "cv", "f", "refs", ..., the layout of rows written before) are read too.
#pragma once

#include <cstdint>
#include <vector>

#include "checkpoint/value_store.h"
#include "tollgate/checkpoint.h"

namespace tollgate::checkpoint_internal {

inline constexpr int kHeaderFormat = 3;

// Encodes v, ts, channel_versions, versions_seen, updated_channels (not id, not values), in
// format kHeaderFormat.
std::vector<std::uint8_t> encode_header(const Checkpoint& checkpoint, const ValueRefs& refs);

// Fills every field of `checkpoint` but id and channel_values, and `refs`. Throws
// Error(kInternal) for a malformed or unknown-format header.
void decode_header(const std::uint8_t* data, std::size_t size, Checkpoint& checkpoint,
                   ValueRefs& refs);

}  // namespace tollgate::checkpoint_internal
