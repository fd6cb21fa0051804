// SharedBlocks: the blocks of an op's output that live in this process's memory (an
// intermediate of the RAM tier, compute()'s result), as an executor running one plan
// across processes (MPI ranks) moves them between the processes.
//
//   planner::SharedBlocks* blocks = op.shared_blocks();   // nullptr: not held in memory
//   blocks->SetRemote(fetch);        // once prepared: where tasks get blocks not held here
//   std::shared_ptr<const NDArray> held = blocks->Held(7);   // to send block 7 elsewhere
//   blocks->HeldRegion(7, region);   // or only the part of it a task elsewhere reads
//   blocks->Put(7, received);        // a copy that arrived from another process
//   blocks->Drop(7);                 // the copy here is no longer needed
//
// Blocks are named by their C-order index in the output's chunk grid. A task reading a
// block this process does not hold calls `fetch` for the region of it that it reads (on
// the task's thread, which waits for it: the whole block, or a part) and uses, but does
// not keep, what it returns; the executor Puts a copy of a whole block it decides to keep. Without
// a remote (one process), a block not held is an internal error, as before. Thread-safe: tasks, Put
// and Drop may run at once.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "tessera/core/chunk_grid.hpp"
#include "tessera/core/ndarray.hpp"
#include "tessera/core/shape.hpp"

namespace tessera::planner {

class SharedBlocks {
 public:
  // Returns the values of `region` (global coordinates, inside block `block`) from the
  // process holding the block (throws what the transfer throws).
  using Fetch = std::function<std::shared_ptr<const NDArray>(Index block, const Region& region)>;

  virtual ~SharedBlocks() = default;
  // The block's values when this process holds them; nullptr otherwise.
  virtual std::shared_ptr<const NDArray> Held(Index block) const = 0;
  // The values of `region` (global coordinates, inside the block) when this process
  // holds the block; nullptr otherwise.
  virtual std::shared_ptr<const NDArray> HeldRegion(Index block, const Region& region) const = 0;
  // The region block `block` covers (global coordinates).
  virtual Region BlockRegion(Index block) const = 0;
  // Keeps `values` (the block's shape and dtype) as this process's copy of the block.
  virtual void Put(Index block, std::shared_ptr<const NDArray> values) = 0;
  // Forgets this process's copy of the block (its memory goes once no task uses it).
  virtual void Drop(Index block) = 0;
  // Where blocks not held here come from; an empty function: nowhere (one process).
  virtual void SetRemote(Fetch fetch) = 0;
  // The blocks the calling thread's tasks wrote since its last call (each once,
  // complete): a task runs on one thread, so its runner learns what it wrote alone,
  // however many tasks of the op run at once.
  virtual std::vector<Index> TakeWritten() = 0;
  // The output's blocks (its dtype is the output's).
  virtual Index num_blocks() const = 0;
  virtual DType dtype() const = 0;
};

// What SharedBlocks::TakeWritten returns, kept per writing thread. Thread-safe.
class BlocksWrittenByThread {
 public:
  // The calling thread wrote `block`.
  void Add(Index block) {
    const std::lock_guard lock(mutex_);
    written_[std::this_thread::get_id()].push_back(block);
  }
  // What the calling thread wrote since its last Take.
  std::vector<Index> Take() {
    const std::lock_guard lock(mutex_);
    const auto entry = written_.find(std::this_thread::get_id());
    if (entry == written_.end()) return {};
    std::vector<Index> blocks = std::move(entry->second);
    written_.erase(entry);
    return blocks;
  }
  void Clear() {
    const std::lock_guard lock(mutex_);
    written_.clear();
  }

 private:
  std::mutex mutex_;
  std::map<std::thread::id, std::vector<Index>> written_;  // GUARDED_BY(mutex_)
};

}  // namespace tessera::planner
