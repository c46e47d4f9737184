// The offline demo model: no network, no randomness. It recognises a handful of request shapes
// and turns them into calls of the demo tools, so the human-in-the-loop flow can be tried
// without any provider account. Anything else gets a plain explanation of what it can do.
// The request shapes are RE2 patterns: linear in the message, however long or odd it is.
#include <re2/re2.h>

#include <cctype>
#include <optional>
#include <set>
#include <string_view>

#include "core/hex.h"
#include "demo/demo_model.h"
#include "models/ai_message.h"

namespace tollgate {
namespace {

constexpr const char* kModelName = "demo";
constexpr const char* kIntroduction =
    "I am the offline demo model (no LLM provider is configured), so I only understand a few "
    "kinds of request.";

struct PlannedCall {
  std::string tool;
  Json args;
};

// FNV-1a over the conversation: equal conversations get equal ids, different ones differ.
// The bytes hashed are those of the conversation dumped as one JSON array.
std::string conversation_hash(const ChatMessages& messages) {
  std::uint64_t hash = 1469598103934665603ULL;
  const auto feed = [&hash](std::string_view bytes) {
    for (unsigned char c : bytes) {
      hash ^= c;
      hash *= 1099511628211ULL;
    }
  };
  feed("[");
  for (std::size_t i = 0; i < messages.size(); ++i) {
    if (i > 0) feed(",");
    feed(messages[i].dump());
  }
  feed("]");
  std::string out;
  core::append_hex(out, hash, 16);
  return out;
}

std::string lowercase(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string trim_punctuation(std::string s) {
  const char* strip = " \t\n\"'`.,;:!?";
  size_t b = s.find_first_not_of(strip);
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(strip);
  return s.substr(b, e - b + 1);
}

std::string title_case(const std::string& s) {
  std::string out = s;
  bool start = true;
  for (auto& c : out) {
    if (std::isalpha(static_cast<unsigned char>(c))) {
      if (start) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      start = false;
    } else {
      start = c == ' ' || c == '-';
    }
  }
  return out;
}

long count_words(const std::string& text) {
  long words = 0;
  bool in_word = false;
  for (unsigned char c : text) {
    const bool space = std::isspace(c) != 0;
    if (!space && !in_word) ++words;
    in_word = !space;
  }
  return words;
}

RE2::Options pattern_options(bool case_sensitive) {
  RE2::Options options;
  options.set_case_sensitive(case_sensitive);
  options.set_log_errors(false);
  return options;
}

class DemoChatModel final : public ChatModel {
 public:
  DemoChatModel()
      : sql_(R"(run\s+sql\s*:?\s*(.+))", pattern_options(false)),
        select_(R"(^\s*((?:select|insert|update|delete\s+from|create|drop|with)\s.+))",
                pattern_options(false)),
        how_many_(R"(how\s+many\s+([a-z_][a-z0-9_]*))", pattern_options(false)),
        email_address_(R"(([A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}))",
                       pattern_options(true)),
        email_topic_(R"(\b(?:about|regarding|re:)\s+(.+))", pattern_options(false)),
        delete_(R"(\b(?:delete|remove|erase)\s+(?:the\s+)?(?:file\s+)?([^\s]+))",
                pattern_options(false)),
        write_(
            R"(\b(?:write|save|put)\s+(.+?)\s+(?:to|into|in)\s+(?:the\s+)?(?:file\s+)?([^\s]+)\s*$)",
            pattern_options(false)),
        create_(
            R"(\bcreate\s+(?:a\s+)?(?:the\s+)?(?:file\s+)?([^\s]+)\s+(?:with|containing)\s+(?:the\s+)?(?:content\s+|text\s+)?(.+))",
            pattern_options(false)),
        read_(
            R"(\b(?:read|show|open|cat|display|print)\s+(?:me\s+)?(?:the\s+)?(?:file\s+)?(?:contents\s+of\s+)?([^\s]+))",
            pattern_options(false)),
        weather_(R"(\bweather\b.*?\b(?:in|for|at)\s+([A-Za-z][A-Za-z .'-]*))",
                 pattern_options(false)),
        flight_(R"(\b(?:book|find|get)\b.*?\bflights?\b.*?\bto\s+([A-Za-z][A-Za-z .'-]*?)(?:\s+from\s+([A-Za-z][A-Za-z .'-]*))?\s*[.!?]*$)",
                pattern_options(false)),
        task_(R"(\b(?:ask|have|let|get)\s+(?:the\s+)?([A-Za-z0-9_-]+)\s+(?:sub)?agent\s+(?:to\s+)?(.+))",
              pattern_options(false)),
        list_(R"(^\s*(?:please\s+)?(?:list|ls|show)\s+(?:me\s+)?(?:the\s+|all\s+)?files\b(?:\s+in\s+([^\s]+))?)",
              pattern_options(false)) {}

  std::string name() const override { return kModelName; }

  Json invoke(const ChatRequest& request, const TokenCallback* on_chunk) override {
    const ChatMessages& messages = request.messages;
    std::set<std::string> tools;
    for (const auto& tool : request.tools) tools.insert(tool.name);

    const std::string hash = conversation_hash(messages);
    Json message = models::empty_ai_message("demo-" + hash);
    std::optional<PlannedCall> call;
    std::string text;

    // Which messages come after the last AI turn decides what we answer.
    size_t last_ai = messages.size();
    for (size_t i = messages.size(); i-- > 0;) {
      if (messages[i].is_object() && models::message_type(messages[i], i) == "ai") {
        last_ai = i;
        break;
      }
    }
    const bool answering_tools =
        !messages.empty() && models::message_type(messages.back(), messages.size() - 1) == "tool";
    if (answering_tools) {
      text = summarise_tool_results(messages, last_ai == messages.size() ? 0 : last_ai + 1);
    } else {
      std::string said;
      for (size_t i = messages.size(); i-- > 0;) {
        if (models::message_type(messages[i], i) == "human") {
          said = models::content_text(messages[i].value("content", Json("")));
          break;
        }
      }
      call = plan(said, tools);
      if (call) fit_to_offered_tools(*call, request.tools);
      if (call && !tools.count(call->tool)) {
        text = std::string(kIntroduction) + " Your request needs the " + call->tool +
               " tool, which is not available here. " + capabilities(tools);
        call.reset();
      } else if (!call) {
        text = std::string(kIntroduction) + " " + capabilities(tools);
      }
    }

    message["content"] = call ? "" : text;
    if (call) {
      message["tool_calls"].push_back({{"id", "call_demo_" + hash.substr(0, 12)},
                                       {"name", call->tool},
                                       {"args", call->args},
                                       {"type", "tool_call"}});
    }
    long input_tokens = 0;
    for (const auto& m : messages) {
      input_tokens += count_words(models::content_text(m.value("content", Json(""))));
    }
    const long output_tokens =
        call ? 1 + static_cast<long>(call->args.dump().size() / 4) : count_words(text);
    message["response_metadata"] = {{"model_name", kModelName},
                                    {"model_provider", kModelName},
                                    {"finish_reason", call ? "tool_calls" : "stop"}};
    message["usage_metadata"] = {{"input_tokens", input_tokens},
                                 {"output_tokens", output_tokens},
                                 {"total_tokens", input_tokens + output_tokens},
                                 {"input_token_details", Json::object()},
                                 {"output_token_details", Json::object()}};
    if (on_chunk != nullptr && *on_chunk) models::stream_message_as_chunks(message, *on_chunk);
    return message;
  }

 private:
  std::optional<PlannedCall> plan(const std::string& said,
                                  const std::set<std::string>& tools) const {
    std::string a;
    std::string b;
    if (tools.count("task") && RE2::PartialMatch(said, task_, &a, &b)) {
      return PlannedCall{"task", {{"description", trim_punctuation(b)}, {"subagent_type", a}}};
    }
    if (tools.count("ls") && RE2::PartialMatch(said, list_, &a)) {
      return PlannedCall{"ls", {{"path", a.empty() ? "/" : trim_punctuation(a)}}};
    }
    if (RE2::PartialMatch(said, sql_, &a)) {
      return PlannedCall{"execute_sql", {{"query", trim_punctuation(a)}}};
    }
    if (RE2::PartialMatch(said, select_, &a)) {
      while (!a.empty() && std::isspace(static_cast<unsigned char>(a.back()))) a.pop_back();
      return PlannedCall{"execute_sql", {{"query", a}}};
    }
    if (RE2::PartialMatch(said, how_many_, &a)) {
      std::string table = lowercase(a);
      if (table == "user" || table == "users" || table == "people") table = "users";
      return PlannedCall{"execute_sql", {{"query", "SELECT COUNT(*) FROM " + table + ";"}}};
    }
    const std::string lower = lowercase(said);
    if (RE2::PartialMatch(said, email_address_, &a) &&
        (lower.find("email") != std::string::npos || lower.find("mail") != std::string::npos ||
         lower.find("send") != std::string::npos || lower.find("write to") != std::string::npos)) {
      const std::string to = a;
      std::string topic = "a quick note";
      if (RE2::PartialMatch(said, email_topic_, &b)) topic = trim_punctuation(b);
      std::string subject = topic;
      if (!subject.empty())
        subject[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(subject[0])));
      return PlannedCall{
          "send_email",
          {{"to", to},
           {"subject", subject},
           {"body", "Hello,\n\nI am writing to you about " + topic + ".\n\nBest regards"}}};
    }
    if (RE2::PartialMatch(said, delete_, &a)) {
      return PlannedCall{"delete_file", {{"path", trim_punctuation(a)}}};
    }
    if (RE2::PartialMatch(said, create_, &a, &b)) {
      return PlannedCall{"write_file",
                         {{"path", trim_punctuation(a)}, {"content", trim_punctuation(b)}}};
    }
    if (RE2::PartialMatch(said, write_, &a, &b)) {
      return PlannedCall{"write_file",
                         {{"path", trim_punctuation(b)}, {"content", trim_punctuation(a)}}};
    }
    if (RE2::PartialMatch(said, read_, &a)) {
      const std::string path = trim_punctuation(a);
      if (path.find('.') != std::string::npos || path.find('/') != std::string::npos) {
        return PlannedCall{"read_file", {{"path", path}}};
      }
    }
    if (RE2::PartialMatch(said, flight_, &a, &b)) {
      Json args{{"to", title_case(trim_punctuation(a))}};
      if (!b.empty()) args["from"] = title_case(trim_punctuation(b));
      return PlannedCall{"book_flight", args};
    }
    if (RE2::PartialMatch(said, weather_, &a)) {
      std::string city = trim_punctuation(a);
      // "weather in Paris today" -> "Paris": stop at common trailing words.
      static const char* const kStopWords[] = {" today", " tomorrow", " now", " right",
                                               " this",  " please",   " like"};
      const std::string city_lower = lowercase(city);
      size_t cut = city.size();
      for (const char* word : kStopWords) {
        if (size_t pos = city_lower.find(word); pos != std::string::npos && pos < cut) cut = pos;
      }
      city = trim_punctuation(city.substr(0, cut));
      if (!city.empty()) return PlannedCall{"weather_search", {{"city", title_case(city)}}};
    }
    return std::nullopt;
  }

  // The file tools of a deep agent (create_deep_agent) take absolute "file_path"s and name the
  // deletion "delete": a call planned for the demo tools is rewritten to what is offered.
  static void fit_to_offered_tools(PlannedCall& call, const std::vector<ToolSpec>& offered) {
    const auto find = [&offered](const std::string& name) -> const ToolSpec* {
      for (const auto& tool : offered) {
        if (tool.name == name) return &tool;
      }
      return nullptr;
    };
    if (call.tool == "delete_file" && find("delete_file") == nullptr && find("delete") != nullptr)
      call.tool = "delete";
    const ToolSpec* tool = find(call.tool);
    if (tool == nullptr || !call.args.contains("path")) return;
    const Json& properties = tool->parameters.value("properties", Json::object());
    if (properties.contains("path") || !properties.contains("file_path")) return;
    std::string path = call.args["path"].get<std::string>();
    if (path.empty() || path[0] != '/') path = "/" + path;
    call.args.erase("path");
    call.args["file_path"] = path;
  }

  static std::string summarise_tool_results(const ChatMessages& messages, size_t from) {
    std::string text;
    for (size_t i = from; i < messages.size(); ++i) {
      const Json& m = messages[i];
      if (models::message_type(m, i) != "tool") continue;
      const std::string tool = m.contains("name") && m["name"].is_string()
                                   ? m["name"].get<std::string>()
                                   : std::string("the tool");
      std::string result = models::content_text(m.value("content", Json("")));
      if (result.size() > 300) result = result.substr(0, 300) + "...";
      if (!text.empty()) text += " ";
      if (m.value("status", "") == "error") {
        text += "The " + tool + " call was rejected or failed, so it did not happen: " + result;
      } else {
        text += "Done: " + tool + " returned: " + result;
      }
    }
    return text.empty() ? "The tools have finished." : text;
  }

  static std::string capabilities(const std::set<std::string>& tools) {
    static const std::pair<const char*, const char*> kExamples[] = {
        {"weather_search", "\"what is the weather in Paris?\""},
        {"send_email", "\"email bob@example.com about the launch\""},
        {"read_file", "\"read notes.txt\""},
        {"write_file", "\"write hello to notes.txt\""},
        {"delete_file", "\"please delete notes.txt\""},
        {"delete", "\"please delete notes.txt\""},
        {"execute_sql", "\"run SQL: SELECT * FROM users\" or \"how many users are there?\""},
        {"book_flight", "\"book a flight to Lisbon\""},
        {"ls", "\"list the files\""},
        {"task", "\"ask the general-purpose agent to write a summary to /summary.txt\""},
    };
    std::string list;
    for (const auto& [tool, example] : kExamples) {
      if (!tools.count(tool)) continue;
      if (!list.empty()) list += "; ";
      list += example;
    }
    if (list.empty()) {
      return "No demo tools are available in this conversation, so I can only chat. Configure a "
             "real model (for example openai:gpt-4o-mini) for anything more.";
    }
    return "Try: " + list +
           ". Configure a real model (for example openai:gpt-4o-mini) for "
           "anything more.";
  }

  const RE2 sql_, select_, how_many_, email_address_, email_topic_, delete_, write_, create_, read_,
      weather_, flight_, task_, list_;
};

}  // namespace

std::unique_ptr<ChatModel> make_demo_model() {
  return std::make_unique<DemoChatModel>();
}

ModelOptions with_demo_model(ModelOptions options) {
  options.providers["demo"] = [](const std::string&) { return make_demo_model(); };
  return options;
}

}  // namespace tollgate
