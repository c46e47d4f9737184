#include "tollgate/json_parse.h"

#include <string>
#include <utility>
#include <vector>

#include "tollgate/error.h"

namespace tollgate {
namespace {

// Builds the tree the way nlohmann's own DOM parser does (a later duplicate key wins), and
// counts the open arrays and objects: the first one beyond the limit stops the parse before
// anything is built for it. nlohmann's parser itself keeps its nesting on the heap, so only
// the tree could be deep, and this is where it is refused.
class BoundedTreeBuilder {
 public:
  BoundedTreeBuilder(Json& root, std::size_t max_depth) : root_(root), max_depth_(max_depth) {}

  bool null() { return put(nullptr); }
  bool boolean(bool value) { return put(value); }
  bool number_integer(Json::number_integer_t value) { return put(value); }
  bool number_unsigned(Json::number_unsigned_t value) { return put(value); }
  bool number_float(Json::number_float_t value, const Json::string_t&) { return put(value); }
  bool string(Json::string_t& value) { return put(std::move(value)); }
  bool binary(Json::binary_t& value) { return put(Json::binary(std::move(value))); }
  bool start_object(std::size_t) { return open(Json::value_t::object); }
  bool start_array(std::size_t) { return open(Json::value_t::array); }
  bool key(Json::string_t& name) {
    key_ = std::move(name);
    return true;
  }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool parse_error(std::size_t, const std::string&, const Json::exception& error) {
    error_ = error.what();
    return false;
  }

  bool too_deep() const { return too_deep_; }
  const std::string& error() const { return error_; }

 private:
  // Places a value where the parser is: the root, the next array element, or the member
  // named by the last key.
  Json& place(Json value) {
    if (open_.empty()) {
      root_ = std::move(value);
      return root_;
    }
    Json& parent = *open_.back();
    if (parent.is_array()) {
      auto& array = parent.get_ref<Json::array_t&>();
      array.push_back(std::move(value));
      return array.back();
    }
    Json& member = parent.get_ref<Json::object_t&>()[std::move(key_)];
    member = std::move(value);
    return member;
  }
  bool put(Json value) {
    place(std::move(value));
    return true;
  }
  bool open(Json::value_t type) {
    if (open_.size() >= max_depth_) {
      too_deep_ = true;
      return false;
    }
    open_.push_back(&place(Json(type)));
    return true;
  }
  bool close() {
    open_.pop_back();
    return true;
  }

  Json& root_;
  const std::size_t max_depth_;
  std::vector<Json*> open_;  // the arrays and objects not yet closed, outermost first
  Json::string_t key_;
  bool too_deep_ = false;
  std::string error_;
};

}  // namespace

Json parse_json(std::string_view text, std::string_view subject, std::size_t max_depth) {
  Json root;
  BoundedTreeBuilder builder(root, max_depth);
  if (Json::sax_parse(text.begin(), text.end(), &builder)) return root;
  if (builder.too_deep()) {
    throw Error::InvalidArgument(std::string(subject) + " nests deeper than " +
                                 std::to_string(max_depth) + " levels");
  }
  throw Error::InvalidArgument(std::string(subject) + " is not valid JSON: " + builder.error());
}

Json try_parse_json(std::string_view text, std::size_t max_depth) {
  Json root;
  BoundedTreeBuilder builder(root, max_depth);
  if (Json::sax_parse(text.begin(), text.end(), &builder)) return root;
  return Json(Json::value_t::discarded);
}

}  // namespace tollgate
