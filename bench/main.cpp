// tollgate_bench: runs one benchmark workload and prints its JSON line(s).
//   tollgate_bench --workload steps --saver memory --n 3000
// bench/run.sh runs the whole matrix next to the LangGraph.js peer and prints the table.
#include <exception>
#include <functional>
#include <iostream>
#include <map>
#include <string>

#include "tollgate/error.h"
#include "workloads.h"

int main(int argc, char** argv) {
  using namespace tollgate::bench;
  const std::map<std::string, std::function<void(const Options&)>> workloads = {
      {"chain", run_chain},
      {"steps", run_steps},
      {"hitl_cycle", run_hitl_cycle},
      {"fanout", run_fanout},
      {"long_thread", run_long_thread},
      {"hitl_agent", run_hitl_agent},
      {"hitl_agent_thread", run_hitl_agent_thread}};
  try {
    for (int i = 1; i < argc; ++i) {
      if (std::string(argv[i]) == "--help" || std::string(argv[i]) == "-h") {
        std::cout << usage();
        return 0;
      }
    }
    const Options options = parse_options(argc, argv);
    auto workload = workloads.find(options.workload);
    if (workload == workloads.end()) {
      throw tollgate::Error::InvalidArgument("--workload: unknown workload '" + options.workload +
                                             "'");
    }
    workload->second(options);
    return 0;
  } catch (const tollgate::Error& error) {
    std::cerr << "tollgate_bench: " << error.what() << "\n";
    if (error.code() == tollgate::ErrorCode::kInvalidArgument) std::cerr << usage();
    return 2;
  } catch (const std::exception& error) {
    std::cerr << "tollgate_bench: " << error.what() << "\n";
    return 1;
  }
}
