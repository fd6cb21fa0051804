#include "spec_options.hpp"

#include "tessera/core/byte_size.hpp"
#include "tessera/core/errors.hpp"

namespace tessera::cli {

std::int64_t ParseSizeOption(const std::string& text, std::string_view option) {
  try {
    return parse_bytes(text);
  } catch (const InvalidArgument& error) {
    throw InvalidArgument(std::string(option) + ": " + error.what() +
                          "; give a size such as 400MB, 1.5GB or 512MiB");
  }
}

void SpecOptions::Register(CLI::App& command) {
  CLI::Option* allowed = command.add_option(
      "--allowed-mem", allowed_mem_,
      "Memory one task may hold, reserved_mem included (e.g. 400MB), or auto: the smallest "
      "that runs the plan");
  if (mode_ == AllowedMem::kRequired) {
    allowed->required();
  } else {
    allowed->capture_default_str();
  }
  command.add_option("--memory-tiers", memory_tiers_,
                     "Memory sizes a task may be given, comma-separated (e.g. 512MB,1GB,2GB): "
                     "each op gets the smallest that fits; with auto the largest bounds it");
  command
      .add_option("--reserved-mem", reserved_mem_,
                  "Baseline memory of a worker, counted in every task's budget")
      ->capture_default_str();
  command.add_option("--total-mem", total_mem_,
                     "Memory all running tasks and in-memory intermediates may use together "
                     "(default: detected, the cgroup limit or physical RAM)");
  command.add_option("--work-dir", work_dir_,
                     "Existing, writable folder for intermediates on disk; each run works in a "
                     "marked tessera-* folder of its own inside it (default: the system temp "
                     "dir); or s3://BUCKET/PREFIX: intermediates that fit neither the RAM left "
                     "nor local disk go there (the object store tier)");
  command
      .add_option(
          "--local-disk", local_disk_,
          "With an s3:// --work-dir: local disk intermediates may take before the "
          "object store (a size; 0 = none; auto = nine tenths of the temp dir's free space, "
          "none for the mpi, dask and ray executors)")
      ->capture_default_str();
  command.add_option("--workers", workers_, "Tasks run at once (0 = all cores)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  command
      .add_option("--executor", executor_,
                  "How tasks run: sync, threads, or mpi (under mpirun: every rank runs the same "
                  "command; rank 0 leads)")
      ->capture_default_str()
      ->check(CLI::IsMember({"sync", "threads", "mpi"}));
  command.add_option("--executor-option", executor_options_,
                     "An executor setting NAME=VALUE, repeatable (mpi: min_replicas, "
                     "max_replicas, replicate_after, high_watermark)");
}

Spec SpecOptions::Build() const {
  Spec spec;
  if (allowed_mem_ == "auto") {
    spec.allowed_mem = Spec::kAutoAllowedMem;
  } else {
    spec.allowed_mem = ParseSizeOption(allowed_mem_, "--allowed-mem");
  }
  spec.reserved_mem = ParseSizeOption(reserved_mem_, "--reserved-mem");
  if (!total_mem_.empty()) spec.total_mem = ParseSizeOption(total_mem_, "--total-mem");
  if (!spec.allowed_mem_is_auto() && spec.allowed_mem <= spec.reserved_mem) {
    throw InvalidArgument("--allowed-mem (" + format_bytes(spec.allowed_mem) +
                          ") must exceed --reserved-mem (" + format_bytes(spec.reserved_mem) +
                          "): every task's budget includes reserved_mem; raise --allowed-mem "
                          "or lower --reserved-mem");
  }
  if (!spec.allowed_mem_is_auto() && spec.total_mem != 0 && spec.total_mem < spec.allowed_mem) {
    throw InvalidArgument("--total-mem (" + format_bytes(spec.total_mem) +
                          ") is below --allowed-mem (" + format_bytes(spec.allowed_mem) +
                          "): no task could run; raise --total-mem or lower --allowed-mem");
  }
  if (!memory_tiers_.empty()) {
    try {
      spec.set_memory_tiers(memory_tiers_);
    } catch (const InvalidArgument& error) {
      throw InvalidArgument(std::string("--memory-tiers: ") + error.what());
    }
  }
  spec.work_dir = work_dir_;
  spec.set("local_disk", local_disk_);
  spec.executor = executor_;
  for (const std::string& setting : executor_options_) {
    const std::size_t equals = setting.find('=');
    if (equals == std::string::npos || equals == 0) {
      throw InvalidArgument("--executor-option \"" + setting +
                            "\": expected NAME=VALUE, e.g. min_replicas=2");
    }
    spec.executor_options[setting.substr(0, equals)] = setting.substr(equals + 1);
  }
  spec.max_workers = workers_;
  spec.validate();
  return spec;
}

}  // namespace tessera::cli
