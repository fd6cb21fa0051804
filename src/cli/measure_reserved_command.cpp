#include "measure_reserved_command.hpp"

#include "nlohmann/json.hpp"
#include "tessera/api/reserved_mem.hpp"
#include "tessera/core/byte_size.hpp"
#include "tessera/core/spec.hpp"

namespace tessera::cli {

MeasureReservedCommand::MeasureReservedCommand(CLI::App& app)
    : command_(app.add_subcommand(
          "measure-reserved",
          "Measure reserved_mem: this process's memory while it runs a trivial computation")) {
  command_->add_option("--executor", executor_, "How tasks run")
      ->capture_default_str()
      ->check(CLI::IsMember({"sync", "threads"}));
  command_->add_option("--workers", workers_, "Tasks run at once (0 = all cores)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  command_->add_flag("--json", json_, "Print {\"reserved_mem\": BYTES, ...} instead of text");
}

void MeasureReservedCommand::Run(std::ostream& out) const {
  Spec spec;
  spec.executor = executor_;
  spec.max_workers = workers_;
  const std::int64_t reserved = measure_reserved_mem(spec);
  const int workers = executor_ == "sync" ? 1 : spec.effective_max_workers();
  if (json_) {
    nlohmann::ordered_json json;
    json["reserved_mem"] = reserved;
    json["executor"] = executor_;
    json["workers"] = workers;
    out << json.dump(2) << '\n';
    return;
  }
  out << "reserved_mem: " << format_bytes(reserved) << " (" << reserved << " bytes)\n"
      << "  the resident memory of a tessera process running a trivial computation on the "
      << executor_ << " executor with " << workers << " worker" << (workers == 1 ? "" : "s") << "\n"
      << "  pass it on: --reserved-mem " << reserved << " (or Spec::reserved_mem)\n";
}

}  // namespace tessera::cli
