// Helpers shared by every ChatModel implementation: reading LangChain message dicts and building
// the AI message (and its streamed chunks) a model returns.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "tollgate/chat_model.h"

namespace tollgate::models {

// The normalised type of messages[index]: "human", "ai", "system" or "tool" (every form
// tollgate::message_type accepts; "developer" counts as system). Throws kInvalidArgument naming
// the field for anything else.
std::string message_type(const Json& message, size_t index);

// The plain text of a content value (tollgate::content_text).
std::string content_text(const Json& content);

// A fresh unique id with the given prefix: "<prefix><uuid4>".
std::string random_id(std::string_view prefix);

// An empty AI message dict with the given id (all fields present, as LangChain serialises them).
Json empty_ai_message(const std::string& id);

// Streams a finished AI message as chunks with its id: the text as word pieces (each word with
// the whitespace after it), each tool call as one tool_call_chunk, then a closing chunk with the
// response and usage metadata. Used by the models that know their whole reply up front.
void stream_message_as_chunks(const Json& message, const TokenCallback& on_chunk);

// Assembles one AI message from provider deltas and, when a callback is given, emits each delta
// as an AI message chunk with the same id. Tool call arguments arrive as JSON text fragments per
// index; finish() parses them (unparsable ones become invalid_tool_calls). Not thread-safe: one
// builder per model call.
class AiMessageBuilder {
 public:
  AiMessageBuilder(std::string id, std::string provider, std::string model_name,
                   const TokenCallback* on_chunk);

  void add_text(std::string_view delta);
  // Starts (or names) the tool call at `index`; empty id/name leave earlier values in place.
  void start_tool_call(int index, const std::string& id, const std::string& name);
  void add_tool_args(int index, std::string_view fragment);
  // A tool call that arrives whole (Gemini, Ollama); a missing id gets a fresh one. Returns the
  // id used.
  std::string add_complete_tool_call(const std::string& id, const std::string& name,
                                     const Json& args);

  void set_finish_reason(const std::string& reason) { finish_reason_ = reason; }
  const std::string& finish_reason() const { return finish_reason_; }
  void set_usage(long input_tokens, long output_tokens, Json input_details = Json::object(),
                 Json output_details = Json::object());
  void set_metadata(const std::string& key, Json value) { extra_metadata_[key] = std::move(value); }
  // Provider data the next request must send back (kept in the message's additional_kwargs).
  Json& additional_kwargs() { return additional_kwargs_; }
  bool has_tool_calls() const { return !tool_calls_.empty(); }

  // The assembled AI message. When streaming, first emits a closing chunk that carries the
  // response and usage metadata.
  Json finish();

 private:
  struct PendingToolCall {
    std::string id;
    std::string name;
    std::string args;
  };
  void emit(Json chunk);
  Json chunk_skeleton() const;
  Json response_metadata() const;

  std::string id_;
  std::string provider_;
  std::string model_name_;
  const TokenCallback* on_chunk_;
  std::string content_;
  std::map<int, PendingToolCall> tool_calls_;
  std::string finish_reason_;
  Json usage_;
  Json extra_metadata_ = Json::object();
  Json additional_kwargs_ = Json::object();
};

}  // namespace tollgate::models
