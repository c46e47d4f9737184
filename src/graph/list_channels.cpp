// List channels: append (concatenation) and add_messages (id-aware message merge).
//
// Both keep their list in copy-on-write storage and change it in place while nobody else
// holds it, so a step costs what was written, not the length of the list. Both track the
// lowest position changed since the last mark_saved()/restore(), which lets a saver store a
// step as a ListDelta instead of the whole list.
#include <algorithm>
#include <iterator>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "graph/channel.h"
#include "graph/copy_on_write_json.h"
#include "graph/message_reducer.h"
#include "tollgate/error.h"

namespace tollgate::graph_internal {
namespace {

// What the two list channels share: storage, availability and delta tracking.
class ListChannel : public Channel {
 public:
  explicit ListChannel(std::string key) : key_(std::move(key)) {}

  // A list channel always holds a list (empty at first), as the reference's list-typed
  // reducer channels do.
  bool is_available() const override { return true; }
  JsonPtr get() const override { return list_.shared(); }

  std::optional<ListDelta> delta_since_saved() const override {
    const Json::array_t& items = items_view();
    const std::size_t keep = std::min(changed_from_, items.size());
    ListDelta delta;
    delta.keep = keep;
    delta.appended.get_ref<Json::array_t&>().assign(
        items.begin() + static_cast<std::ptrdiff_t>(keep), items.end());
    return delta;
  }
  void mark_saved() override { changed_from_ = items_view().size(); }

  std::optional<std::size_t> unchanged_since_shown() const override {
    return std::min(shown_from_, items_view().size());
  }
  void mark_shown() override { shown_from_ = items_view().size(); }
  void mark_shown_as_saved() override {
    shown_from_ = std::min(changed_from_, items_view().size());
  }

 protected:
  const Json::array_t& items_view() const { return list_.value().get_ref<const Json::array_t&>(); }
  Json::array_t& edit_items() { return list_.edit().get_ref<Json::array_t&>(); }
  void changed_from(std::size_t position) {
    changed_from_ = std::min(changed_from_, position);
    shown_from_ = std::min(shown_from_, position);
  }
  // A restored list is not known to share anything with the one shown last.
  void forget_shown() { shown_from_ = 0; }

  // Replaces the list; it counts as changed from position `changed_from` on.
  void replace(Json::array_t items, std::size_t changed_from = 0) {
    list_.assign(Json(std::move(items)));
    changed_from_ = changed_from;
    shown_from_ = std::min(shown_from_, changed_from);
  }
  // Shares a restored list; it counts as saved.
  void adopt(JsonPtr list) {
    list_.adopt(std::move(list));
    changed_from_ = items_view().size();
  }

  // The value of the step's overwrite write, if there is one; the other writes of the step
  // are then dropped, as in the reference. Two overwrites in one step are an error.
  std::optional<Json> take_overwrite(std::vector<Json>& writes) const {
    std::optional<Json> value;
    for (Json& write : writes) {
      if (const Json* inner = overwritten_value(write)) {
        if (value) {
          throw Error::InvalidArgument("At key '" + key_ +
                                       "': Can receive only one Overwrite value per super-step.");
        }
        value = std::move(*const_cast<Json*>(inner));  // `writes` is ours to consume
      }
    }
    return value;
  }

  const std::string& key() const { return key_; }

 private:
  std::string key_;
  CopyOnWriteJson list_{Json::array()};
  std::size_t changed_from_ = 0;  // lowest position changed since the last save
  std::size_t shown_from_ = 0;    // lowest position changed since the last mark_shown()
};

// --------------------------------------------------------------------------------- append

Json::array_t as_items(Json&& value) {
  if (value.is_array()) return std::move(value.get_ref<Json::array_t&>());
  if (value.is_null()) return {};
  return Json::array_t{std::move(value)};
}

class AppendChannel final : public ListChannel {
 public:
  using ListChannel::ListChannel;

  std::unique_ptr<Channel> clone_empty() const override {
    return std::make_unique<AppendChannel>(key());
  }

  bool update(std::vector<Json>&& writes) override {
    if (writes.empty()) return false;
    if (auto value = take_overwrite(writes)) {
      replace(as_items(std::move(*value)));
      return true;
    }
    Json::array_t& items = edit_items();
    changed_from(items.size());
    for (Json& write : writes) {
      if (write.is_array()) {
        Json::array_t& more = write.get_ref<Json::array_t&>();
        items.insert(items.end(), std::make_move_iterator(more.begin()),
                     std::make_move_iterator(more.end()));
      } else {
        items.push_back(std::move(write));
      }
    }
    return true;
  }

  void restore(JsonPtr value) override {
    forget_shown();
    if (!value) {
      replace({});
    } else if (value->is_array()) {
      adopt(std::move(value));
    } else {
      replace(Json::array_t{*value});
    }
  }
};

// --------------------------------------------------------------------------- add_messages

class AddMessagesChannel final : public ListChannel {
 public:
  using ListChannel::ListChannel;

  std::unique_ptr<Channel> clone_empty() const override {
    return std::make_unique<AddMessagesChannel>(key());
  }

  bool update(std::vector<Json>&& writes) override {
    if (writes.empty()) return false;
    if (auto value = take_overwrite(writes)) {
      std::vector<Json::array_t> coerced;
      coerced.push_back(coerce_messages(std::move(*value)));
      MessageIndex fresh;
      fresh.check_removals(coerced);
      Json::array_t messages;
      fresh.merge(messages, std::move(coerced.front()));
      replace(std::move(messages));
      index_ = std::move(fresh);
      indexed_ = true;
      return true;
    }
    if (!indexed_) {
      index_.index(items_view());
      indexed_ = true;
    }
    // Everything that can fail happens before the list is touched.
    std::vector<Json::array_t> coerced;
    coerced.reserve(writes.size());
    for (Json& write : writes) coerced.push_back(coerce_messages(std::move(write)));
    index_.check_removals(coerced);

    Json::array_t& messages = edit_items();
    for (Json::array_t& write : coerced) changed_from(index_.merge(messages, std::move(write)));
    return true;
  }

  void restore(JsonPtr value) override {
    forget_shown();
    if (!value) {
      replace({});
      index_ = MessageIndex();
      indexed_ = true;
    } else if (value->is_array() &&
               MessageIndex::all_canonical(value->get_ref<const Json::array_t&>())) {
      // Indexed at the first update: a state that is only read (get_state) needs no index.
      adopt(std::move(value));
      indexed_ = false;
    } else {
      // Not in canonical form (e.g. missing ids): normalise a copy once.
      Json::array_t messages =
          value->is_array() ? value->get_ref<const Json::array_t&>() : coerce_messages(*value);
      const std::size_t first_changed = index_.rebuild(messages);
      replace(std::move(messages), value->is_array() ? first_changed : 0);
      indexed_ = true;
    }
  }

  void restore_own(JsonPtr value) override {
    // A list this kind of channel held is canonical: taken as it is, indexed when updated.
    if (!value || !value->is_array()) return restore(std::move(value));
    forget_shown();
    adopt(std::move(value));
    indexed_ = false;
  }

 private:
  MessageIndex index_;
  bool indexed_ = true;  // index_ holds the list's ids (else update() makes it first)
};

}  // namespace

std::unique_ptr<Channel> make_append_channel(std::string key) {
  return std::make_unique<AppendChannel>(std::move(key));
}

std::unique_ptr<Channel> make_add_messages_channel(std::string key) {
  return std::make_unique<AddMessagesChannel>(std::move(key));
}

}  // namespace tollgate::graph_internal
