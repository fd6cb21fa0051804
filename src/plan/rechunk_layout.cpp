#include "rechunk_layout.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "request_cost.hpp"

namespace tessera::planner {
namespace {

// Costs in byte-equivalents of decoding or encoding one byte.
// One chunk read or written (open, syscalls): a request to local disk.
constexpr double kChunkOpCost = kDirectoryRequestCost.request_bytes;
constexpr double kCopyCost = 0.25;  // one byte copied in RAM
constexpr int kMaxStages = 6;
// Codec framing on top of a chunk's raw bytes, in the model: the codecs' worst-case
// bounds (blosc n + 16, lz4 n + n/255 + 16, zstd n + n/256 + 64, zlib ~ n + n/1000 + 13)
// are all within this.
std::int64_t CodecSlack(std::int64_t bytes) { return bytes / 128 + 256; }

std::int64_t Bytes(const Shape& shape, std::int64_t itemsize) {
  return ShapeSize(shape) * itemsize;
}

Shape ClampToShape(Shape chunks, const Shape& shape) {
  for (std::size_t d = 0; d < chunks.size(); ++d) {
    chunks[d] = std::max<Index>(1, std::min(chunks[d], std::max<Index>(shape[d], 1)));
  }
  return chunks;
}

Index RoundUp(Index value, Index multiple) { return (value + multiple - 1) / multiple * multiple; }

// Along one dimension: tasks, input chunks they touch, and the touched chunks' extent.
struct DimTraffic {
  Index tasks = 0;
  Index touched = 0;
  Index touched_extent = 0;
};

// The sum over i in [0, n) of floor((a * i + b) / m), for n, a, b >= 0 and m >= 1, in
// O(log) steps: whole multiples of m in a and b are summed directly, then the sum is
// turned around (counting lattice points under the line from the other axis) with the
// roles of a and m swapped, as in Euclid's algorithm. 128-bit: the terms of an array
// of 2^50 elements overflow 64 bits.
__int128 FloorSum(__int128 n, __int128 m, __int128 a, __int128 b) {
  __int128 total = 0;
  while (n > 0) {
    if (a >= m) {
      total += n * (n - 1) / 2 * (a / m);
      a %= m;
    }
    if (b >= m) {
      total += n * (b / m);
      b %= m;
    }
    const __int128 top = a * n + b;  // the line's value at n
    if (top < m) break;
    n = top / m;
    b = top % m;
    std::swap(m, a);
  }
  return total;
}

// In closed form, so that planning costs the same for 10 tasks and for 2^50 (issue 14):
// task k covers [k * task, min((k + 1) * task, extent)) and touches the chunks
// floor(begin / chunk) .. floor((end - 1) / chunk); every task but the last is whole.
DimTraffic CountDim(Index extent, Index task, Index chunk) {
  DimTraffic traffic;
  if (extent <= 0) return traffic;
  const Index tasks = (extent + task - 1) / task;
  const Index whole = tasks - 1;
  const __int128 touched_whole =
      FloorSum(whole, chunk, task, task - 1) - FloorSum(whole, chunk, task, 0) + __int128{whole};
  const Index last_begin = whole * task;
  const Index chunks = (extent + chunk - 1) / chunk;
  const __int128 touched = touched_whole + ((extent - 1) / chunk - last_begin / chunk + 1);
  // A task touching the last chunk counts only its part inside the array: the tasks
  // from the first whose end passes the last chunk's start, and the last task.
  const Index last_chunk_start = (chunks - 1) * chunk;
  const Index first_at_end = last_chunk_start >= task ? (last_chunk_start - task) / task + 1 : 0;
  const __int128 clipped = __int128{tasks - std::min(first_at_end, tasks)};
  traffic.tasks = tasks;
  traffic.touched = static_cast<Index>(touched);
  traffic.touched_extent =
      static_cast<Index>(touched * chunk - clipped * (__int128{chunks} * chunk - extent));
  return traffic;
}

bool OutputAllInMemory(const CopyStep& step) {
  return !step.writes_target && step.num_blocks > 0 && step.blocks_in_memory >= step.num_blocks;
}

// How far a task region may grow.
struct Growth {
  Shape limits;                // per dimension, at most this (rounded up to the unit)
  std::int64_t budget = 0;     // the model's bytes per task
  Index min_tasks = 1;         // keep at least this many tasks (when there were as many)
  std::optional<Shape> unit;   // grown in multiples of this; default: the write chunks
  bool task_is_chunk = false;  // the output's chunks grow with the task
};

Index TaskCount(const Shape& shape, const Shape& task) {
  Index count = 1;
  for (std::size_t d = 0; d < shape.size(); ++d) count *= (shape[d] + task[d] - 1) / task[d];
  return count;
}

// The task region of `step` grown from its unit, dimension by dimension from the last
// (C order keeps regions contiguous), while the model fits and enough tasks remain to
// keep every worker busy. nullopt when one unit per task does not fit.
std::optional<Shape> GrowTask(const Shape& shape, std::int64_t itemsize, CopyStep step,
                              const Growth& growth) {
  const Shape unit = growth.unit.value_or(step.write_chunks);
  step.task_shape = unit;
  const Index min_tasks = std::min(growth.min_tasks, TaskCount(shape, unit));
  auto fits = [&] {
    if (growth.task_is_chunk) step.write_chunks = step.task_shape;
    return TaskCount(shape, step.task_shape) >= min_tasks &&
           ModelTaskBytes(shape, itemsize, step) <= growth.budget;
  };
  if (!fits()) return std::nullopt;
  for (std::size_t d = shape.size(); d-- > 0;) {
    const Index chunk = unit[d];
    const Index limit = std::min(growth.limits[d], std::max<Index>(shape[d], 1));
    const Index most = std::max<Index>(1, (limit + chunk - 1) / chunk);
    Index low = 1;
    Index high = most;
    while (low < high) {  // the largest multiple that fits
      const Index mid = low + (high - low + 1) / 2;
      step.task_shape[d] = std::min(mid * chunk, std::max<Index>(shape[d], 1));
      if (fits()) {
        low = mid;
      } else {
        high = mid - 1;
      }
    }
    step.task_shape[d] = std::min(low * chunk, std::max<Index>(shape[d], 1));
    if (low < most) break;  // this dimension is not whole: growing earlier ones would stride
  }
  if (growth.task_is_chunk) step.write_chunks = step.task_shape;
  return step.task_shape;
}

// Tasks a copy should keep so that every worker has some to run, and a late one is a
// small part of the whole.
Index MinTasks(const RechunkProblem& problem) { return 4 * std::max(problem.workers, 1); }

// Limits that stop a task region once it covers one input chunk along each dimension
// (larger regions read no chunk fewer times, and leave fewer tasks to run in parallel).
Shape CoverInputChunk(const CopyStep& step) {
  Shape limits(step.write_chunks.size());
  for (std::size_t d = 0; d < limits.size(); ++d) {
    limits[d] = step.reads_decode ? std::max(step.write_chunks[d],
                                             RoundUp(step.read_chunks[d], step.write_chunks[d]))
                                  : step.write_chunks[d];
  }
  return limits;
}

double ReadCost(const RechunkProblem& problem, const CopyStep& step, const CopyTraffic& traffic,
                double fraction_in_memory) {
  const auto nbytes = static_cast<double>(Bytes(problem.shape, problem.itemsize));
  if (!step.reads_decode) return nbytes * kCopyCost;
  const double stored = static_cast<double>(traffic.bytes_read) +
                        static_cast<double>(traffic.chunk_reads) * kChunkOpCost;
  return fraction_in_memory * nbytes * kCopyCost + (1 - fraction_in_memory) * stored;
}

double WriteCost(const RechunkProblem& problem, const CopyStep& step, const CopyTraffic& traffic) {
  const auto nbytes = static_cast<double>(Bytes(problem.shape, problem.itemsize));
  const double stored = nbytes + static_cast<double>(traffic.chunk_writes) * kChunkOpCost;
  if (step.writes_target || step.num_blocks == 0) return stored;
  const double in_memory =
      static_cast<double>(step.blocks_in_memory) / static_cast<double>(step.num_blocks);
  const double copy = step.task_shape == step.write_chunks ? 0 : nbytes * kCopyCost;
  return in_memory * copy + (1 - in_memory) * stored;
}

// The layout copying through `chain` (source chunks first, target chunks last), or
// nullopt when a task does not fit. `grow` consolidates task regions.
// `disk[k]`, when given, is the on-disk chunking of intermediate `chain[k]`.
std::optional<RechunkLayout> LayoutThrough(const RechunkProblem& problem,
                                           const std::vector<Shape>& chain, bool grow,
                                           std::string strategy,
                                           const std::vector<Shape>& disk = {}) {
  RechunkLayout layout;
  layout.strategy = std::move(strategy);
  std::int64_t previous_in_memory = 0;
  double previous_fraction = 0;
  for (std::size_t k = 0; k + 1 < chain.size(); ++k) {
    CopyStep step;
    // A partly stored input is decoded in its disk chunks (its RAM part is only copied).
    step.read_chunks = k == 0 ? chain[0] : layout.steps.back().disk_chunks;
    step.write_chunks = chain[k + 1];
    step.disk_chunks = k + 1 < disk.size() && !disk[k + 1].empty() ? disk[k + 1] : chain[k + 1];
    step.writes_target = k + 2 == chain.size();
    step.num_blocks = 1;
    for (std::size_t d = 0; d < problem.shape.size(); ++d) {
      step.num_blocks *= (problem.shape[d] + step.write_chunks[d] - 1) / step.write_chunks[d];
    }
    step.reads_decode = k == 0 ? problem.source_decodes : previous_fraction < 1;
    std::int64_t in_memory = 0;
    if (!step.writes_target) {
      // An intermediate is alive while it is written and while it is read: RAM holds it
      // beside the one before it.
      const std::int64_t chunk_bytes =
          std::max<std::int64_t>(Bytes(step.write_chunks, problem.itemsize), 1);
      const std::int64_t room =
          std::max<std::int64_t>(problem.memory_budget - previous_in_memory, 0);
      step.blocks_in_memory = std::min<Index>(step.num_blocks, room / chunk_bytes);
      in_memory = step.blocks_in_memory * chunk_bytes;
    }
    if (step.writes_target || step.blocks_in_memory >= step.num_blocks) {
      step.disk_chunks = step.write_chunks;
    }
    step.task_shape = step.write_chunks;
    if (grow) {
      const std::optional<Shape> task = GrowTask(problem.shape, problem.itemsize, step,
                                                 Growth{CoverInputChunk(step), problem.task_budget,
                                                        MinTasks(problem), std::nullopt, false});
      if (!task) return std::nullopt;
      step.task_shape = *task;
    } else if (ModelTaskBytes(problem.shape, problem.itemsize, step) > problem.task_budget) {
      return std::nullopt;
    }
    const CopyTraffic traffic = CountTraffic(problem.shape, problem.itemsize, step);
    layout.cost += ReadCost(problem, step, traffic, k == 0 ? 0 : previous_fraction) +
                   WriteCost(problem, step, traffic);
    previous_in_memory = in_memory;
    previous_fraction =
        step.writes_target || step.num_blocks == 0
            ? 0
            : static_cast<double>(step.blocks_in_memory) / static_cast<double>(step.num_blocks);
    layout.steps.push_back(std::move(step));
  }
  return layout;
}

// The largest divisor of `value` that is at most `limit` (>= 1).
Index LargestDivisorAtMost(Index value, Index limit) {
  for (Index divisor = std::max<Index>(1, std::min(value, limit)); divisor > 1; --divisor) {
    if (value % divisor == 0) return divisor;
  }
  return 1;
}

Shape ElementwiseMin(const Shape& a, const Shape& b) {
  Shape out(a.size());
  for (std::size_t d = 0; d < a.size(); ++d) out[d] = std::min(a[d], b[d]);
  return out;
}

// Source chunks grown toward the target (rechunker's read chunks): the region a task
// reads whole, within the budget.
// Kept in RAM, a read region is one block of the intermediate; on disk the intermediate
// has the smaller chunks min(source, target), written from the region one by one.
Shape ReadChunks(const RechunkProblem& problem, const Shape& source, const Shape& target,
                 bool keep_in_memory) {
  CopyStep step;
  step.read_chunks = source;
  step.write_chunks = keep_in_memory ? source : ElementwiseMin(source, target);
  step.reads_decode = problem.source_decodes;
  step.num_blocks = 1;
  step.blocks_in_memory = keep_in_memory ? 1 : 0;
  Shape limits(source.size());
  for (std::size_t d = 0; d < limits.size(); ++d) {
    limits[d] = std::max(source[d], RoundUp(target[d], source[d]));
  }
  // Grown in units of the source chunk, which a region reads whole.
  return GrowTask(problem.shape, problem.itemsize, step,
                  Growth{limits, problem.task_budget, MinTasks(problem), source, keep_in_memory})
      .value_or(source);
}

// Chunk shapes spaced geometrically from `source` to `target` (stages + 1 of them),
// each rounded to a multiple of the smaller of the two so that stages line up.
std::vector<Shape> GeometricChain(const Shape& shape, const Shape& source, const Shape& target,
                                  int stages) {
  std::vector<Shape> chain{source};
  for (int k = 1; k < stages; ++k) {
    const double t = static_cast<double>(k) / stages;
    Shape chunks(shape.size());
    for (std::size_t d = 0; d < shape.size(); ++d) {
      const double value = std::exp((1 - t) * std::log(static_cast<double>(source[d])) +
                                    t * std::log(static_cast<double>(target[d])));
      const Index unit = std::min(source[d], target[d]);
      chunks[d] = std::max(
          unit, static_cast<Index>(std::llround(value / static_cast<double>(unit))) * unit);
    }
    chunks = ClampToShape(std::move(chunks), shape);
    if (chunks != chain.back()) chain.push_back(std::move(chunks));
  }
  if (target != chain.back()) chain.push_back(target);
  return chain;
}

}  // namespace

CopyTraffic CountTraffic(const Shape& shape, std::int64_t itemsize, const CopyStep& step) {
  CopyTraffic traffic;
  traffic.tasks = 1;
  traffic.chunk_reads = 1;
  traffic.chunk_writes = 1;
  Index touched_elements = 1;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    const DimTraffic dim = CountDim(shape[d], step.task_shape[d], step.read_chunks[d]);
    traffic.tasks *= dim.tasks;
    traffic.chunk_reads *= dim.touched;
    touched_elements *= dim.touched_extent;
    const Index written = step.disk_chunks.empty() ? step.write_chunks[d] : step.disk_chunks[d];
    traffic.chunk_writes *= (shape[d] + written - 1) / written;
  }
  const std::int64_t nbytes = Bytes(shape, itemsize);
  traffic.bytes_read = step.reads_decode ? touched_elements * itemsize : nbytes;
  traffic.bytes_written = nbytes;
  return traffic;
}

std::int64_t ModelTaskBytes(const Shape& shape, std::int64_t itemsize, const CopyStep& step) {
  const std::int64_t region = Bytes(ClampToShape(step.task_shape, shape), itemsize);
  const std::int64_t read_chunk = Bytes(ClampToShape(step.read_chunks, shape), itemsize);
  const std::int64_t write_chunk =
      Bytes(ClampToShape(step.disk_chunks.empty() ? step.write_chunks : step.disk_chunks, shape),
            itemsize);
  std::int64_t bytes = region;
  if (step.reads_decode) bytes += 2 * read_chunk + CodecSlack(read_chunk);  // decoded + stored
  const bool one_block = step.task_shape == step.write_chunks;
  if (OutputAllInMemory(step)) {
    if (!one_block) bytes += region;  // each block copied out and kept
  } else {
    bytes += 2 * write_chunk + CodecSlack(write_chunk);  // gathered + encoded copy
    if (step.blocks_in_memory > 0 && !one_block) bytes += region;
  }
  return bytes;
}

std::optional<RechunkLayout> PlanRechunkLayout(const RechunkProblem& problem) {
  const Shape source = ClampToShape(problem.source_chunks, problem.shape);
  const Shape target = ClampToShape(problem.target_chunks, problem.shape);
  std::vector<RechunkLayout> candidates;
  // Each chain with its intermediates in RAM as far as the budget goes, and wholly on
  // disk: tasks keeping blocks in RAM hold more, so they may get smaller regions that
  // decode chunks more than once, and disk can be cheaper after all.
  RechunkProblem on_disk = problem;
  on_disk.memory_budget = 0;
  auto consider = [&](const std::vector<Shape>& chain, const std::string& strategy,
                      const std::vector<Shape>& disk = {}) {
    if (auto layout = LayoutThrough(problem, chain, /*grow=*/true, strategy, disk)) {
      candidates.push_back(std::move(*layout));
    }
    if (problem.memory_budget == 0) return;
    if (auto layout = LayoutThrough(on_disk, chain, /*grow=*/true, strategy, disk)) {
      candidates.push_back(std::move(*layout));
    }
  };
  consider({source, target}, "direct");
  if (ShapeSize(problem.shape) > 0) {
    // Target chunks grown toward the source: the regions the last copy writes.
    RechunkProblem reversed = on_disk;
    std::swap(reversed.source_chunks, reversed.target_chunks);
    reversed.source_decodes = true;
    const Shape write = ReadChunks(reversed, target, source, /*keep_in_memory=*/false);
    // Source chunks read whole into RAM, the target cut from there; what RAM cannot hold
    // goes to disk in chunks that tile the read chunks and line up with `write`.
    if (problem.memory_budget > 0) {
      const Shape read = ReadChunks(problem, source, target, /*keep_in_memory=*/true);
      Shape tiles(read.size());
      for (std::size_t d = 0; d < read.size(); ++d) {
        tiles[d] = LargestDivisorAtMost(std::min(read[d], problem.shape[d]), write[d]);
      }
      consider({source, read, target}, "via RAM", {Shape{}, tiles, Shape{}});
    }
    // rechunker's single stage: the intermediate takes the smaller of the read and write
    // chunks along each dimension, so both copies read it in whole chunks.
    const Shape read = ReadChunks(problem, source, target, /*keep_in_memory=*/false);
    const Shape intermediate = ElementwiseMin(read, write);
    if (intermediate != source && intermediate != target) {
      consider({source, intermediate, target}, "via an intermediate");
    }
    double best_multistage = std::numeric_limits<double>::infinity();
    for (int stages = 2; stages <= kMaxStages; ++stages) {
      const std::vector<Shape> chain = GeometricChain(problem.shape, source, target, stages);
      const std::size_t before = candidates.size();
      consider(chain, std::to_string(chain.size() - 1) + " copies");
      double cost = std::numeric_limits<double>::infinity();
      for (std::size_t i = before; i < candidates.size(); ++i) {
        cost = std::min(cost, candidates[i].cost);
      }
      if (candidates.size() == before) continue;
      if (cost >= best_multistage) break;  // more stages stopped paying
      best_multistage = cost;
    }
  }
  if (candidates.empty()) return std::nullopt;
  auto best = std::min_element(candidates.begin(), candidates.end(),
                               [](const RechunkLayout& a, const RechunkLayout& b) {
                                 if (a.cost != b.cost) return a.cost < b.cost;
                                 return a.steps.size() < b.steps.size();
                               });
  return *best;
}

RechunkLayout SmallestTaskLayout(const RechunkProblem& problem) {
  const Shape source = ClampToShape(problem.source_chunks, problem.shape);
  const Shape target = ClampToShape(problem.target_chunks, problem.shape);
  const Shape intermediate = ElementwiseMin(source, target);
  std::vector<Shape> chain{source};
  if (intermediate != source && intermediate != target) chain.push_back(intermediate);
  chain.push_back(target);
  RechunkProblem unbounded = problem;
  unbounded.task_budget = std::numeric_limits<std::int64_t>::max();
  return *LayoutThrough(unbounded, chain, /*grow=*/false, "smallest tasks");
}

}  // namespace tessera::planner
