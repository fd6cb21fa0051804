#include "memory_admission.hpp"

#include <algorithm>

namespace tessera::exec {

std::int64_t TaskCost(const ExecutableOp& op, std::int64_t task, std::int64_t reserved_mem) {
  const OpInfo& info = op.info();
  std::int64_t held = op.projected_mem(task);
  if (info.estimate_from_history) held = std::max(held, info.estimated_mem);
  return std::max<std::int64_t>(held - reserved_mem, 1);
}

void MemoryAdmission::Admit(std::int64_t cost) {
  admitted_ += cost;
  ++running_;
  max_running_ = std::max(max_running_, running_);
  max_admitted_ = std::max(max_admitted_, admitted_);
}

void MemoryAdmission::Release(std::int64_t cost) {
  admitted_ -= cost;
  --running_;
}

}  // namespace tessera::exec
