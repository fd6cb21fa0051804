#include "mpi_executor.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "rank_agent.hpp"
#include "tessera/core/byte_size.hpp"
#include "tessera/core/cluster.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/core/parallel.hpp"
#include "tessera/plan/internal/plan_recipe.hpp"
#include "tessera/storage/open_store.hpp"

namespace tessera::exec::mpi {
namespace {

long long ParseWhole(const std::string& name, const std::string& value, long long lowest) {
  long long parsed = 0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), parsed);
  if (value.empty() || error != std::errc() || end != value.data() + value.size() ||
      parsed < lowest) {
    throw InvalidArgument("executor \"mpi\": executor option " + name +
                          " must be a whole number >= " + std::to_string(lowest) + ", got \"" +
                          value + "\"");
  }
  return parsed;
}

// Across machines without a shared work_dir folder (the system temp dir is one machine's,
// and so are the local disk intermediates of an s3:// work_dir), an op keeping its output
// in local files could not be read by every rank: refused before it runs. The object
// store, which every rank reaches, is no such place.
void RefuseFilesOnOneMachine(const PlanRun& run) {
  const bool object_work_dir = IsObjectStoreLocation(run.spec().work_dir);
  for (const auto& op : run.ops()) {
    if (op->info().tier != Tier::kDisk && op->info().tier != Tier::kMixed) continue;
    if (object_work_dir) {
      throw InvalidArgument(
          "executor \"mpi\": the ranks run on several machines and op \"" + op->info().name +
          "\" keeps its output on one machine's local disk (Spec::local_disk is " +
          format_bytes(run.spec().local_disk) +
          "): set local_disk to 0 (--local-disk 0), so that intermediates beyond the RAM go "
          "to the object store every rank reaches");
    }
    throw InvalidArgument(
        "executor \"mpi\": the ranks run on several machines and op \"" + op->info().name +
        "\" keeps its output in files, but work_dir is not set (the system temp dir is one "
        "machine's): set work_dir (--work-dir, Spec::work_dir) to a folder every rank "
        "reaches");
  }
}

LeaderOptions ParseOptions(const Spec& spec) {
  LeaderOptions options;
  DirectoryOptions& directory = options.directory;
  for (const auto& [name, value] : spec.executor_options) {
    if (name == "min_replicas") {
      directory.min_replicas = static_cast<int>(ParseWhole(name, value, 1));
    } else if (name == "max_replicas") {
      directory.max_replicas = static_cast<int>(ParseWhole(name, value, 1));
    } else if (name == "replicate_after") {
      directory.replicate_after = static_cast<int>(ParseWhole(name, value, 1));
    } else if (name == "place_on_rank") {
      options.place_on_rank = static_cast<int>(ParseWhole(name, value, -1));
    } else if (name == "high_watermark") {
      double fraction = 0;
      const auto [end, error] =
          std::from_chars(value.data(), value.data() + value.size(), fraction);
      if (value.empty() || error != std::errc() || end != value.data() + value.size() ||
          !(fraction > 0 && fraction <= 1)) {
        throw InvalidArgument(
            "executor \"mpi\": executor option high_watermark must be a fraction in (0, 1], "
            "got \"" +
            value + "\"");
      }
      directory.high_watermark = fraction;
    } else {
      throw InvalidArgument("executor \"mpi\": unknown executor option \"" + name +
                            "\"; valid options: min_replicas, max_replicas, replicate_after, "
                            "high_watermark, place_on_rank");
    }
  }
  if (directory.max_replicas < directory.min_replicas) {
    throw InvalidArgument("executor \"mpi\": max_replicas (" +
                          std::to_string(directory.max_replicas) + ") is below min_replicas (" +
                          std::to_string(directory.min_replicas) + ")");
  }
  return options;
}

}  // namespace

MpiExecutor::MpiExecutor(const Spec& spec) : options_(ParseOptions(spec)) {
  const ClusterFacts& cluster = JoinCluster();
  rank_ = cluster.rank;
  ranks_ = cluster.ranks;
  const std::int64_t memory = spec.total_mem != 0
                                  ? spec.total_mem / ranks_
                                  : cluster.rank_mem[static_cast<std::size_t>(rank_)];
  capacity_ = memory - spec.reserved_mem;
  workers_ = spec.effective_max_workers(cluster.rank_threads[static_cast<std::size_t>(rank_)]);
  // Files every rank reads must be on storage every rank reaches: the system temp dir
  // of one machine is not.
  shared_work_dir_ = cluster.nodes == 1 ||
                     (!spec.work_dir.empty() && !IsObjectStoreLocation(spec.work_dir));
}

std::vector<RankSetup> MpiExecutor::Meet(const PlanRun* run, const Channel& channel) const {
  const long long own[4] = {
      run != nullptr ? 1 : 0,
      run != nullptr ? static_cast<long long>(planner::PlanHash(run->ops())) : 0, workers_,
      capacity_};
  std::vector<long long> all(static_cast<std::size_t>(4 * ranks_), 0);
  if (MPI_Allgather(own, 4, MPI_LONG_LONG, all.data(), 4, MPI_LONG_LONG, channel.comm()) !=
      MPI_SUCCESS) {
    throw Error("executor \"mpi\": the ranks could not exchange their plans (MPI_Allgather)");
  }
  std::vector<RankSetup> setups;
  for (int rank = 0; rank < ranks_; ++rank) {
    const long long* figures = &all[static_cast<std::size_t>(4 * rank)];
    if (figures[0] == 0) {
      throw Error("executor \"mpi\": rank " + std::to_string(rank) +
                  " failed before the run started; its own error says why");
    }
    if (figures[1] != all[1]) {
      throw InvalidArgument(
          "executor \"mpi\": rank " + std::to_string(rank) +
          " planned a different computation than rank 0; every rank must run the same "
          "program on the same inputs with the same spec (and the same history database)");
    }
    setups.push_back(RankSetup{static_cast<int>(figures[2]), figures[3]});
  }
  return setups;
}

void MpiExecutor::Abandon() noexcept {
  try {
    Channel channel(MpiWorld::Get());
    try {
      Meet(nullptr, channel);
    } catch (...) {
      // Every rank throws: this one's own error is the one to report.
    }
    channel.Close();
  } catch (...) {
    // MPI itself failed: the job ends by MPI's own rule.
  }
}

AdmissionFigures MpiExecutor::Run(PlanRun& run) {
  const MpiWorld& world = MpiWorld::Get();
  Channel channel(world);
  const std::vector<RankSetup> setups = Meet(&run, channel);
  if (!shared_work_dir_) RefuseFilesOnOneMachine(run);

  // Each rank starts its threads (and rank 0 its leader); they go on only if all did.
  Outbox outbox;
  std::optional<RankAgent> agent;
  std::optional<Leader> leader;
  std::exception_ptr start_error;
  try {
    agent.emplace(run, rank_, workers_, outbox);
    if (rank_ == 0) {
      LeaderOptions options = options_;
      options.can_spill = shared_work_dir_;
      leader.emplace(run, setups, options, outbox, *agent);
    }
  } catch (...) {
    start_error = std::current_exception();
  }
  int started = start_error ? 0 : 1;
  int all_started = 0;
  if (MPI_Allreduce(&started, &all_started, 1, MPI_INT, MPI_MIN, channel.comm()) != MPI_SUCCESS) {
    throw Error("executor \"mpi\": the ranks could not start the run (MPI_Allreduce)");
  }
  if (start_error) std::rethrow_exception(start_error);
  if (all_started == 0) {
    throw Error("executor \"mpi\": a rank failed to start the run; its own error says why");
  }
  if (leader) leader->Start();

  // What fails on this rank's MPI thread (a message too large to send, an order it could
  // not carry out) reaches the leader, which aborts the run on every rank with it.
  const auto fault = [&](const std::exception_ptr& error) {
    if (leader) {
      leader->Fail(error);
      return;
    }
    Writer report;
    report.Put(Report::kStepFailed);
    PutError(report, ToWire(error));
    outbox.Push(0, kTagReport, report.Take());
  };
  const auto over = [&] { return leader ? leader->done() : agent->finished(); };
  const auto send = [&](std::chrono::microseconds wait) {
    for (Outgoing& message : outbox.Take(wait)) {
      try {
        channel.Send(message.destination, message.tag, std::move(message.bytes));
      } catch (...) {
        fault(std::current_exception());
      }
    }
  };
  auto idle = std::chrono::microseconds(0);
  while (!over()) {
    bool handled = false;
    try {  // a failure ends this round; the next round goes on with the messages left
      send(idle);
      channel.Flush();
      while (std::optional<Message> message = channel.Poll()) {
        handled = true;
        if (message->tag == kTagReport && leader) {
          leader->HandleReport(*message);
        } else if (message->tag == kTagControl) {
          agent->HandleOrder(*message);
        } else if (message->tag == kTagData) {
          agent->HandleData(*message);
        }
        if (over()) break;
      }
    } catch (...) {
      fault(std::current_exception());
    }
    // Sleep a little longer while nothing happens (at most 200 us), to leave the cores
    // to the tasks; a task's report wakes the wait at once.
    idle = handled ? std::chrono::microseconds(0)
                   : std::min(std::chrono::microseconds(200), idle + std::chrono::microseconds(20));
  }
  send(std::chrono::microseconds(0));  // the last reports and orders (kFinished, kAbort)
  agent->Stop();
  channel.Close();  // before the leader removes its folder of spilled blocks
  if (leader) {
    if (leader->error()) std::rethrow_exception(leader->error());
    run.SetClusterReport(leader->cluster_report());
    return leader->figures();
  }
  if (agent->error()) Rethrow(*agent->error());
  return {};
}

}  // namespace tessera::exec::mpi

namespace tessera::exec {

void RegisterMpiExecutor(ExecutorRegistry& registry) {
  registry.Register("mpi", "tasks on the ranks of an MPI job",
                    [](const Spec& spec) { return std::make_unique<mpi::MpiExecutor>(spec); });
}

}  // namespace tessera::exec

namespace {

// Planning with executor "mpi" asks the cluster's memory (tessera/core/cluster.hpp): the
// provider is installed as the library loads.
[[maybe_unused]] const bool kClusterProviderInstalled =
    (tessera::SetClusterProvider(&tessera::exec::mpi::JoinMpiCluster), true);

}  // namespace
