// The config file loader of `tollgate serve --config`: any bytes as the file, loaded with two
// tools the declarations may name; each declared agent is then compiled.
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "fuzz_input.h"
#include "tollgate/agent_config.h"
#include "tollgate/error.h"

namespace {

using namespace tollgate;

AgentConfigOptions config_options() {
  AgentConfigOptions options;
  options.default_model = "demo";
  const auto echo = [](const Json& args, const ToolContext&) -> Json { return args; };
  options.tools.emplace_back("send_email", "Send an email.",
                             Json::parse(R"({"type":"object","required":["to"],
                               "properties":{"to":{"type":"string"},"body":{"type":"string"}}})"),
                             echo);
  options.tools.emplace_back("read_file", "Read a file.",
                             Json::parse(R"({"type":"object","properties":{"path":{"type":"string"}}})"),
                             echo);
  return options;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const AgentConfigOptions options = config_options();
  static const std::filesystem::path file =
      std::filesystem::temp_directory_path() / ("tollgate-fuzz-config-" + std::to_string(::getpid()) + ".json");
  // libFuzzer ends the process with exit(): the file goes with it (registered after `file`, so
  // run before its destructor).
  static const bool removed_at_exit = std::atexit([] {
                                        std::error_code error;
                                        std::filesystem::remove(file, error);
                                      }) == 0;
  (void)removed_at_exit;
  {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  try {
    for (const AgentDeclaration& agent : load_agent_config(file, options)) (void)agent.build(nullptr);
  } catch (const Error&) {
  }
  return 0;
}
