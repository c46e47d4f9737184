// Chat models: the one interface the agent loop talks to, whatever answers behind it — a real
// provider over HTTP (OpenAI-compatible, Anthropic, Gemini, Ollama), a scripted model for tests,
// or one the application provides (the executable's offline demo model).
//
// Messages in and out are LangChain message dicts (see AGENT_SERVER_API.md §3): the request
// holds {"type":"human"|"ai"|"tool"|"system", "content", ...} objects (the OpenAI "role" style
// is accepted too) and invoke() returns one AI message dict:
//   {"type":"ai","id","content","tool_calls":[{"id","name","args","type":"tool_call"}],
//    "invalid_tool_calls":[],"additional_kwargs":{},
//    "response_metadata":{"model_name","finish_reason"},"usage_metadata":{...}}
#pragma once

#include <chrono>
#include <compare>
#include <cstddef>
#include <iterator>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tollgate/json.h"

namespace tollgate {

// A tool the model may call. `parameters` is the JSON Schema of the tool's argument object.
struct ToolSpec {
  std::string name;
  std::string description;
  Json parameters = Json::object();
};

// The conversation a model is asked to continue, read like a JSON array of message dicts: an
// optional first message (the agent's system prompt) followed by a shared, immutable list. Copying
// one copies two pointers, never the messages, so an agent hands a thread's whole history to its
// model without copying it: a model call costs the same after 4,000 messages as after 4.
// Build one from a JSON array (implicitly) or from a shared list (`JsonPtr`).
class ChatMessages {
 public:
  class const_iterator {
   public:
    using iterator_category = std::random_access_iterator_tag;
    using value_type = Json;
    using difference_type = std::ptrdiff_t;
    using pointer = const Json*;
    using reference = const Json&;

    const_iterator() = default;
    const_iterator(const ChatMessages* owner, std::size_t index) : owner_(owner), index_(index) {}
    reference operator*() const { return (*owner_)[index_]; }
    pointer operator->() const { return &(*owner_)[index_]; }
    reference operator[](difference_type n) const { return *(*this + n); }
    const_iterator& operator++() { ++index_; return *this; }
    const_iterator operator++(int) { const_iterator old = *this; ++index_; return old; }
    const_iterator& operator--() { --index_; return *this; }
    const_iterator operator--(int) { const_iterator old = *this; --index_; return old; }
    const_iterator& operator+=(difference_type n) { index_ += static_cast<std::size_t>(n); return *this; }
    const_iterator& operator-=(difference_type n) { index_ -= static_cast<std::size_t>(n); return *this; }
    friend const_iterator operator+(const_iterator it, difference_type n) { return it += n; }
    friend const_iterator operator+(difference_type n, const_iterator it) { return it += n; }
    friend const_iterator operator-(const_iterator it, difference_type n) { return it -= n; }
    friend difference_type operator-(const const_iterator& a, const const_iterator& b) {
      return static_cast<difference_type>(a.index_) - static_cast<difference_type>(b.index_);
    }
    friend bool operator==(const const_iterator& a, const const_iterator& b) {
      return a.index_ == b.index_;
    }
    friend auto operator<=>(const const_iterator& a, const const_iterator& b) {
      return a.index_ <=> b.index_;
    }

   private:
    const ChatMessages* owner_ = nullptr;
    std::size_t index_ = 0;
  };

  ChatMessages();
  // A JSON array of message dicts (null reads as empty). Throws kInvalidArgument for any other
  // JSON value.
  ChatMessages(Json messages);  // NOLINT(google-explicit-constructor): reads like a JSON array
  // Shares `messages` (an array; null pointer or null value read as empty).
  explicit ChatMessages(JsonPtr messages);
  // `first` (e.g. a system message), then the messages of `rest`.
  ChatMessages(JsonPtr first, const ChatMessages& rest);
  // Copies share the messages. There are no move operations on purpose: a "move" copies the
  // two pointers too, so a list moved from stays whole and readable.
  ChatMessages(const ChatMessages&) = default;
  ChatMessages& operator=(const ChatMessages&) = default;
  ~ChatMessages() = default;

  std::size_t size() const noexcept { return (first_ ? 1 : 0) + items_->size(); }
  bool empty() const noexcept { return size() == 0; }
  const Json& operator[](std::size_t index) const {
    if (first_) {
      if (index == 0) return *first_;
      --index;
    }
    return (*items_)[index];
  }
  const Json& at(std::size_t index) const;  // throws std::out_of_range
  const Json& front() const { return (*this)[0]; }
  const Json& back() const { return (*this)[size() - 1]; }
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, size()}; }

  // A copy as one JSON array (for logging, tests, or a model that needs the whole value).
  Json to_json() const;

 private:
  JsonPtr first_;                  // null when there is no first message
  JsonPtr list_;                   // never null; an array
  const Json::array_t* items_;     // list_'s elements
};

// One model call. `options` overrides the model's defaults for this call only; recognised keys:
// "temperature" (number), "max_tokens" (integer), "stop" (array of strings).
struct ChatRequest {
  ChatMessages messages;
  std::vector<ToolSpec> tools;
  Json options = Json::object();
};

// Receives AI message chunks while a reply streams: {"type":"ai","id":<same id as the final
// message>,"content":"<delta>","tool_call_chunks":[{"index","id","name","args":"<fragment>",
// "type":"tool_call_chunk"}],...}. The chunks feed LangGraph's `messages` stream mode. Called on
// the invoking thread; an exception thrown by the callback aborts the call and propagates.
using TokenCallback = std::function<void(const Json& ai_message_chunk)>;

// Thread-safety: every implementation is safe to invoke concurrently from several runs.
class ChatModel {
 public:
  virtual ~ChatModel() = default;

  // Sends the conversation and returns the model's AI message dict. With `on_chunk` the reply is
  // streamed (provider streaming APIs) and each delta is passed to the callback before the
  // assembled message is returned. Throws tollgate::Error: kInvalidArgument for requests the
  // provider refuses (HTTP 400/404/422) or bad messages, kUnavailable when the provider cannot be
  // reached, refuses the credentials (401/403), or keeps failing (429/5xx) after the retries.
  virtual Json invoke(const ChatRequest& request, const TokenCallback* on_chunk = nullptr) = 0;

  // "provider:model", e.g. "openai:gpt-4o-mini", "demo".
  virtual std::string name() const = 0;
};

// A provider the application brings, e.g. the offline demo model of the `tollgate` executable
// (src/demo/demo_model.h). It gets the whole spec ("demo", "demo:anything").
using ModelProvider = std::function<std::unique_ptr<ChatModel>(const std::string& spec)>;

// Construction options of init_chat_model. Everything has a sensible default; empty strings
// mean "take it from the environment or the provider's default".
struct ModelOptions {
  std::string api_key;   // default: the provider's environment variable (OPENAI_API_KEY, ...)
  std::string base_url;  // default: <PROVIDER>_BASE_URL (OLLAMA_HOST for ollama), else public URL
  std::map<std::string, std::string> headers;  // extra HTTP headers sent with every request

  std::optional<double> temperature;
  std::optional<int> max_tokens;  // Anthropic requires one; it defaults to 4096 there

  std::chrono::milliseconds timeout{120000};         // whole request, streams included
  std::chrono::milliseconds connect_timeout{10000};  // TCP + TLS set-up
  int max_retries = 2;                               // extra attempts on 429/5xx/connection errors
  std::chrono::milliseconds initial_backoff{500};    // doubled after each failed attempt
  std::chrono::milliseconds max_backoff{20000};      // cap for backoff and for Retry-After

  // For the "scripted" spec: an array of replies (ScriptedChatModel, one shared counter) or a
  // conversation script object (ScriptedConversationModel, safe to share between threads).
  Json script = Json::array();
  // For the "scripted" spec: a JSON file holding the script; when set it wins over `script`.
  std::string script_file;

  // Providers beyond the built-in ones, by name: a spec "NAME" or "NAME:..." is built by
  // providers[NAME] (which wins over a built-in provider of that name).
  std::map<std::string, ModelProvider> providers;

  // Injection points for tests; null means the real thing.
  std::function<std::optional<std::string>(const std::string& name)> getenv;
  std::function<void(std::chrono::milliseconds)> sleep;
};

// Resolves "provider:model" to a model:
//   openai:<model>        Chat Completions (OPENAI_API_KEY, OPENAI_BASE_URL); with a base URL and
//                         no key it talks to any OpenAI-compatible server (vLLM, llama.cpp, ...)
//   openrouter:, fireworks:, baseten:   OpenAI-compatible hosted services with their own keys
//   anthropic:<model>     Messages API (ANTHROPIC_API_KEY)
//   google_genai:<model>  Gemini generateContent (GOOGLE_API_KEY or GEMINI_API_KEY)
//   ollama:<model>        /api/chat (OLLAMA_HOST, default http://localhost:11434)
//   scripted              a scripted model: options.script_file or options.script; an array
//                         of replies gives a ScriptedChatModel, a {"conversations": [...]} object
//                         a ScriptedConversationModel
// A bare model name infers its provider ("gpt-…"/"o1…" openai, "claude…" anthropic,
// "gemini…" google_genai). A name in options.providers is built by that provider. An empty spec
// uses TOLLGATE_MODEL, else "demo" — the offline demo model, which is not part of the library:
// the `tollgate` executable and the examples provide it (src/demo/demo_model.h).
// Throws kInvalidArgument for an unknown provider (including "demo" when nobody provides it)
// or a missing API key.
std::unique_ptr<ChatModel> init_chat_model(const std::string& spec,
                                           const ModelOptions& options = {});

// A model that returns `replies` in turn: each is plain text or an AI message dict (missing
// fields are filled in; ids are deterministic: "scripted-<n>", tool calls "call_<n>_<i>"). The
// content is streamed as word chunks and tool calls as tool_call_chunks. Once the script is
// exhausted invoke() throws kInternal. Records every request for inspection. The replies are
// taken in turn by every caller, so one instance scripts one conversation; a server with many
// threads wants ScriptedConversationModel.
class ScriptedChatModel : public ChatModel {
 public:
  explicit ScriptedChatModel(std::vector<Json> replies, std::string model_name = "scripted");
  ~ScriptedChatModel() override;

  Json invoke(const ChatRequest& request, const TokenCallback* on_chunk = nullptr) override;
  std::string name() const override;

  // The requests received so far (copies), oldest first.
  std::vector<ChatRequest> requests() const;
  size_t remaining() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// A scripted model for servers and tests with many threads: the reply is chosen from the
// conversation it is given, never from a counter, so one instance serves any number of threads
// and runs (and a resumed run gets the same reply again). The script (JSON):
//   {"conversations": [
//      {"match": "email",          // case-insensitive substring of the human message ("" = any)
//       "replies": [{"content": "I will email Bob.",
//                    "tool_calls": [{"name": "send_email", "args": {"to": "bob@example.com"}}]},
//                   "Done: {tool_results}"]},
//      {"regex": "delete (\\S+)",  // or an RE2 regular expression searched in it
//       "replies": [...]}],
//    "fallback": "No script for that."}   // optional
// The human message is the latest one in the request: each turn of a thread is matched on its
// own. The first conversation that matches answers with replies[k], where k is the number of AI
// messages after that human message (0 for the first model call of the turn, 1 after the tool
// results came back, ...). Replies are text or AI message dicts as for ScriptedChatModel; in
// their text {tool_results} becomes the contents of the tool messages that end the request
// (joined by a space) and {human} the human message. With no matching conversation, or no
// reply k, the answer is the fallback text (default: a sentence naming what the script lacks)
// without tool calls, so the run ends cleanly. Ids: "scripted-<n>" with n = 1 + the number of AI
// messages in the request, tool calls "call_<n>_<i>" — unique within a thread, and the same
// for the same conversation. Content streams as word chunks.
// Throws kInvalidArgument from the constructor for a malformed script, naming the field
// ("script.conversations[1].regex: ...").
// Thread-safety: immutable after construction; invoke() may run concurrently.
class ScriptedConversationModel : public ChatModel {
 public:
  explicit ScriptedConversationModel(const Json& script, std::string model_name = "scripted");
  ~ScriptedConversationModel() override;

  Json invoke(const ChatRequest& request, const TokenCallback* on_chunk = nullptr) override;
  std::string name() const override;

 private:
  struct Script;
  std::unique_ptr<const Script> script_;
};

}  // namespace tollgate
