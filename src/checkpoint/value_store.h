// Delta storage of channel values, shared by every saver.
//
// A checkpoint does not hold its channel values; it holds a ValueRef per channel naming the
// checkpoint that stored the value (its "writer"). A channel that did not change keeps its
// parent's ref, so it is never stored again. A changed list channel that came with a
// ListDelta is stored as that delta (keep the base's first `keep` items, then append) on top
// of the parent's value. To bound the read cost, a full value is stored instead whenever the
// deltas accumulated since the last full value would exceed that full value's size: the
// stored bytes per step are amortised O(size of the step's change) and reading a value costs
// at most about twice the size of its last full value.
//
// Thread-safety: plain functions and values; callers guard their own storage.
#pragma once

#include <algorithm>
#include <array>
#include <boost/container/flat_map.hpp>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tollgate/checkpoint.h"
#include "tollgate/json.h"

namespace tollgate::checkpoint_internal {

// A checkpoint id shared by every reference to it: the refs of one checkpoint's channels and
// of its descendants that kept them all point at one string, so copying a ref costs a
// reference count instead of two 36-character strings. Immutable; thread-safe to copy.
class SharedId {
 public:
  SharedId() = default;     // the empty id
  SharedId(std::string id)  // NOLINT(google-explicit-constructor): ids are strings
      : id_(std::make_shared<const std::string>(std::move(id))) {}
  SharedId(const char* id) : SharedId(std::string(id)) {}  // NOLINT(google-explicit-constructor)

  const std::string& str() const { return id_ ? *id_ : empty(); }
  operator const std::string&() const { return str(); }  // NOLINT(google-explicit-constructor)

  friend bool operator==(const SharedId& a, const SharedId& b) {
    return a.id_ == b.id_ || a.str() == b.str();
  }
  friend bool operator==(const SharedId& a, const std::string& b) { return a.str() == b; }

 private:
  static const std::string& empty() {
    static const std::string kEmpty;
    return kEmpty;
  }
  std::shared_ptr<const std::string> id_;
};

// The most bytes a value's encoding may take to be kept in its ref (see InlineValue).
inline constexpr std::size_t kInlineValueBytes = 15;

// A value small enough to be kept in its ref, and so in its checkpoint's header, instead of in
// a stored value of its own: most of an agent's channels hold a null trigger or a flag, and a
// stored value (a row, in the SQL savers) costs far more than its one byte. Its MessagePack
// encoding; empty when the value is stored (no encoding is empty).
struct InlineValue {
  std::uint8_t size = 0;
  std::array<std::uint8_t, kInlineValueBytes> bytes{};

  explicit operator bool() const { return size != 0; }
  friend bool operator==(const InlineValue& a, const InlineValue& b) {
    return a.size == b.size &&
           std::equal(a.bytes.begin(), a.bytes.begin() + a.size, b.bytes.begin());
  }
};

// Where a checkpoint finds the value of one channel, plus what the next delta needs to know.
struct ValueRef {
  SharedId writer_id;             // the checkpoint (same thread and namespace) storing it
  SharedId full_id;               // the checkpoint storing the full value the chain starts at
  std::size_t length = 0;         // item count when the value is an array
  std::uint64_t chain_bytes = 0;  // bytes of the deltas stored since that full value
  std::uint64_t full_bytes = 0;   // bytes of that full value
  // The value itself when small: then writer_id and full_id name the checkpoint that set it,
  // and nothing is stored for it.
  InlineValue inline_value;

  bool operator==(const ValueRef&) const = default;
};

// The encoding of `value` as an InlineValue when it takes at most kInlineValueBytes; looks at
// no more of a large value than that.
std::optional<InlineValue> inline_encoding(const Json& value);
// The ref of a full value set by checkpoint `self`: kept inline when small, else stored by
// `self` (its encoding `bytes` long).
ValueRef full_value_ref(const SharedId& self, const Json& value, std::uint64_t bytes,
                        const std::optional<InlineValue>& inlined);
// By channel. A sorted vector: one allocation for a checkpoint's refs, not one per channel.
using ValueRefs = boost::container::flat_map<std::string, ValueRef, std::less<>>;

// One channel value as stored by its writer: the whole value or a delta on `base_id`'s value.
// The value (the full value, or the appended items as a JSON array) is held as a shared
// JsonPtr, as its MessagePack encoding, or both; at least one of them is set.
struct StoredValue {
  bool is_delta = false;
  SharedId base_id;                   // delta only: writer id of the value this one extends
  std::size_t keep = 0;               // delta only: items of the base value kept
  JsonPtr payload;                    // the value when shared with its producer (or decoded)
  std::vector<std::uint8_t> encoded;  // the value as MessagePack (compact, owned)
};
// By channel; a sorted vector like ValueRefs.
using StoredValues = boost::container::flat_map<std::string, StoredValue, std::less<>>;

// The value a StoredValue holds: its payload, or else its encoding decoded.
JsonPtr stored_json(const StoredValue& value);

// What put() must store for one checkpoint.
struct ValuePlan {
  ValueRefs refs;           // one per channel in checkpoint.channel_values
  StoredValues stored;      // the values this checkpoint writes (writer_id == its id)
  std::uint64_t bytes = 0;  // sum of the encoded sizes (the values kept inline included)
  std::size_t inlined = 0;  // values set by this checkpoint and kept inline in `refs`
};

// The channel versions of a parent checkpoint: a ChannelVersions map, or a function for a
// saver that keeps them in another form. Default: none (nothing proves a value unchanged).
class ParentVersions {
 public:
  using Lookup = std::function<std::optional<ChannelVersion>(std::string_view channel)>;

  ParentVersions() = default;
  ParentVersions(const ChannelVersions* versions)  // NOLINT(google-explicit-constructor)
      : versions_(versions) {}
  explicit ParentVersions(Lookup lookup) : lookup_(std::move(lookup)) {}

  // The parent's version of `channel`; nullopt when it has none or there is no parent.
  std::optional<ChannelVersion> find(std::string_view channel) const;

 private:
  const ChannelVersions* versions_ = nullptr;
  Lookup lookup_;
};

// The value refs of a parent checkpoint: a ValueRefs map, or a function for a saver that
// keeps them in another form. Default: none.
class ParentRefs {
 public:
  using Lookup = std::function<const ValueRef*(std::string_view channel)>;

  ParentRefs() = default;
  ParentRefs(const ValueRefs* refs) : refs_(refs) {}  // NOLINT(google-explicit-constructor)
  explicit ParentRefs(Lookup lookup) : lookup_(std::move(lookup)) {}

  // The parent's ref of `channel`; nullptr when it has none or there is no parent.
  const ValueRef* find(std::string_view channel) const;

 private:
  const ValueRefs* refs_ = nullptr;
  Lookup lookup_;
};

// The parent checkpoint as far as planning is concerned; empty members: no parent.
struct ParentValues {
  ParentRefs refs;
  ParentVersions versions;
};

// How plan_values holds the values it stores. Either way a value it would have to copy (a
// delta channel's value or a delta's items: the caller may keep appending in place to the
// list it passed) is kept only as its encoding, never as a copied JSON tree.
//   kKeep:    every other full value shares the caller's JsonPtr and also carries its
//             encoding (what persistent savers write).
//   kCompact: for a saver that keeps values in memory. Objects and arrays are kept only as
//             their encoding (a JSON tree takes several times the bytes of its MessagePack);
//             other values share the caller's JsonPtr without an encoding (only their size
//             is counted).
// Either way a small value (nulls, flags, short strings) is kept in its ref (InlineValue).
enum class Encoding { kKeep, kCompact };

// Receives plan_values' decisions, in channel order: one ref per channel, and the values
// the checkpoint stores itself.
class ValuePlanSink {
 public:
  // A channel's ref; `set_here` when it is a value set by this checkpoint and kept in the ref
  // (an InlineValue: nothing is stored for it).
  virtual void add_ref(const std::string& channel, ValueRef ref, bool set_here) = 0;
  virtual void add_stored(const std::string& channel, StoredValue value) = 0;

 protected:
  ~ValuePlanSink() = default;
};

// Decides how each channel of `checkpoint` is stored (see Encoding) and hands the decisions
// to `sink`; `self` is checkpoint.id, as the refs to the values it stores will hold it. A
// changed value whose encoding fits an InlineValue is kept in its ref, never stored, and is
// never the base of a delta. Returns the sum of the encoded sizes of the values set here.
std::uint64_t plan_values(const Checkpoint& checkpoint, const SharedId& self,
                          const ParentValues& parent, const ChannelVersions& new_versions,
                          const ChannelDeltas& deltas, Encoding encoding, ValuePlanSink& sink);

// The same, collected in a ValuePlan.
ValuePlan plan_values(const Checkpoint& checkpoint, const ParentValues& parent,
                      const ChannelVersions& new_versions, const ChannelDeltas& deltas,
                      Encoding encoding = Encoding::kKeep);

// Looks up the value stored by checkpoint `writer_id` for the channel being rebuilt.
// Throws Error(kInternal) when it is missing (a damaged store).
using StoredValueLookup = std::function<const StoredValue&(const std::string& writer_id)>;

// Values already rebuilt during one read of many checkpoints (a history listing), by a key
// the caller forms as <its prefix for thread, namespace and channel> + writer id. Checkpoints
// that share a stored value then share one rebuilt value, and a delta chain is extended from
// the nearest value already rebuilt instead of from its full value.
struct ValueMemo {
  std::map<std::string, JsonPtr, std::less<>> values;
};

// Rebuilds the value `ref` points at. A full value is returned shared, without a copy.
// With `memo`, rebuilt values are looked up and remembered under memo_prefix + writer id.
JsonPtr reconstruct_value(const ValueRef& ref, const StoredValueLookup& lookup,
                          ValueMemo* memo = nullptr, std::string_view memo_prefix = {});

// The MessagePack encoding used for stored values and writes (keeps binary values). Built in
// one allocation of exactly encoded_size(value) bytes.
std::vector<std::uint8_t> encode_value(const Json& value);
// encode_value of each write's value (put_writes' rows), in order.
std::vector<std::vector<std::uint8_t>> encode_write_values(
    const std::vector<std::pair<std::string, Json>>& writes);
// Writes encode_value(value) at `out`, which must have room for encoded_size(value) bytes.
void write_value(const Json& value, std::uint8_t* out);
// The size of encode_value(value), counted without building the encoding.
std::uint64_t encoded_size(const Json& value);
Json decode_value(const std::uint8_t* data, std::size_t size);

// ValueRefs as JSON ({channel: [writer_id, full_id, length, chain_bytes, full_bytes]}).
Json refs_to_json(const ValueRefs& refs);
ValueRefs refs_from_json(const Json& json);

}  // namespace tollgate::checkpoint_internal
