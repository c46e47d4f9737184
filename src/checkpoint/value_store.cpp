#include "checkpoint/value_store.h"

#include <cstdint>
#include <limits>
#include <string>

#include "tollgate/error.h"

namespace tollgate::checkpoint_internal {
namespace {

// A broken chain (a cycle) must not hang a read; no real chain gets near this.
constexpr std::size_t kMaxChainLength = std::size_t{1} << 24;

bool same_version(const ChannelVersions* parent, const ChannelVersions& child,
                  std::string_view channel) {
  if (parent == nullptr) return false;
  auto a = parent->find(channel);
  auto b = child.find(channel);
  // Without versions nothing proves the value unchanged: store it again.
  return a != parent->end() && b != child.end() && a->second == b->second;
}

bool delta_applies(const ListDelta& delta, const ValueRef& base, const Json& value) {
  return delta.appended.is_array() && value.is_array() && delta.keep <= base.length &&
         delta.keep + delta.appended.size() == value.size();
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

// MessagePack sizes as nlohmann's writer produces them (smallest header for a length).
std::uint64_t length_header(std::size_t length, std::size_t fix_limit, bool has_8_bit_form) {
  if (length <= fix_limit) return 1;
  if (has_8_bit_form && length <= 0xFF) return 2;
  if (length <= 0xFFFF) return 3;
  return 5;
}

std::uint64_t unsigned_size(std::uint64_t n) {
  if (n < 128) return 1;
  if (n <= 0xFF) return 2;
  if (n <= 0xFFFF) return 3;
  if (n <= 0xFFFFFFFFULL) return 5;
  return 9;
}

std::uint64_t integer_size(std::int64_t n) {
  if (n >= 0) return unsigned_size(static_cast<std::uint64_t>(n));
  if (n >= -32) return 1;
  if (n >= INT8_MIN) return 2;
  if (n >= INT16_MIN) return 3;
  if (n >= INT32_MIN) return 5;
  return 9;
}

std::uint64_t float_size(double n) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wfloat-equal"
  const bool fits_float = n >= static_cast<double>(std::numeric_limits<float>::lowest()) &&
                          n <= static_cast<double>(std::numeric_limits<float>::max()) &&
                          static_cast<double>(static_cast<float>(n)) == n;
#pragma GCC diagnostic pop
  return fits_float ? 5 : 9;
}

}  // namespace

std::vector<std::uint8_t> encode_value(const Json& value) {
  return Json::to_msgpack(value);
}

std::uint64_t encoded_size(const Json& value) {
  switch (value.type()) {
    case Json::value_t::null:
    case Json::value_t::boolean:
      return 1;
    case Json::value_t::discarded:
      return 0;
    case Json::value_t::number_integer:
      return integer_size(value.get<std::int64_t>());
    case Json::value_t::number_unsigned:
      return unsigned_size(value.get<std::uint64_t>());
    case Json::value_t::number_float:
      return float_size(value.get<double>());
    case Json::value_t::string: {
      const std::size_t length = value.get_ref<const Json::string_t&>().size();
      return length_header(length, 31, true) + length;
    }
    case Json::value_t::array: {
      const auto& items = value.get_ref<const Json::array_t&>();
      std::uint64_t size = length_header(items.size(), 15, false);
      for (const Json& item : items) size += encoded_size(item);
      return size;
    }
    case Json::value_t::object: {
      const auto& members = value.get_ref<const Json::object_t&>();
      std::uint64_t size = length_header(members.size(), 15, false);
      for (const auto& [key, member] : members) {
        size += length_header(key.size(), 31, true) + key.size() + encoded_size(member);
      }
      return size;
    }
    case Json::value_t::binary:
      break;
  }
  // Binary values (ext/bin forms): count what the writer writes.
  std::uint64_t count = 0;
  nlohmann::detail::binary_writer<Json, std::uint8_t> writer(
      std::make_shared<CountingOutput>(count));
  writer.write_msgpack(value);
  return count;
}

Json decode_value(const std::uint8_t* data, std::size_t size) {
  try {
    return Json::from_msgpack(data, data + size);
  } catch (const Json::exception& e) {
    throw Error::Internal(std::string("stored value is not valid MessagePack: ") + e.what());
  }
}

ValuePlan plan_values(const Checkpoint& checkpoint, const ParentValues& parent,
                      const ChannelVersions& new_versions, const ChannelDeltas& deltas,
                      Encoding encoding) {
  ValuePlan plan;
  // The encoding (kept) and its size.
  auto encode = [encoding](const Json& value) {
    std::pair<std::vector<std::uint8_t>, std::uint64_t> result;
    if (encoding == Encoding::kKeep) {
      result.first = encode_value(value);
      result.second = result.first.size();
    } else {
      result.second = encoded_size(value);
    }
    return result;
  };
  for (const auto& [channel, value_ptr] : checkpoint.channel_values) {
    const ValueRef* parent_ref = nullptr;
    if (parent.refs != nullptr) {
      auto it = parent.refs->find(channel);
      if (it != parent.refs->end()) parent_ref = &it->second;
    }
    const bool changed = new_versions.find(channel) != new_versions.end();
    if (!changed && parent_ref != nullptr &&
        same_version(parent.versions, checkpoint.channel_versions, channel)) {
      plan.refs.emplace(channel, *parent_ref);
      continue;
    }

    const Json& value = value_ptr ? *value_ptr : null_json();
    auto delta_it = deltas.find(channel);
    const bool has_delta = delta_it != deltas.end();
    if (has_delta && parent_ref != nullptr && delta_applies(delta_it->second, *parent_ref, value)) {
      auto [encoded, bytes] = encode(delta_it->second.appended);
      if (parent_ref->chain_bytes + bytes <= parent_ref->full_bytes) {
        ValueRef ref{checkpoint.id, parent_ref->full_id, value.size(),
                     parent_ref->chain_bytes + bytes, parent_ref->full_bytes};
        StoredValue stored{true, parent_ref->writer_id, delta_it->second.keep,
                           make_json_ptr(delta_it->second.appended), std::move(encoded)};
        plan.bytes += bytes;
        plan.refs.emplace(channel, std::move(ref));
        plan.stored.emplace(channel, std::move(stored));
        continue;
      }
    }

    // A full value. The caller may append in place to a delta channel's list, so copy it.
    JsonPtr payload = has_delta || !value_ptr ? make_json_ptr(value) : value_ptr;
    auto [encoded, bytes] = encode(*payload);
    plan.bytes += bytes;
    plan.refs.emplace(channel, ValueRef{checkpoint.id, checkpoint.id,
                                        value.is_array() ? value.size() : 0, 0, bytes});
    plan.stored.emplace(channel, StoredValue{false, "", 0, std::move(payload), std::move(encoded)});
  }
  return plan;
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
  if (JsonPtr known = remembered(ref.writer_id)) return known;
  const StoredValue* stored = &lookup(ref.writer_id);
  if (!stored->is_delta) return remember(stored->payload);
  std::vector<const StoredValue*> chain;
  JsonPtr base;  // a value already rebuilt that the chain extends, if any
  while (stored->is_delta) {
    if (chain.size() >= kMaxChainLength) {
      throw Error::Internal("stored value chain of checkpoint " + ref.writer_id + " has a cycle");
    }
    chain.push_back(stored);
    if ((base = remembered(stored->base_id))) break;
    stored = &lookup(stored->base_id);
  }
  const JsonPtr& start = base ? base : stored->payload;
  Json result = start && start->is_array() ? *start : Json::array();
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    const StoredValue& delta = **it;
    if (delta.keep > result.size() || !delta.payload || !delta.payload->is_array()) {
      throw Error::Internal("stored delta of checkpoint " + ref.writer_id +
                            " does not fit its base value");
    }
    result.erase(result.begin() + static_cast<std::ptrdiff_t>(delta.keep), result.end());
    for (const Json& item : *delta.payload) result.push_back(item);
  }
  return remember(make_json_ptr(std::move(result)));
}

Json refs_to_json(const ValueRefs& refs) {
  Json out = Json::object();
  for (const auto& [channel, ref] : refs) {
    out[channel] =
        Json::array({ref.writer_id, ref.full_id, ref.length, ref.chain_bytes, ref.full_bytes});
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
    refs.emplace(channel, ValueRef{item[0].get<std::string>(), item[1].get<std::string>(),
                                   item[2].get<std::size_t>(), item[3].get<std::uint64_t>(),
                                   item[4].get<std::uint64_t>()});
  }
  return refs;
}

}  // namespace tollgate::checkpoint_internal
