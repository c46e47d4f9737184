// ChatMessages: a model request's conversation, shared with the thread's history instead of
// copied from it.
#include <stdexcept>
#include <utility>

#include "tollgate/chat_model.h"
#include "tollgate/error.h"

namespace tollgate {
namespace {

const JsonPtr& empty_list() {
  static const JsonPtr kEmpty = make_json_ptr(Json::array());
  return kEmpty;
}

JsonPtr checked_list(JsonPtr messages) {
  if (!messages || messages->is_null()) return empty_list();
  if (!messages->is_array()) {
    throw Error::InvalidArgument(std::string("messages: must be an array of message objects, got ") +
                                 messages->type_name());
  }
  return messages;
}

}  // namespace

ChatMessages::ChatMessages() : list_(empty_list()), items_(&list_->get_ref<const Json::array_t&>()) {}

ChatMessages::ChatMessages(Json messages) : ChatMessages(make_json_ptr(std::move(messages))) {}

ChatMessages::ChatMessages(JsonPtr messages)
    : list_(checked_list(std::move(messages))), items_(&list_->get_ref<const Json::array_t&>()) {}

ChatMessages::ChatMessages(JsonPtr first, const ChatMessages& rest)
    : first_(std::move(first)), list_(rest.list_), items_(rest.items_) {
  if (rest.first_) {  // two leading messages: keep one shared list by building it once
    Json all = Json::array();
    all.push_back(*rest.first_);
    for (const Json& message : *rest.items_) all.push_back(message);
    list_ = make_json_ptr(std::move(all));
    items_ = &list_->get_ref<const Json::array_t&>();
  }
}

const Json& ChatMessages::at(std::size_t index) const {
  if (index >= size()) {
    throw std::out_of_range("ChatMessages::at: index " + std::to_string(index) + " of " +
                            std::to_string(size()));
  }
  return (*this)[index];
}

Json ChatMessages::to_json() const {
  Json all = Json::array();
  auto& items = all.get_ref<Json::array_t&>();
  items.reserve(size());
  for (const Json& message : *this) items.push_back(message);
  return all;
}

}  // namespace tollgate
