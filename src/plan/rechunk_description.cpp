#include "rechunk_description.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "tessera/core/byte_size.hpp"

namespace tessera::planner {
namespace {

std::string Destination(const OpInfo& info) {
  const std::string chunks = " in chunks " + ShapeToString(info.chunks);
  switch (info.tier) {
    case Tier::kMemory:
      return "an intermediate" + chunks + ", all of it in RAM (" +
             format_bytes(info.bytes_written) + ")";
    case Tier::kDisk:
      return "an intermediate" +
             (info.disk_chunks.empty() ? chunks : " in chunks " + ShapeToString(info.disk_chunks)) +
             " on local disk (work_dir), " + format_bytes(info.bytes_written) +
             " before compression";
    case Tier::kMixed:
    case Tier::kMemoryAndObject: {
      const std::string stored =
          info.disk_chunks.empty() ? "" : " in chunks " + ShapeToString(info.disk_chunks);
      return "an intermediate" + chunks + ": its first " + format_bytes(info.bytes_in_memory) +
             " in RAM, the other " + format_bytes(info.bytes_written - info.bytes_in_memory) +
             (info.tier == Tier::kMixed ? " on local disk (work_dir)"
                                        : " in the object store (work_dir: local disk holds "
                                          "none of it)") +
             stored;
    }
    case Tier::kObject:
      return "an intermediate" +
             (info.disk_chunks.empty() ? chunks : " in chunks " + ShapeToString(info.disk_chunks)) +
             " in the object store (work_dir: neither the RAM left nor local disk holds it), " +
             format_bytes(info.bytes_written) + " before compression";
    case Tier::kResult:
      return "the result in memory" + chunks;
    case Tier::kTarget:
      if (!info.inner_chunks.empty()) {
        return "the target in shards " + ShapeToString(info.chunks) + " of inner chunks " +
               ShapeToString(info.inner_chunks) + " (a task writes whole shards)";
      }
      return "the target" + chunks;
    case Tier::kNone:
      break;
  }
  return "its output" + chunks;
}

}  // namespace

std::string Grouped(std::int64_t value) {
  // Copied into a new string, a comma before every third digit from the right: GCC 12
  // at -O3 misreads an insert into `digits` as an overlapping memcpy (-Wrestrict).
  const std::string digits = std::to_string(value);
  std::string grouped;
  grouped.reserve(digits.size() + digits.size() / 3);
  for (std::size_t at = 0; at < digits.size(); ++at) {
    if (at > 0 && (digits.size() - at) % 3 == 0) grouped.push_back(',');
    grouped.push_back(digits[at]);
  }
  return grouped;
}

std::string DescribeRechunk(const FinalizedPlan::State& plan, const OpGroup& stages) {
  const auto copy = [&](std::size_t stage) -> const PlannedOp& {
    return plan.ops[static_cast<std::size_t>(stages.ops[stage])];
  };
  const std::size_t last = stages.ops.size() - 1;
  const OpInfo& final_copy = copy(last).info();
  const OpInfo& first_copy = copy(0).info();
  std::ostringstream out;
  const std::int64_t nbytes = ShapeSize(final_copy.shape) * final_copy.dtype.itemsize();
  out << "Rechunk " << final_copy.fused.front() << ": " << ShapeToString(final_copy.shape) << " "
      << final_copy.dtype.name() << " (" << format_bytes(nbytes) << ") from chunks "
      << ShapeToString(first_copy.input_chunks) << " to " << ShapeToString(final_copy.chunks);
  if (stages.ops.size() == 1) {
    out << ", in one pass with no intermediate:\n";
  } else {
    out << ", in " << stages.ops.size() << " stages:\n";
  }
  std::int64_t reads = 0;
  std::int64_t writes = 0;
  std::int64_t bytes_decoded = 0;
  for (std::size_t i = 0; i <= last; ++i) {
    const OpInfo& info = copy(i).info();
    // The share of this copy's input held in RAM (read by copying, no I/O).
    double input_in_ram = 0;
    if (i > 0) {
      const OpInfo& previous = copy(i - 1).info();
      input_in_ram =
          previous.tier == Tier::kMemory
              ? 1.0
              : static_cast<double>(previous.bytes_in_memory) /
                    static_cast<double>(std::max<std::int64_t>(previous.bytes_written, 1));
    }
    const std::string input =
        i == 0 ? (copy(i).sources.empty() ? std::string("its input") : copy(i).sources.front())
               : "that intermediate";
    const double per_task = info.num_tasks > 0 ? static_cast<double>(info.chunk_reads) /
                                                     static_cast<double>(info.num_tasks)
                                               : 0;
    std::ostringstream average;
    average.precision(per_task < 10 ? 2 : 3);
    average << per_task;
    const auto stored_reads = static_cast<std::int64_t>(
        std::llround(static_cast<double>(info.chunk_reads) * (1 - input_in_ram)));
    const auto decoded = static_cast<std::int64_t>(
        std::llround(static_cast<double>(info.bytes_read) * (1 - input_in_ram)));
    const double output_in_ram =
        info.tier == Tier::kMemory
            ? 1.0
            : static_cast<double>(info.bytes_in_memory) /
                  static_cast<double>(std::max<std::int64_t>(info.bytes_written, 1));
    const auto stored_writes = static_cast<std::int64_t>(
        std::llround(static_cast<double>(info.chunk_writes) * (1 - output_in_ram)));
    out << "  " << info.stage << ". " << info.name << " reads " << input << " (chunks "
        << ShapeToString(info.input_chunks) << ") in regions of " << ShapeToString(info.task_shape)
        << ", " << average.str() << (per_task == 1 ? " chunk" : " chunks")
        << " per task on average,\n"
        << "     and writes " << Destination(info) << ".\n"
        << "     " << Grouped(info.num_tasks) << (info.num_tasks == 1 ? " task" : " tasks")
        << " of at most " << format_bytes(info.projected_mem) << " each; ";
    if (input_in_ram >= 1) {
      out << "copies all it reads from RAM";
    } else {
      out << "reads " << Grouped(stored_reads) << " stored chunks (" << format_bytes(decoded)
          << " decoded)" << (input_in_ram > 0 ? " and copies the rest from RAM" : "");
    }
    if (output_in_ram >= 1) {
      out << ", keeps all it writes in RAM.\n";
    } else {
      out << ", writes " << Grouped(stored_writes) << " chunks"
          << (output_in_ram > 0 ? " and keeps the rest in RAM" : "") << ".\n";
    }
    reads += stored_reads;
    writes += stored_writes;
    bytes_decoded += decoded;
  }
  out << "  In all: " << Grouped(reads + writes) << " I/O operations (" << Grouped(reads)
      << " chunk reads, " << Grouped(writes) << " chunk writes); " << format_bytes(bytes_decoded)
      << " decoded for " << format_bytes(nbytes) << " of data.\n";
  return out.str();
}

}  // namespace tessera::planner
