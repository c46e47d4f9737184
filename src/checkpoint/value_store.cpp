#include "checkpoint/value_store.h"

#include <algorithm>
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

// A writer's output adapter that lives on the stack: an aliasing shared_ptr that owns nothing
// (no control block is allocated); the writer must not outlive `output`.
nlohmann::detail::output_adapter_t<std::uint8_t> unowned(
    nlohmann::detail::output_adapter_protocol<std::uint8_t>& output) {
  return {std::shared_ptr<void>(), &output};
}

// Builds the decoded value in place, moving every string and key the reader produced (the
// reader's own DOM builder copies them, and from_msgpack copies the whole result once more).
class DecodedDom {
 public:
  DecodedDom(Json& root, std::size_t input_size) : root_(root), input_size_(input_size) {}

  bool null() { return add(Json()); }
  bool boolean(bool value) { return add(Json(value)); }
  bool number_integer(Json::number_integer_t value) { return add(Json(value)); }
  bool number_unsigned(Json::number_unsigned_t value) { return add(Json(value)); }
  bool number_float(Json::number_float_t value, const Json::string_t& /*text*/) {
    return add(Json(value));
  }
  bool string(Json::string_t& value) { return add(Json(std::move(value))); }
  bool binary(Json::binary_t& value) { return add(Json(std::move(value))); }
  bool start_object(std::size_t /*size*/) { return open(Json::value_t::object); }
  bool key(Json::string_t& key) {
    member_ = &(*open_.back())[std::move(key)];
    return true;
  }
  bool end_object() { return close(); }
  bool start_array(std::size_t size) {
    open(Json::value_t::array);
    // Every item takes at least one byte: a damaged length cannot reserve more than that.
    if (size != static_cast<std::size_t>(-1)) {
      open_.back()->get_ref<Json::array_t&>().reserve(std::min(size, input_size_));
    }
    return true;
  }
  bool end_array() { return close(); }
  template <class Exception>
  bool parse_error(std::size_t /*position*/, const std::string& /*token*/, const Exception& e) {
    throw e;
  }

 private:
  Json* place(Json&& value) {
    if (open_.empty()) {
      root_ = std::move(value);
      return &root_;
    }
    Json& parent = *open_.back();
    if (parent.is_array()) {
      auto& items = parent.get_ref<Json::array_t&>();
      items.push_back(std::move(value));
      return &items.back();
    }
    *member_ = std::move(value);
    return member_;
  }
  bool add(Json&& value) {
    place(std::move(value));
    return true;
  }
  bool open(Json::value_t type) {
    open_.push_back(place(Json(type)));
    return true;
  }
  bool close() {
    open_.pop_back();
    return true;
  }

  Json& root_;
  std::size_t input_size_;
  std::vector<Json*> open_;  // the arrays and objects being filled, innermost last
  Json* member_ = nullptr;   // the object member the next value goes to
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
  std::vector<std::uint8_t> encoded;
  encoded.reserve(encoded_size(value));
  nlohmann::detail::output_vector_adapter<std::uint8_t> output(encoded);
  nlohmann::detail::binary_writer<Json, std::uint8_t> writer(unowned(output));
  writer.write_msgpack(value);
  return encoded;
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
  CountingOutput output(count);
  nlohmann::detail::binary_writer<Json, std::uint8_t> writer(unowned(output));
  writer.write_msgpack(value);
  return count;
}

Json decode_value(const std::uint8_t* data, std::size_t size) {
  try {
    Json value;
    DecodedDom dom(value, size);
    Json::sax_parse(data, data + size, &dom, Json::input_format_t::msgpack);
    return value;
  } catch (const Json::exception& e) {
    throw Error::Internal(std::string("stored value is not valid MessagePack: ") + e.what());
  }
}

ValuePlan plan_values(const Checkpoint& checkpoint, const ParentValues& parent,
                      const ChannelVersions& new_versions, const ChannelDeltas& deltas,
                      Encoding encoding) {
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
      const std::uint64_t bytes = encoded_size(delta_it->second.appended);
      if (parent_ref->chain_bytes + bytes <= parent_ref->full_bytes) {
        ValueRef ref{checkpoint.id, parent_ref->full_id, value.size(),
                     parent_ref->chain_bytes + bytes, parent_ref->full_bytes};
        StoredValue stored{true, parent_ref->writer_id, delta_it->second.keep, nullptr,
                           encode_value(delta_it->second.appended)};
        plan.bytes += bytes;
        plan.refs.emplace(channel, std::move(ref));
        plan.stored.emplace(channel, std::move(stored));
        continue;
      }
    }

    // A full value. The caller may append in place to a delta channel's list: keep its
    // encoding instead of sharing it.
    StoredValue stored;
    std::uint64_t bytes = 0;
    if (has_delta || !value_ptr) {
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
    plan.bytes += bytes;
    plan.refs.emplace(channel, ValueRef{checkpoint.id, checkpoint.id,
                                        value.is_array() ? value.size() : 0, 0, bytes});
    plan.stored.emplace(channel, std::move(stored));
  }
  return plan;
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
  if (JsonPtr known = remembered(ref.writer_id)) return known;
  const StoredValue* stored = &lookup(ref.writer_id);
  if (!stored->is_delta) return remember(stored_json(*stored));
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
      throw Error::Internal("stored delta of checkpoint " + ref.writer_id +
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
