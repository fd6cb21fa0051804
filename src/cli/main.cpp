// The `tessera` command: parses the command line and runs one subcommand.
//
// Exit codes: 0 success (including --help and --version); 1 a tessera::Error or any
// other failure while running ("tessera: error: <message>" on stderr); 2 a usage
// error (unknown command or option, missing argument), with the usage text on stderr.
#include <exception>
#include <iostream>
#include <new>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "CLI/CLI.hpp"
#include "calc_command.hpp"
#include "history_command.hpp"
#include "info_command.hpp"
#include "measure_reserved_command.hpp"
#include "rechunk_command.hpp"
#include "report_command.hpp"
#include "sample_command.hpp"
#include "tessera/core/cluster.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/version.hpp"

namespace {

constexpr int kExitError = 1;
constexpr int kExitUsage = 2;

// The usage text of the deepest subcommand the command line selected, else the app's,
// with its full command path ("tessera info").
std::string UsageOf(const CLI::App& app) {
  const CLI::App* current = &app;
  std::string parents;
  while (true) {
    const std::vector<CLI::App*> selected = current->get_subcommands();
    if (selected.empty()) break;
    parents += (parents.empty() ? "" : " ") + current->get_name();
    current = selected.front();
  }
  return current->help(parents);
}

// The first argument that is not an option names the command (the top level's own
// options take no values). Returns it when no subcommand has that name, so the error
// can say "unknown command" instead of CLI11's "a subcommand is required".
std::optional<std::string> UnknownCommand(CLI::App& app, int argc, char** argv) {
  for (int arg = 1; arg < argc; ++arg) {
    const std::string_view text = argv[arg];
    if (text.starts_with('-')) continue;
    const auto named = app.get_subcommands(
        [&](CLI::App* command) { return command->check_name(std::string(text)); });
    if (named.empty()) return std::string(text);
    return std::nullopt;
  }
  return std::nullopt;
}

int Main(int argc, char** argv) {
  CLI::App app("Tessera: chunked N-dimensional arrays on Zarr, computed under a memory budget",
               "tessera");
  app.set_version_flag("--version", std::string("tessera ") + tessera::version());
  app.require_subcommand(1);
  app.fallthrough(false);

  tessera::cli::InfoCommand info(app);
  tessera::cli::SampleCommand sample(app);
  tessera::cli::RechunkCommand rechunk(app);
  tessera::cli::CalcCommand calc(app);
  tessera::cli::HistoryCommand history(app);
  tessera::cli::MeasureReservedCommand measure_reserved(app);
  tessera::cli::ReportCommand report(app);

  if (const std::optional<std::string> unknown = UnknownCommand(app, argc, argv)) {
    std::cerr << "tessera: error: unknown command \"" << *unknown << "\"\n\n" << app.help();
    return kExitUsage;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    if (error.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) {
      return app.exit(error);  // --help, --help-all, --version: print on stdout, exit 0
    }
    std::cerr << "tessera: error: " << error.what() << "\n\n" << UsageOf(app);
    return kExitUsage;
  }

  if (info.selected()) info.Run(std::cout);
  if (sample.selected()) sample.Run(std::cout);
  // Under mpirun (--executor mpi) every rank runs the command and rank 0 alone prints
  // what it did; errors come from every rank that met them.
  const auto print_if_leader = [](auto& command) {
    std::ostringstream out;
    command.Run(out);
    if (!tessera::ClusterJoined() || tessera::JoinCluster().leads()) std::cout << out.str();
  };
  if (rechunk.selected()) print_if_leader(rechunk);
  if (calc.selected()) print_if_leader(calc);
  if (history.selected()) history.Run(std::cout);
  if (measure_reserved.selected()) measure_reserved.Run(std::cout);
  if (report.selected()) report.Run(std::cout);
  std::cout.flush();
  if (!std::cout) {
    std::cerr << "tessera: error: cannot write to standard output\n";
    return kExitError;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return Main(argc, argv);
  } catch (const tessera::Error& error) {
    std::cerr << "tessera: error: " << error.what() << '\n';
  } catch (const std::bad_alloc&) {
    std::cerr << "tessera: error: out of memory\n";
  } catch (const std::exception& error) {
    std::cerr << "tessera: error: " << error.what() << '\n';
  } catch (...) {
    std::cerr << "tessera: error: unknown failure\n";
  }
  return kExitError;
}
