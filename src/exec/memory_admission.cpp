#include "memory_admission.hpp"

#include <algorithm>

namespace tessera::exec {

std::int64_t TaskCost(const OpInfo& info, std::int64_t projected, std::int64_t reserved_mem) {
  std::int64_t held = projected;
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
