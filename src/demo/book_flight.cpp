// book_flight: a demo tool that asks the person through a form (a form card, formType
// "flight_booking") before it books anything, and books what the person approved.
#include "demo/book_flight.h"

#include <string>

#include "tollgate/error.h"
#include "tollgate/graph.h"

namespace tollgate {
namespace {

constexpr const char* kDefaultOrigin = "Berlin";

Json field(const char* name, const char* type, const char* label, Json extra = Json::object()) {
  Json f{{"name", name}, {"type", type}, {"label", label}};
  f.update(extra);
  return f;
}

std::string text_value(const Json& values, const char* name, const std::string& fallback = "") {
  const auto it = values.find(name);
  return it != values.end() && it->is_string() ? it->get<std::string>() : fallback;
}

}  // namespace

Json flight_booking_form(const std::string& from, const std::string& to) {
  return Json{
      {"formType", "flight_booking"},
      {"title", "Book a flight to " + to},
      {"context", {{"from", from}, {"to", to}, {"note", "Nothing is booked until you approve."}}},
      {"fields",
       Json::array({
           field("traveller", "text", "Traveller", {{"required", true}}),
           field("date", "date", "Departure date", {{"required", true}, {"default", "2027-01-15"}}),
           field("cabin", "select", "Cabin",
                 {{"options", Json::array({"economy", "premium", "business"})},
                  {"default", "economy"},
                  {"required", true}}),
           field("passengers", "number", "Passengers", {{"default", 1}, {"min", 1}, {"max", 9}}),
           field("budget", "currency", "Budget", {{"currency", "EUR"}, {"default", 400}}),
           field("window_seat", "checkbox", "Window seat", {{"default", true}}),
           field("notes", "textarea", "Notes for the agent"),
       })},
      {"responseSchema",
       {{"type", "object"},
        {"required", Json::array({"traveller", "date", "cabin"})},
        {"properties",
         {{"traveller", {{"type", "string"}, {"minLength", 1}}},
          {"date", {{"type", "string"}, {"format", "date"}}},
          {"cabin", {{"enum", Json::array({"economy", "premium", "business"})}}},
          {"passengers", {{"type", "integer"}, {"minimum", 1}, {"maximum", 9}}},
          {"budget", {{"type", "number"}, {"exclusiveMinimum", 0}}},
          {"window_seat", {{"type", "boolean"}}},
          {"notes", {{"type", "string"}}}}}}}};
}

Tool make_book_flight_tool() {
  const Json schema = Json::parse(R"json({"type": "object", "required": ["to"], "additionalProperties": false,
    "properties": {"to": {"type": "string", "description": "Destination city"},
                   "from": {"type": "string", "description": "Departure city (default Berlin)"}}})json");
  return Tool(
      "book_flight", "Books a flight after the person fills in and approves the booking form.",
      schema, [](const Json& args, const ToolContext& context) -> Json {
        const std::string to = args.at("to").get<std::string>();
        const std::string from = text_value(args, "from", kDefaultOrigin);
        if (context.runtime == nullptr) {
          throw Error::InvalidArgument("book_flight asks the person through a form: it runs only in a graph");
        }
        const Json answer = context.runtime->interrupt(flight_booking_form(from, to));
        if (!answer.is_object() || !answer.contains("approved") || !answer["approved"].is_boolean()) {
          throw Error::InvalidArgument(
              "the booking form's answer: expected {\"approved\": true or false, \"values\": {...}}");
        }
        if (!answer["approved"].get<bool>()) {
          return "The person declined the booking of a flight from " + from + " to " + to + ".";
        }
        const Json values = answer.value("values", Json::object());
        const std::string traveller = text_value(values, "traveller");
        const std::string date = text_value(values, "date");
        if (traveller.empty() || date.empty()) {
          throw Error::InvalidArgument("the booking form's answer: values.traveller and values.date are required");
        }
        const int passengers = values.value("passengers", 1);
        if (passengers < 1 || passengers > 9) {
          throw Error::InvalidArgument("the booking form's answer: values.passengers must be from 1 to 9");
        }
        std::string result = "Booked " + from + " to " + to + " on " + date + " for " + traveller + ", " +
                             text_value(values, "cabin", "economy") + ", " + std::to_string(passengers) +
                             (passengers == 1 ? " passenger" : " passengers");
        if (values.value("window_seat", false)) result += ", window seat";
        if (values.contains("budget") && values["budget"].is_number()) {
          result += ", budget " + Json(values["budget"]).dump() + " EUR";
        }
        result += ".";
        if (const std::string notes = text_value(values, "notes"); !notes.empty()) result += " Notes: " + notes;
        return result;
      });
}

}  // namespace tollgate
