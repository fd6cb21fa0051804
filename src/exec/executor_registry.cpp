#include <string>
#include <utility>

#ifdef TESSERA_WITH_MPI
#include "mpi/mpi_executor.hpp"
#endif
#include "sync/sync_executor.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/exec/internal/executor.hpp"
#include "threads/threads_executor.hpp"

namespace tessera::exec {
namespace {

// "a", "b" or "c" style lists: `quoted` each in quotes, joined with `last` before the
// last one.
std::string JoinQuoted(const std::vector<std::string>& quoted, const std::string& last) {
  std::string text;
  for (std::size_t index = 0; index < quoted.size(); ++index) {
    if (index > 0) text += index + 1 == quoted.size() ? last : ", ";
    text += quoted[index];
  }
  return text;
}

}  // namespace

void RegisterBuiltinExecutors(ExecutorRegistry& registry) {
  RegisterSyncExecutor(registry);
  RegisterThreadsExecutor(registry);
#ifdef TESSERA_WITH_MPI
  RegisterMpiExecutor(registry);
#else
  registry.RegisterUnavailable(
      "mpi",
      "was not built: MPI was not found when this Tessera was built (install "
      "libopenmpi-dev and openmpi-bin, then rebuild)");
#endif
  // Python's tessera module registers them on import (RegisterRemoteExecutor,
  // tessera/exec/remote_tasks.hpp).
  for (const char* name : {"dask", "ray"}) {
    registry.RegisterUnavailable(name, "runs from Python only");
  }
}

ExecutorRegistry& ExecutorRegistry::Global() {
  // Built on first use (thread-safe), never destroyed: executors may run until exit.
  static ExecutorRegistry* const registry = [] {
    auto* built = new ExecutorRegistry;
    RegisterBuiltinExecutors(*built);
    return built;
  }();
  return *registry;
}

void ExecutorRegistry::Add(std::string name, Entry entry) {
  if (name.empty()) throw InvalidArgument("ExecutorRegistry: an executor needs a name");
  std::lock_guard<std::mutex> lock(mutex_);
  if (!entries_.emplace(name, std::move(entry)).second) {
    throw InvalidArgument("ExecutorRegistry: an executor named \"" + name +
                          "\" is registered already");
  }
}

void ExecutorRegistry::Register(std::string name, std::string summary, Factory factory) {
  if (!factory) {
    throw InvalidArgument("ExecutorRegistry: executor \"" + name + "\" has no factory");
  }
  Add(std::move(name), Entry{std::move(summary), std::move(factory)});
}

void ExecutorRegistry::RegisterUnavailable(std::string name, std::string reason) {
  Add(std::move(name), Entry{std::move(reason), nullptr});
}

bool ExecutorRegistry::Unregister(std::string_view name) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto entry = entries_.find(name);
  if (entry == entries_.end()) return false;
  entries_.erase(entry);
  return true;
}

std::vector<std::string> ExecutorRegistry::names() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::string> names;
  for (const auto& [name, entry] : entries_) {
    if (entry.factory) names.push_back(name);
  }
  return names;
}

std::unique_ptr<Executor> ExecutorRegistry::Make(const Spec& spec) const {
  Factory factory;
  std::vector<std::string> usable;       // "\"sync\" (one task at a time)"
  std::vector<std::string> valid;        // "\"sync\""
  std::vector<std::string> unavailable;  // "\"mpi\" is not supported yet"
  std::string reason;                    // why spec.executor is unavailable
  bool known = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (const auto entry = entries_.find(spec.executor); entry != entries_.end()) {
      known = true;
      factory = entry->second.factory;
      if (!factory) reason = entry->second.summary;
    }
    if (!factory) {
      for (const auto& [name, entry] : entries_) {
        const std::string quoted = "\"" + name + "\"";
        if (entry.factory) {
          usable.push_back(quoted + " (" + entry.summary + ")");
          valid.push_back(quoted);
        } else {
          unavailable.push_back(quoted + " " + entry.summary);
        }
      }
    }
  }
  if (factory) return factory(spec);  // outside the lock: a factory may use the registry
  if (known) {
    throw InvalidArgument("executor \"" + spec.executor + "\" " + reason + "; use " +
                          JoinQuoted(usable, " or "));
  }
  std::string message =
      "unknown executor \"" + spec.executor + "\"; valid executors: " + JoinQuoted(valid, ", ");
  if (!unavailable.empty()) message += " (" + JoinQuoted(unavailable, ", ") + ")";
  throw InvalidArgument(message);
}

std::unique_ptr<Executor> MakeExecutor(const Spec& spec) {
  return ExecutorRegistry::Global().Make(spec);
}

}  // namespace tessera::exec
