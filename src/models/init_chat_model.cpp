// Resolves "provider:model" strings to chat models, reading keys and base URLs from the
// environment the way the LangChain integrations do.
#include <array>
#include <cstdlib>
#include <fstream>

#include "models/providers.h"
#include "tollgate/chat_model.h"
#include "tollgate/error.h"

namespace tollgate {
namespace {

enum class WireFormat { kOpenAi, kAnthropic, kGemini, kOllama };

struct ProviderInfo {
  const char* name;
  WireFormat format;
  std::array<const char*, 2> key_variables;  // first one set wins; nullptr = unused
  std::array<const char*, 2> base_url_variables;
  const char* default_base_url;
  bool needs_key;  // at the default URL; a custom base URL never needs one
};

constexpr ProviderInfo kProviders[] = {
    {"openai",
     WireFormat::kOpenAi,
     {"OPENAI_API_KEY", nullptr},
     {"OPENAI_BASE_URL", "OPENAI_API_BASE"},
     "https://api.openai.com/v1",
     true},
    {"openrouter",
     WireFormat::kOpenAi,
     {"OPENROUTER_API_KEY", nullptr},
     {"OPENROUTER_BASE_URL", nullptr},
     "https://openrouter.ai/api/v1",
     true},
    {"fireworks",
     WireFormat::kOpenAi,
     {"FIREWORKS_API_KEY", nullptr},
     {"FIREWORKS_BASE_URL", nullptr},
     "https://api.fireworks.ai/inference/v1",
     true},
    {"baseten",
     WireFormat::kOpenAi,
     {"BASETEN_API_KEY", nullptr},
     {"BASETEN_BASE_URL", nullptr},
     "https://inference.baseten.co/v1",
     true},
    {"anthropic",
     WireFormat::kAnthropic,
     {"ANTHROPIC_API_KEY", nullptr},
     {"ANTHROPIC_BASE_URL", nullptr},
     "https://api.anthropic.com",
     true},
    {"google_genai",
     WireFormat::kGemini,
     {"GOOGLE_API_KEY", "GEMINI_API_KEY"},
     {"GOOGLE_GENAI_BASE_URL", "GEMINI_BASE_URL"},
     "https://generativelanguage.googleapis.com",
     true},
    {"ollama",
     WireFormat::kOllama,
     {"OLLAMA_API_KEY", nullptr},
     {"OLLAMA_HOST", "OLLAMA_BASE_URL"},
     "http://localhost:11434",
     false},
};

std::optional<std::string> read_env(const ModelOptions& options, const char* name) {
  if (name == nullptr) return std::nullopt;
  if (options.getenv) {
    auto value = options.getenv(name);
    if (value && value->empty()) return std::nullopt;
    return value;
  }
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string(value);
}

std::string normalise_base_url(std::string url) {
  // OLLAMA_HOST is often written as "host:port" without a scheme.
  if (url.find("://") == std::string::npos) url = "http://" + url;
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url;
}

std::string infer_provider(const std::string& model) {
  auto starts = [&model](const char* prefix) { return model.rfind(prefix, 0) == 0; };
  if (starts("gpt-") || starts("o1") || starts("o3") || starts("o4") || starts("chatgpt")) {
    return "openai";
  }
  if (starts("claude")) return "anthropic";
  if (starts("gemini")) return "google_genai";
  throw Error::InvalidArgument("cannot infer the provider of model '" + model +
                               "'; write it as provider:model (openai, anthropic, google_genai, "
                               "ollama, openrouter, fireworks, baseten)");
}

// The "scripted" spec: options.script_file (read now) or options.script; an array of replies
// gives a ScriptedChatModel, an object a ScriptedConversationModel named `name`.
std::unique_ptr<ChatModel> make_scripted_model(const std::string& name,
                                               const ModelOptions& options) {
  Json script = options.script;
  if (!options.script_file.empty()) {
    std::ifstream in(options.script_file);
    if (!in)
      throw Error::InvalidArgument("script_file " + options.script_file + ": cannot be read");
    try {
      script = Json::parse(in);
    } catch (const Json::exception& e) {  // a syntax error, or a number past a double's range
      throw Error::InvalidArgument("script_file " + options.script_file +
                                   ": not valid JSON: " + e.what());
    }
  }
  try {
    if (script.is_object()) return std::make_unique<ScriptedConversationModel>(script, name);
    if (!script.is_array()) {
      throw Error::InvalidArgument(
          "script: must be an array of replies or an object with \"conversations\"");
    }
    return std::make_unique<ScriptedChatModel>(script.get<std::vector<Json>>(), name);
  } catch (const Error& e) {
    if (options.script_file.empty()) throw;
    throw Error::InvalidArgument("script_file " + options.script_file + ": " + e.what());
  }
}

}  // namespace

std::unique_ptr<ChatModel> init_chat_model(const std::string& spec_in,
                                           const ModelOptions& options) {
  std::string spec = spec_in;
  if (spec.empty()) spec = read_env(options, "TOLLGATE_MODEL").value_or("demo");
  const std::string name = spec.substr(0, spec.find(':'));
  if (const auto it = options.providers.find(name); it != options.providers.end())
    return it->second(spec);
  if (name == "demo") {
    throw Error::InvalidArgument(
        "model '" + spec + "': the offline demo model is not part of the library; " +
        (spec_in.empty() ? "name a model or set TOLLGATE_MODEL, or " : "") +
        "provide it in ModelOptions::providers (the tollgate executable and the examples do)");
  }
  if (spec == "scripted" || spec.rfind("scripted:", 0) == 0) {
    return make_scripted_model(spec, options);
  }

  std::string provider;
  std::string model;
  if (auto colon = spec.find(':'); colon != std::string::npos) {
    provider = spec.substr(0, colon);
    model = spec.substr(colon + 1);
  } else {
    model = spec;
    provider = infer_provider(model);
  }
  if (provider == "google" || provider == "gemini") provider = "google_genai";
  if (model.empty()) throw Error::InvalidArgument("model spec '" + spec + "' names no model");

  const ProviderInfo* info = nullptr;
  for (const auto& candidate : kProviders) {
    if (provider == candidate.name) info = &candidate;
  }
  if (info == nullptr) {
    std::string known = "openai, openrouter, fireworks, baseten, anthropic, google_genai, ollama";
    for (const auto& [extra, factory] : options.providers) {
      (void)factory;
      known += ", " + extra;
    }
    throw Error::InvalidArgument("unknown model provider '" + provider + "' in '" + spec +
                                 "'; known: " + known + ", scripted");
  }

  models::ProviderConfig config;
  config.provider = info->name;
  config.model = model;
  config.options = options;
  config.api_key = options.api_key;
  for (const char* variable : info->key_variables) {
    if (config.api_key.empty()) config.api_key = read_env(options, variable).value_or("");
  }
  std::string base_url = options.base_url;
  for (const char* variable : info->base_url_variables) {
    if (base_url.empty()) base_url = read_env(options, variable).value_or("");
  }
  const bool custom_url = !base_url.empty();
  config.default_endpoint = !custom_url;
  config.base_url = normalise_base_url(custom_url ? base_url : info->default_base_url);
  if (info->needs_key && !custom_url && config.api_key.empty()) {
    std::string variables = info->key_variables[0];
    if (info->key_variables[1] != nullptr)
      variables += " or " + std::string(info->key_variables[1]);
    throw Error::InvalidArgument(spec + " needs an API key: set " + variables +
                                 " or pass ModelOptions::api_key");
  }
  if (options.max_retries < 0) throw Error::InvalidArgument("max_retries must not be negative");
  if (options.timeout.count() <= 0) throw Error::InvalidArgument("timeout must be positive");

  switch (info->format) {
    case WireFormat::kOpenAi:
      return models::make_openai_chat_model(std::move(config));
    case WireFormat::kAnthropic:
      return models::make_anthropic_chat_model(std::move(config));
    case WireFormat::kGemini:
      return models::make_gemini_chat_model(std::move(config));
    case WireFormat::kOllama:
      return models::make_ollama_chat_model(std::move(config));
  }
  throw Error::Internal("unhandled wire format");
}

}  // namespace tollgate
