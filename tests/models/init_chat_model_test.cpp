#include <gtest/gtest.h>

#include "tollgate/chat_model.h"
#include "tollgate/error.h"

namespace tollgate {
namespace {

ModelOptions with_env(std::map<std::string, std::string> env) {
  ModelOptions options;
  options.getenv = [env](const std::string& name) -> std::optional<std::string> {
    auto it = env.find(name);
    if (it == env.end()) return std::nullopt;
    return it->second;
  };
  return options;
}

ErrorCode error_code_of(const std::string& spec, const ModelOptions& options,
                        std::string* message = nullptr) {
  try {
    init_chat_model(spec, options);
  } catch (const Error& e) {
    if (message != nullptr) *message = e.what();
    return e.code();
  }
  ADD_FAILURE() << "no error for " << spec;
  return ErrorCode::kInternal;
}

TEST(InitChatModelTest, EmptySpecWithoutConfigurationIsTheDemoModel) {
  EXPECT_EQ(init_chat_model("", with_env({}))->name(), "demo");
}

TEST(InitChatModelTest, EmptySpecUsesTollgateModelVariable) {
  auto model =
      init_chat_model("", with_env({{"TOLLGATE_MODEL", "openai:gpt-4o"}, {"OPENAI_API_KEY", "k"}}));
  EXPECT_EQ(model->name(), "openai:gpt-4o");
}

TEST(InitChatModelTest, ResolvesEachProviderPrefix) {
  auto env = with_env({{"OPENAI_API_KEY", "k"},
                       {"ANTHROPIC_API_KEY", "k"},
                       {"GEMINI_API_KEY", "k"},
                       {"FIREWORKS_API_KEY", "k"},
                       {"BASETEN_API_KEY", "k"},
                       {"OPENROUTER_API_KEY", "k"}});
  for (const char* spec :
       {"openai:gpt-4o", "anthropic:claude-3-5-haiku-latest", "google_genai:gemini-2.5-pro",
        "ollama:llama3.1", "fireworks:accounts/fireworks/models/qwen3", "baseten:deepseek-v3",
        "openrouter:anthropic/claude-3.5-sonnet"}) {
    EXPECT_EQ(init_chat_model(spec, env)->name(), spec);
  }
}

TEST(InitChatModelTest, InfersTheProviderOfABareModelName) {
  auto env =
      with_env({{"OPENAI_API_KEY", "k"}, {"ANTHROPIC_API_KEY", "k"}, {"GOOGLE_API_KEY", "k"}});
  EXPECT_EQ(init_chat_model("gpt-4o-mini", env)->name(), "openai:gpt-4o-mini");
  EXPECT_EQ(init_chat_model("claude-sonnet-4-5", env)->name(), "anthropic:claude-sonnet-4-5");
  EXPECT_EQ(init_chat_model("gemini-2.5-flash", env)->name(), "google_genai:gemini-2.5-flash");
}

TEST(InitChatModelTest, MissingApiKeyNamesTheVariable) {
  std::string message;
  EXPECT_EQ(error_code_of("anthropic:claude-sonnet-4-5", with_env({}), &message),
            ErrorCode::kInvalidArgument);
  EXPECT_NE(message.find("ANTHROPIC_API_KEY"), std::string::npos) << message;
}

TEST(InitChatModelTest, CustomBaseUrlNeedsNoKeyForOpenAiCompatibleServers) {
  ModelOptions options = with_env({});
  options.base_url = "http://127.0.0.1:8000/v1";
  EXPECT_EQ(init_chat_model("openai:Qwen/Qwen3-8B", options)->name(), "openai:Qwen/Qwen3-8B");
}

TEST(InitChatModelTest, UnknownProviderIsInvalidArgument) {
  std::string message;
  EXPECT_EQ(error_code_of("acme:large", with_env({}), &message), ErrorCode::kInvalidArgument);
  EXPECT_NE(message.find("acme"), std::string::npos) << message;
}

TEST(InitChatModelTest, UninferableBareNameIsInvalidArgument) {
  EXPECT_EQ(error_code_of("mystery-model", with_env({})), ErrorCode::kInvalidArgument);
}

TEST(InitChatModelTest, ProviderWithoutModelIsInvalidArgument) {
  EXPECT_EQ(error_code_of("openai:", with_env({{"OPENAI_API_KEY", "k"}})),
            ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace tollgate
