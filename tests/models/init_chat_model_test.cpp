#include <gtest/gtest.h>

#include "models/model_test_support.h"
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

// A provider the application brings: a scripted model standing in for the demo model.
ModelProvider named_provider(const std::string& name) {
  return [name](const std::string&) {
    return std::make_unique<ScriptedChatModel>(std::vector<Json>{}, name);
  };
}

TEST(InitChatModelTest, EmptySpecWithoutConfigurationIsTheDemoProvider) {
  ModelOptions options = with_env({});
  options.providers["demo"] = named_provider("demo");
  EXPECT_EQ(init_chat_model("", options)->name(), "demo");
}

TEST(InitChatModelTest, DemoWithoutItsProviderSaysWhereTheDemoModelLives) {
  std::string message;
  EXPECT_EQ(error_code_of("demo", with_env({}), &message), ErrorCode::kInvalidArgument);
  EXPECT_EQ(message,
            "model 'demo': the offline demo model is not part of the library; provide it in "
            "ModelOptions::providers (the tollgate executable and the examples do)");
}

TEST(InitChatModelTest, AGivenProviderGetsTheWholeSpec) {
  ModelOptions options = with_env({});
  std::string seen;
  options.providers["local"] = [&seen](const std::string& spec) {
    seen = spec;
    return std::make_unique<ScriptedChatModel>(std::vector<Json>{}, "local");
  };
  EXPECT_EQ(init_chat_model("local:tiny", options)->name(), "local");
  EXPECT_EQ(seen, "local:tiny");
}

TEST(InitChatModelTest, AnUnknownProviderErrorListsTheGivenProviders) {
  ModelOptions options = with_env({});
  options.providers["demo"] = named_provider("demo");
  std::string message;
  error_code_of("acme:large", options, &message);
  EXPECT_NE(message.find("ollama, demo, scripted"), std::string::npos) << message;
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

// The model strings of deepagents' guide, each sent to its provider's endpoint (a fake server
// behind the provider's base-URL variable) with the model id unchanged and the key from the
// provider's key variable. The fake server refuses the request; what it received is checked.
TEST(InitChatModelTest, TheDeepagentsGuideModelStringsReachTheirProviders) {
  struct Case {
    const char* spec;
    const char* base_url_variable;
    const char* key_variable;
    const char* model_id;
    const char* path;        // the request target contains it
    const char* key_header;  // carries the key ("" when keyless)
  };
  const Case cases[] = {
      {"anthropic:claude-sonnet-4-6", "ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY",
       "claude-sonnet-4-6", "/messages", "x-api-key"},
      {"openai:gpt-5.5", "OPENAI_BASE_URL", "OPENAI_API_KEY", "gpt-5.5", "/chat/completions",
       "authorization"},
      {"google_genai:gemini-3.6-flash", "GOOGLE_GENAI_BASE_URL", "GOOGLE_API_KEY", "",
       "gemini-3.6-flash", "x-goog-api-key"},
      {"openrouter:z-ai/glm-5.2", "OPENROUTER_BASE_URL", "OPENROUTER_API_KEY", "z-ai/glm-5.2",
       "/chat/completions", "authorization"},
      {"fireworks:accounts/fireworks/models/glm-5p2", "FIREWORKS_BASE_URL", "FIREWORKS_API_KEY",
       "accounts/fireworks/models/glm-5p2", "/chat/completions", "authorization"},
      {"baseten:zai-org/GLM-5.2", "BASETEN_BASE_URL", "BASETEN_API_KEY", "zai-org/GLM-5.2",
       "/chat/completions", "authorization"},
      {"ollama:north-mini-code-1.0", "OLLAMA_HOST", "", "north-mini-code-1.0", "/api/chat", ""},
  };
  for (const Case& c : cases) {
    testing::ProviderFixture fixture;
    fixture.server.enqueue(testing::ScriptedResponse::json(400, Json{{"error", "refused"}}));
    auto model = init_chat_model(c.spec, fixture.options(c.base_url_variable, c.key_variable));
    ChatRequest request;
    request.messages = Json::array({Json{{"type", "human"}, {"content", "hi"}}});
    EXPECT_THROW(model->invoke(request), Error) << c.spec;
    const auto requests = fixture.server.requests();
    ASSERT_EQ(requests.size(), 1u) << c.spec;
    EXPECT_NE(requests[0].target.find(c.path), std::string::npos) << c.spec << " " << requests[0].target;
    if (*c.model_id != 0) {
      EXPECT_EQ(Json::parse(requests[0].body).value("model", ""), c.model_id) << c.spec;
    }
    if (*c.key_header != 0) {
      EXPECT_NE(requests[0].header(c.key_header).find("test-key"), std::string::npos) << c.spec;
    }
  }
}

}  // namespace
}  // namespace tollgate
