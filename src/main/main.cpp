#include <iostream>

#include "main/subcommands.h"
#include "sql/sqlite_vfs.h"
#include "tollgate/error.h"

int main(int argc, char** argv) {
  tollgate::sql::configure_sqlite();
  CLI::App app{"Tollgate: a durable human-in-the-loop agent runtime"};
  app.require_subcommand(1);
  tollgate::cli::add_serve_command(app);
  tollgate::cli::add_chat_command(app);
  tollgate::cli::add_audit_command(app);
  tollgate::cli::add_prune_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const tollgate::Error& e) {
    std::cerr << "tollgate: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
