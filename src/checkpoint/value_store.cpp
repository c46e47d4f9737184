#include "checkpoint/value_store.h"

#include <algorithm>
#include <cstdint>
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

}  // namespace

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
    Json value;
    DecodedDom dom(value, size);
    Json::sax_parse(data, data + size, &dom, Json::input_format_t::msgpack);
    return value;
  } catch (const Json::exception& e) {
    throw Error::Internal(std::string("stored value is not valid MessagePack: ") + e.what());
  }
}

namespace {

// Immutable, so shared by every saver and thread.
const JsonPtr& shared_null() {
  static const JsonPtr kNull = make_json_ptr(nullptr);
  return kNull;
}

}  // namespace

std::uint64_t plan_values(const Checkpoint& checkpoint, const SharedId& self,
                          const ParentValues& parent, const ChannelVersions& new_versions,
                          const ChannelDeltas& deltas, Encoding encoding, ValuePlanSink& sink) {
  std::uint64_t total_bytes = 0;
  for (const auto& [channel, value_ptr] : checkpoint.channel_values) {
    const ValueRef* parent_ref = parent.refs.find(channel);
    const bool changed = new_versions.find(channel) != new_versions.end();
    if (!changed && parent_ref != nullptr &&
        same_version(parent.versions, checkpoint.channel_versions, channel)) {
      sink.add_ref(channel, *parent_ref);
      continue;
    }

    const Json& value = value_ptr ? *value_ptr : null_json();
    auto delta_it = deltas.find(channel);
    const bool has_delta = delta_it != deltas.end();
    if (has_delta && parent_ref != nullptr && delta_applies(delta_it->second, *parent_ref, value)) {
      const std::uint64_t bytes = encoded_size(delta_it->second.appended);
      if (parent_ref->chain_bytes + bytes <= parent_ref->full_bytes) {
        ValueRef ref{self, parent_ref->full_id, value.size(), parent_ref->chain_bytes + bytes,
                     parent_ref->full_bytes};
        StoredValue stored{true, parent_ref->writer_id, delta_it->second.keep, nullptr,
                           encode_value(delta_it->second.appended)};
        total_bytes += bytes;
        sink.add_ref(channel, std::move(ref));
        sink.add_stored(channel, std::move(stored));
        continue;
      }
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
      // Nulls (trigger channels write them every step) share one value instead of keeping
      // each caller's allocation alive.
      stored.payload =
          value.is_null() && encoding == Encoding::kCompact ? shared_null() : value_ptr;
      if (encoding == Encoding::kKeep) {
        stored.encoded = encode_value(value);
        bytes = stored.encoded.size();
      } else {
        bytes = encoded_size(value);
      }
    }
    total_bytes += bytes;
    sink.add_ref(channel, ValueRef{self, self, value.is_array() ? value.size() : 0, 0, bytes});
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
    void add_ref(const std::string& channel, ValueRef ref) override {
      plan_.refs.emplace_hint(plan_.refs.end(), channel, std::move(ref));
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
    refs.emplace(channel, ValueRef{item[0].get<std::string>(), item[1].get<std::string>(),
                                   item[2].get<std::size_t>(), item[3].get<std::uint64_t>(),
                                   item[4].get<std::uint64_t>()});
  }
  return refs;
}

}  // namespace tollgate::checkpoint_internal
