#include "checkpoint/value_store.h"

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

}  // namespace

std::vector<std::uint8_t> encode_value(const Json& value) {
  return Json::to_msgpack(value);
}

Json decode_value(const std::uint8_t* data, std::size_t size) {
  try {
    return Json::from_msgpack(data, data + size);
  } catch (const Json::exception& e) {
    throw Error::Internal(std::string("stored value is not valid MessagePack: ") + e.what());
  }
}

ValuePlan plan_values(const Checkpoint& checkpoint, const ParentValues& parent,
                      const ChannelVersions& new_versions, const ChannelDeltas& deltas) {
  ValuePlan plan;
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
      std::vector<std::uint8_t> encoded = encode_value(delta_it->second.appended);
      const std::uint64_t bytes = encoded.size();
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
    std::vector<std::uint8_t> encoded = encode_value(*payload);
    const std::uint64_t bytes = encoded.size();
    plan.bytes += bytes;
    plan.refs.emplace(channel, ValueRef{checkpoint.id, checkpoint.id,
                                        value.is_array() ? value.size() : 0, 0, bytes});
    plan.stored.emplace(channel, StoredValue{false, "", 0, std::move(payload), std::move(encoded)});
  }
  return plan;
}

JsonPtr reconstruct_value(const ValueRef& ref, const StoredValueLookup& lookup) {
  const StoredValue* stored = &lookup(ref.writer_id);
  if (!stored->is_delta) return stored->payload;
  std::vector<const StoredValue*> chain;
  while (stored->is_delta) {
    if (chain.size() >= kMaxChainLength) {
      throw Error::Internal("stored value chain of checkpoint " + ref.writer_id + " has a cycle");
    }
    chain.push_back(stored);
    stored = &lookup(stored->base_id);
  }
  Json result = stored->payload && stored->payload->is_array() ? *stored->payload : Json::array();
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    const StoredValue& delta = **it;
    if (delta.keep > result.size() || !delta.payload || !delta.payload->is_array()) {
      throw Error::Internal("stored delta of checkpoint " + ref.writer_id +
                            " does not fit its base value");
    }
    result.erase(result.begin() + static_cast<std::ptrdiff_t>(delta.keep), result.end());
    for (const Json& item : *delta.payload) result.push_back(item);
  }
  return make_json_ptr(std::move(result));
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
