#include "tessera/core/cluster.hpp"

#include <atomic>
#include <charconv>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>

#include "tessera/core/errors.hpp"

namespace tessera {
namespace {

std::atomic<ClusterProvider> provider{nullptr};

struct Joined {
  std::mutex mutex;
  bool known = false;  // GUARDED_BY(mutex)
  ClusterFacts facts;  // GUARDED_BY(mutex); never changes once known
};

Joined& JoinedCluster() {
  static Joined* const joined = new Joined;  // never destroyed: read until exit
  return *joined;
}

}  // namespace

void SetClusterProvider(ClusterProvider new_provider) { provider.store(new_provider); }

const ClusterFacts& JoinCluster() {
  Joined& joined = JoinedCluster();
  const std::lock_guard lock(joined.mutex);
  if (!joined.known) {
    const ClusterProvider ask = provider.load();
    if (ask == nullptr) {
      throw InvalidArgument(
          "executor \"mpi\": this build of Tessera has no MPI support (MPI was not found when "
          "it was built); install an MPI implementation (Debian: libopenmpi-dev openmpi-bin) "
          "and rebuild, or choose the \"threads\" executor");
    }
    joined.facts = ask();
    joined.known = true;
  }
  return joined.facts;
}

bool ClusterJoined() {
  Joined& joined = JoinedCluster();
  const std::lock_guard lock(joined.mutex);
  return joined.known;
}

std::optional<long long> ProcessStartTicks(long long pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(stat, text)) return std::nullopt;
  // The command name (field 2) is in parentheses and may hold spaces: skip past it.
  const std::size_t close = text.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(text.substr(close + 1));
  std::string field;
  for (int index = 3; index <= 22; ++index) {
    if (!(fields >> field)) return std::nullopt;
  }
  long long start = 0;
  const auto [end, error] = std::from_chars(field.data(), field.data() + field.size(), start);
  if (error != std::errc() || end != field.data() + field.size()) return std::nullopt;
  return start;
}

}  // namespace tessera
