#include "checkpoint/value_store.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

#include "checkpoint/message_pack.h"
#include "tollgate/error.h"

namespace tollgate::checkpoint_internal {
namespace {

// A broken chain (a cycle) must not hang a read; no real chain gets near this.
constexpr std::size_t kMaxChainLength = std::size_t{1} << 24;

bool same_version(const ParentVersions& parent, const ChannelVersions& child,
                  std::string_view channel) {
  const std::optional<ChannelVersion> a = parent.find(channel);
  auto b = child.find(channel);
  // Without versions nothing proves the value unchanged: store it again.
  return a && b != child.end() && *a == b->second;
}

bool delta_applies(const ListDelta& delta, const ValueRef& base, const Json& value) {
  // A value kept inline is in no stored value a delta could name as its base.
  return !base.inline_value && delta.appended.is_array() && value.is_array() &&
         delta.keep <= base.length && delta.keep + delta.appended.size() == value.size();
}

// A MessagePack output that only counts the bytes written to it.
class CountingOutput final : public nlohmann::detail::output_adapter_protocol<std::uint8_t> {
 public:
  explicit CountingOutput(std::uint64_t& count) : count_(count) {}
  void write_character(std::uint8_t /*c*/) override { ++count_; }
  void write_characters(const std::uint8_t* /*s*/, std::size_t length) override {
    count_ += length;
  }

 private:
  std::uint64_t& count_;
};

// A writer's output adapter that lives on the stack: an aliasing shared_ptr that owns nothing
// (no control block is allocated); the writer must not outlive `output`.
nlohmann::detail::output_adapter_t<std::uint8_t> unowned(
    nlohmann::detail::output_adapter_protocol<std::uint8_t>& output) {
  return {std::shared_ptr<void>(), &output};
}

// Reads one MessagePack value into a JSON value, as nlohmann's reader reads it (positive
// integers unsigned, negative ones signed, bin and ext items binary, ext with their type as
// subtype, a repeated key keeping its last value), without its per-byte input calls: strings
// are taken whole. Iterative, so a deep nesting cannot exhaust the stack. Throws Malformed.
class JsonDecoder {
 public:
  struct Malformed : std::runtime_error {
    using std::runtime_error::runtime_error;
  };

  JsonDecoder(const std::uint8_t* data, std::size_t size)
      : begin_(data), at_(data), end_(data + size) {}

  Json decode() {
    Json root;
    Json* slot = &root;  // where the next item goes
    for (;;) {
      item(*slot);
      slot = next_slot();
      if (slot == nullptr) break;
    }
    if (at_ != end_) fail("bytes after the value");
    return root;
  }

 private:
  struct Open {
    Json* container;
    std::size_t left;  // items (members) still to read
  };

  [[noreturn]] void fail(const char* what) const {
    throw Malformed(std::string(what) + " at byte " + std::to_string(at_ - begin_));
  }
  std::size_t left() const { return static_cast<std::size_t>(end_ - at_); }
  std::uint64_t big_endian(std::size_t bytes) {
    if (left() < bytes) fail("unexpected end of input");
    std::uint64_t n = 0;
    for (std::size_t i = 0; i < bytes; ++i) n = (n << 8) | *at_++;
    return n;
  }
  const std::uint8_t* take(std::uint64_t length) {
    if (left() < length) fail("unexpected end of input");
    const std::uint8_t* out = at_;
    at_ += length;
    return out;
  }
  std::string text(std::uint64_t length) {
    const auto* data = reinterpret_cast<const char*>(take(length));
    return std::string(data, length);
  }
  Json binary(std::uint64_t length) {
    const std::uint8_t* data = take(length);
    return Json::binary(Json::binary_t::container_type(data, data + length));
  }
  Json ext(std::uint64_t length) {
    const auto subtype = static_cast<std::uint8_t>(big_endian(1));
    const std::uint8_t* data = take(length);
    return Json::binary(Json::binary_t::container_type(data, data + length), subtype);
  }

  // An array or map of `count` items (members take two): refused when the rest cannot hold them.
  void open(Json& slot, std::uint64_t count, bool map) {
    if (count > left() / (map ? 2 : 1)) fail("a container longer than the input");
    if (map) {
      slot = Json::object();
    } else {
      slot = Json::array();
      slot.get_ref<Json::array_t&>().reserve(count);
    }
    if (count > 0) open_.push_back(Open{&slot, count});
  }

  // A signed integer of `bytes` big-endian bytes.
  std::int64_t signed_number(std::size_t bytes) {
    const unsigned shift = 64 - 8 * static_cast<unsigned>(bytes);
    return static_cast<std::int64_t>(big_endian(bytes) << shift) >> shift;
  }
  // The width of the length or number after marker `b` of the family whose first marker,
  // `first`, is followed by one byte (the next by two, then four, then eight).
  static std::size_t width(std::uint8_t b, std::uint8_t first) {
    return std::size_t{1} << (b - first);
  }

  void item(Json& slot) {
    if (at_ == end_) fail("unexpected end of input");
    const std::uint8_t b = *at_++;
    if (b <= 0x7F) {
      slot = static_cast<std::uint64_t>(b);
    } else if (b >= 0xE0) {
      slot = static_cast<std::int64_t>(static_cast<std::int8_t>(b));
    } else if (b <= 0x8F) {
      open(slot, b & 0x0F, true);
    } else if (b <= 0x9F) {
      open(slot, b & 0x0F, false);
    } else if (b <= 0xBF) {
      slot = text(b & 0x1F);
    } else if (b == 0xC0) {
      slot = nullptr;
    } else if (b == 0xC2 || b == 0xC3) {
      slot = b == 0xC3;
    } else if (b >= 0xC4 && b <= 0xC6) {
      slot = binary(big_endian(width(b, 0xC4)));
    } else if (b >= 0xC7 && b <= 0xC9) {
      slot = ext(big_endian(width(b, 0xC7)));
    } else if (b == 0xCA) {
      const auto bits = static_cast<std::uint32_t>(big_endian(4));
      float f;
      std::memcpy(&f, &bits, sizeof f);
      slot = static_cast<double>(f);
    } else if (b == 0xCB) {
      const std::uint64_t bits = big_endian(8);
      double d;
      std::memcpy(&d, &bits, sizeof d);
      slot = d;
    } else if (b >= 0xCC && b <= 0xCF) {
      slot = big_endian(width(b, 0xCC));
    } else if (b >= 0xD0 && b <= 0xD3) {
      slot = signed_number(width(b, 0xD0));
    } else if (b >= 0xD4 && b <= 0xD8) {
      slot = ext(width(b, 0xD4));
    } else if (b >= 0xD9 && b <= 0xDB) {
      slot = text(big_endian(width(b, 0xD9)));
    } else if (b >= 0xDC) {  // 0xDC-0xDD arrays, 0xDE-0xDF maps, of 16- or 32-bit counts
      open(slot, big_endian(b % 2 == 0 ? 2 : 4), b >= 0xDE);
    } else {
      --at_;
      fail("a byte that starts no MessagePack item");  // 0xC1
    }
  }

  // A map's key: a string item.
  std::string key() {
    if (at_ == end_) fail("unexpected end of input");
    const std::uint8_t b = *at_++;
    if (b >= 0xA0 && b <= 0xBF) return text(b & 0x1F);
    if (b >= 0xD9 && b <= 0xDB) return text(big_endian(width(b, 0xD9)));
    --at_;
    fail("a map key that is not a string");
  }

  // The slot of the next item of the innermost open container, or null when none is open.
  Json* next_slot() {
    while (!open_.empty()) {
      Open& top = open_.back();
      if (top.left == 0) {
        open_.pop_back();
        continue;
      }
      --top.left;
      Json& container = *top.container;
      if (container.is_object()) {
        // Nodes of a std::map stay put: the slot outlives the inserts of later members.
        return &container.get_ref<Json::object_t&>()[key()];
      }
      auto& items = container.get_ref<Json::array_t&>();
      items.emplace_back();
      return &items.back();
    }
    return nullptr;
  }

  const std::uint8_t* begin_;
  const std::uint8_t* at_;
  const std::uint8_t* end_;
  // Innermost last. A container is filled to its end before its parent gets its next item, so
  // no slot is used after an array it lies in has grown (arrays are reserved whole besides).
  std::vector<Open> open_;
};

// Writes MessagePack byte for byte as nlohmann's writer does (smallest form of each length and
// number), into a buffer sized by encoded_size; that writer allocates a JSON string for every
// object key it writes, this one allocates nothing.
class MessagePackWriter {
 public:
  explicit MessagePackWriter(std::uint8_t* out) : out_(out) {}

  void write(const Json& value) {
    switch (value.type()) {
      case Json::value_t::null:
        return out_.null();
      case Json::value_t::boolean:
        return out_.boolean(value.get<bool>());
      case Json::value_t::number_integer:
        return out_.integer(value.get<std::int64_t>());
      case Json::value_t::number_unsigned:
        return out_.unsigned_integer(value.get<std::uint64_t>());
      case Json::value_t::number_float:
        return out_.float_number(value.get<double>());
      case Json::value_t::string:
        return out_.string(value.get_ref<const Json::string_t&>());
      case Json::value_t::array: {
        const auto& items = value.get_ref<const Json::array_t&>();
        out_.array_header(items.size());
        for (const Json& item : items) write(item);
        return;
      }
      case Json::value_t::object: {
        const auto& members = value.get_ref<const Json::object_t&>();
        out_.map_header(members.size());
        for (const auto& [key, member] : members) {
          out_.string(key);
          write(member);
        }
        return;
      }
      case Json::value_t::binary:
      case Json::value_t::discarded:
        break;
    }
    // Binary values (ext/bin forms, rare): nlohmann's writer, straight into the buffer.
    RawOutput output(out_.cursor());
    nlohmann::detail::binary_writer<Json, std::uint8_t> writer(unowned(output));
    writer.write_msgpack(value);
  }

 private:
  // An output adapter that writes at a cursor into a buffer already sized for it.
  class RawOutput final : public nlohmann::detail::output_adapter_protocol<std::uint8_t> {
   public:
    explicit RawOutput(std::uint8_t*& cursor) : cursor_(cursor) {}
    void write_character(std::uint8_t c) override { *cursor_++ = c; }
    void write_characters(const std::uint8_t* s, std::size_t length) override {
      std::copy_n(s, length, cursor_);
      cursor_ += length;
    }

   private:
    std::uint8_t*& cursor_;
  };

  message_pack::Writer out_;
};

// Takes the encoded size of `value` off `left`; false (and `left` unspecified) as soon as it
// does not fit, having looked at no more of `value` than `left` bytes' worth.
bool fits_within(const Json& value, std::uint64_t& left) {
  auto take = [&left](std::uint64_t size) {
    if (size > left) return false;
    left -= size;
    return true;
  };
  switch (value.type()) {
    case Json::value_t::array: {
      const auto& items = value.get_ref<const Json::array_t&>();
      if (!take(message_pack::container_header_size(items.size()))) return false;
      return std::all_of(items.begin(), items.end(),
                         [&left](const Json& item) { return fits_within(item, left); });
    }
    case Json::value_t::object: {
      const auto& members = value.get_ref<const Json::object_t&>();
      if (!take(message_pack::container_header_size(members.size()))) return false;
      return std::all_of(members.begin(), members.end(), [&](const auto& member) {
        return take(message_pack::string_size(member.first.size())) &&
               fits_within(member.second, left);
      });
    }
    default:
      return take(encoded_size(value));  // a scalar: counted without reading it
  }
}

}  // namespace

std::optional<InlineValue> inline_encoding(const Json& value) {
  std::uint64_t left = kInlineValueBytes;
  if (!fits_within(value, left)) return std::nullopt;
  InlineValue out;
  out.size = static_cast<std::uint8_t>(kInlineValueBytes - left);
  if (out.size == 0) return std::nullopt;  // a discarded value: nothing to keep
  write_value(value, out.bytes.data());
  return out;
}

ValueRef full_value_ref(const SharedId& self, const Json& value, std::uint64_t bytes,
                        const std::optional<InlineValue>& inlined) {
  return ValueRef{self, self,  value.is_array() ? value.size() : 0,
                  0,    bytes, inlined.value_or(InlineValue{})};
}

std::vector<std::uint8_t> encode_value(const Json& value) {
  std::vector<std::uint8_t> encoded(encoded_size(value));
  write_value(value, encoded.data());
  return encoded;
}

std::vector<std::vector<std::uint8_t>> encode_write_values(
    const std::vector<std::pair<std::string, Json>>& writes) {
  std::vector<std::vector<std::uint8_t>> encoded;
  encoded.reserve(writes.size());
  for (const auto& [channel, value] : writes) encoded.push_back(encode_value(value));
  return encoded;
}

void write_value(const Json& value, std::uint8_t* out) {
  MessagePackWriter writer(out);
  writer.write(value);
}

std::uint64_t encoded_size(const Json& value) {
  switch (value.type()) {
    case Json::value_t::null:
    case Json::value_t::boolean:
      return 1;
    case Json::value_t::discarded:
      return 0;
    case Json::value_t::number_integer:
      return message_pack::integer_size(value.get<std::int64_t>());
    case Json::value_t::number_unsigned:
      return message_pack::unsigned_size(value.get<std::uint64_t>());
    case Json::value_t::number_float:
      return message_pack::float_size(value.get<double>());
    case Json::value_t::string:
      return message_pack::string_size(value.get_ref<const Json::string_t&>().size());
    case Json::value_t::array: {
      const auto& items = value.get_ref<const Json::array_t&>();
      std::uint64_t size = message_pack::container_header_size(items.size());
      for (const Json& item : items) size += encoded_size(item);
      return size;
    }
    case Json::value_t::object: {
      const auto& members = value.get_ref<const Json::object_t&>();
      std::uint64_t size = message_pack::container_header_size(members.size());
      for (const auto& [key, member] : members) {
        size += message_pack::string_size(key.size()) + encoded_size(member);
      }
      return size;
    }
    case Json::value_t::binary:
      break;
  }
  // Binary values (ext/bin forms): count what the writer writes.
  std::uint64_t count = 0;
  CountingOutput output(count);
  nlohmann::detail::binary_writer<Json, std::uint8_t> writer(unowned(output));
  writer.write_msgpack(value);
  return count;
}

Json decode_value(const std::uint8_t* data, std::size_t size) {
  try {
    return JsonDecoder(data, size).decode();
  } catch (const JsonDecoder::Malformed& e) {
    throw Error::Internal(std::string("stored value is not valid MessagePack: ") + e.what());
  }
}

std::uint64_t plan_values(const Checkpoint& checkpoint, const SharedId& self,
                          const ParentValues& parent, const ChannelVersions& new_versions,
                          const ChannelDeltas& deltas, Encoding encoding, ValuePlanSink& sink) {
  std::uint64_t total_bytes = 0;
  for (const auto& [channel, value_ptr] : checkpoint.channel_values) {
    const ValueRef* parent_ref = parent.refs.find(channel);
    const bool changed = new_versions.find(channel) != new_versions.end();
    if (!changed && parent_ref != nullptr &&
        same_version(parent.versions, checkpoint.channel_versions, channel)) {
      sink.add_ref(channel, *parent_ref, false);
      continue;
    }

    const Json& value = value_ptr ? *value_ptr : null_json();
    auto delta_it = deltas.find(channel);
    const bool has_delta = delta_it != deltas.end();
    if (has_delta && parent_ref != nullptr && delta_applies(delta_it->second, *parent_ref, value)) {
      const std::uint64_t bytes = encoded_size(delta_it->second.appended);
      if (parent_ref->chain_bytes + bytes <= parent_ref->full_bytes) {
        ValueRef ref{self,
                     parent_ref->full_id,
                     value.size(),
                     parent_ref->chain_bytes + bytes,
                     parent_ref->full_bytes,
                     {}};
        StoredValue stored{true, parent_ref->writer_id, delta_it->second.keep, nullptr,
                           encode_value(delta_it->second.appended)};
        total_bytes += bytes;
        sink.add_ref(channel, std::move(ref), false);
        sink.add_stored(channel, std::move(stored));
        continue;
      }
    }

    // A small value: kept in its ref.
    if (std::optional<InlineValue> inlined = inline_encoding(value)) {
      total_bytes += inlined->size;
      sink.add_ref(channel, full_value_ref(self, value, inlined->size, inlined), true);
      continue;
    }

    // A full value. The caller may append in place to a delta channel's list: keep its
    // encoding instead of sharing it. A compact plan keeps containers encoded too.
    StoredValue stored;
    std::uint64_t bytes = 0;
    const bool container = value.is_object() || value.is_array();
    if (has_delta || !value_ptr || (encoding == Encoding::kCompact && container)) {
      stored.encoded = encode_value(value);
      bytes = stored.encoded.size();
    } else {
      stored.payload = value_ptr;
      if (encoding == Encoding::kKeep) {
        stored.encoded = encode_value(value);
        bytes = stored.encoded.size();
      } else {
        bytes = encoded_size(value);
      }
    }
    total_bytes += bytes;
    sink.add_ref(channel, full_value_ref(self, value, bytes, std::nullopt), false);
    sink.add_stored(channel, std::move(stored));
  }
  return total_bytes;
}

ValuePlan plan_values(const Checkpoint& checkpoint, const ParentValues& parent,
                      const ChannelVersions& new_versions, const ChannelDeltas& deltas,
                      Encoding encoding) {
  // Channels come in order: each entry goes at the end.
  class Collect final : public ValuePlanSink {
   public:
    explicit Collect(ValuePlan& plan) : plan_(plan) {}
    void add_ref(const std::string& channel, ValueRef ref, bool set_here) override {
      plan_.refs.emplace_hint(plan_.refs.end(), channel, std::move(ref));
      if (set_here) ++plan_.inlined;
    }
    void add_stored(const std::string& channel, StoredValue value) override {
      plan_.stored.emplace_hint(plan_.stored.end(), channel, std::move(value));
    }

   private:
    ValuePlan& plan_;
  };
  ValuePlan plan;
  plan.refs.reserve(checkpoint.channel_values.size());
  // Usually the changed channels are the ones stored.
  plan.stored.reserve(std::min(new_versions.size(), checkpoint.channel_values.size()));
  Collect collect(plan);
  // One string for every ref to a value stored here.
  const SharedId self(checkpoint.id);
  plan.bytes = plan_values(checkpoint, self, parent, new_versions, deltas, encoding, collect);
  return plan;
}

const ValueRef* ParentRefs::find(std::string_view channel) const {
  if (lookup_) return lookup_(channel);
  if (refs_ == nullptr) return nullptr;
  auto it = refs_->find(channel);
  return it == refs_->end() ? nullptr : &it->second;
}

std::optional<ChannelVersion> ParentVersions::find(std::string_view channel) const {
  if (lookup_) return lookup_(channel);
  if (versions_ == nullptr) return std::nullopt;
  auto it = versions_->find(channel);
  if (it == versions_->end()) return std::nullopt;
  return it->second;
}

JsonPtr stored_json(const StoredValue& value) {
  if (value.payload) return value.payload;
  return make_json_ptr(decode_value(value.encoded.data(), value.encoded.size()));
}

JsonPtr reconstruct_value(const ValueRef& ref, const StoredValueLookup& lookup, ValueMemo* memo,
                          std::string_view memo_prefix) {
  std::string key;
  auto remembered = [&](const std::string& writer_id) -> JsonPtr {
    if (memo == nullptr) return nullptr;
    key.assign(memo_prefix);
    key += writer_id;
    auto it = memo->values.find(key);
    return it == memo->values.end() ? nullptr : it->second;
  };
  auto remember = [&](JsonPtr value) {
    if (memo != nullptr) {
      key.assign(memo_prefix);
      key += ref.writer_id;
      memo->values.insert_or_assign(key, value);
    }
    return value;
  };
  if (ref.inline_value) {
    return make_json_ptr(decode_value(ref.inline_value.bytes.data(), ref.inline_value.size));
  }
  if (JsonPtr known = remembered(ref.writer_id)) return known;
  const StoredValue* stored = &lookup(ref.writer_id);
  if (!stored->is_delta) return remember(stored_json(*stored));
  std::vector<const StoredValue*> chain;
  JsonPtr base;  // a value already rebuilt that the chain extends, if any
  while (stored->is_delta) {
    if (chain.size() >= kMaxChainLength) {
      throw Error::Internal("stored value chain of checkpoint " + ref.writer_id.str() +
                            " has a cycle");
    }
    chain.push_back(stored);
    if ((base = remembered(stored->base_id))) break;
    stored = &lookup(stored->base_id);
  }
  Json result;
  if (base || stored->payload) {
    result = base ? *base : *stored->payload;
  } else {
    result = decode_value(stored->encoded.data(), stored->encoded.size());
  }
  if (!result.is_array()) result = Json::array();
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    const StoredValue& delta = **it;
    Json decoded;  // the delta's items when it holds only their encoding
    if (!delta.payload) decoded = decode_value(delta.encoded.data(), delta.encoded.size());
    const Json& items = delta.payload ? *delta.payload : decoded;
    if (delta.keep > result.size() || !items.is_array()) {
      throw Error::Internal("stored delta of checkpoint " + ref.writer_id.str() +
                            " does not fit its base value");
    }
    result.erase(result.begin() + static_cast<std::ptrdiff_t>(delta.keep), result.end());
    if (delta.payload) {
      for (const Json& item : items) result.push_back(item);
    } else {
      for (Json& item : decoded.get_ref<Json::array_t&>()) result.push_back(std::move(item));
    }
  }
  return remember(make_json_ptr(std::move(result)));
}

Json refs_to_json(const ValueRefs& refs) {
  Json out = Json::object();
  for (const auto& [channel, ref] : refs) {
    out[channel] = Json::array(
        {ref.writer_id.str(), ref.full_id.str(), ref.length, ref.chain_bytes, ref.full_bytes});
  }
  return out;
}

ValueRefs refs_from_json(const Json& json) {
  ValueRefs refs;
  if (!json.is_object()) throw Error::Internal("stored checkpoint has no channel references");
  for (const auto& [channel, item] : json.items()) {
    if (!item.is_array() || item.size() != 5) {
      throw Error::Internal("stored reference of channel '" + channel + "' is malformed");
    }
    refs.emplace(channel, ValueRef{item[0].get<std::string>(),
                                   item[1].get<std::string>(),
                                   item[2].get<std::size_t>(),
                                   item[3].get<std::uint64_t>(),
                                   item[4].get<std::uint64_t>(),
                                   {}});
  }
  return refs;
}

}  // namespace tollgate::checkpoint_internal
