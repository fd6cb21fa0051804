// What a request costs: the fixed price of reading or writing one chunk of a storage
// tier, on top of its bytes. Internal to src/plan; the rechunk layout and the search
// for allowed_mem "auto" weigh plans with it.
//
// Costs are in byte-equivalents: the bytes the pipeline (read, decode, copy, encode,
// write) moves in the time a request's fixed part takes. A plan's I/O cost is its
// decoded bytes moved plus its intermediates' requests at that price, so a budget that
// saves memory by cutting an intermediate into millions of small chunks shows what it
// costs.
//
// The directory store's figures are measured (bench/request_cost_bench.cpp; figures in
// docs/sizing.md): on ext4 a small chunk's write (create, write, rename) takes 50-110 us
// and its read ~10 us, ~50-60 us a request on average, while the pipeline (blosc-lz4
// encode and decode) moves ~1 GB/s on a core: 46-57 KiB, so 64 KiB is a request's
// price. (In a directory of a filesystem whose inode groups are full of recently deleted
// files, ext4's allocator makes each create 5-10x slower: the floor, not the price, is
// what keeps such a plan's requests few.) The floor is 32 requests' worth, 2 MiB: a chunk
// at the floor spends at most 1/32 (3%) of its time on its request, a third of the I/O
// slack allowed_mem "auto" allows. ERA5 (1.5 TB, (31, 721, 1440) to (350640, 10, 10))
// planned with auto then needs 1.4 million requests instead of 238 million. An object
// store (S3) has its own, from its latency.
#pragma once

#include <cstdint>
#include <span>

#include "tessera/plan/op_info.hpp"

namespace tessera::planner {

struct RequestCost {
  double request_bytes = 0;      // byte-equivalents of one chunk read or written
  std::int64_t chunk_floor = 0;  // the smallest intermediate chunk the tier serves well
};

// Local disk through the directory store (work_dir, Zarr targets on a filesystem).
inline constexpr RequestCost kDirectoryRequestCost{64.0 * 1024, std::int64_t{2} << 20};

// Chunk reads and writes of a plan's ops (OpInfo::chunk_reads + chunk_writes).
std::int64_t PlanRequests(std::span<const OpInfo> ops);

// Decoded bytes moved (OpInfo::bytes_read + bytes_written) plus the requests to the
// intermediates a plan keeps on disk (chunks written there, and read from there) at
// `cost.request_bytes`. The user's own arrays may live in any store, and a budget
// changes their requests little (a target's are fixed; re-decoded source chunks show in
// the bytes), so they are not priced.
double PlanIoCost(std::span<const OpInfo> ops, const RequestCost& cost);

// The bytes of the smallest chunk of an intermediate the plan keeps on disk (its disk
// chunks, clipped to its shape); 0 when it keeps none there.
std::int64_t SmallestDiskChunkBytes(std::span<const OpInfo> ops);

// The bytes of the smallest chunk of the user's own arrays the plan reads or writes:
// a first copy's input chunks and a target's chunks (clipped); 0 when it has none.
// Intermediates need not be larger than the data they come from.
std::int64_t SmallestUserChunkBytes(std::span<const OpInfo> ops);

}  // namespace tessera::planner
