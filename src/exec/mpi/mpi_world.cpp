#include "mpi_world.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <string>
#include <thread>

#include "tessera/core/errors.hpp"
#include "tessera/core/parallel.hpp"
#include "tessera/core/spec.hpp"

namespace tessera::exec::mpi {
namespace {

std::string ThreadLevelName(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE:
      return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED:
      return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED:
      return "MPI_THREAD_SERIALIZED";
    default:
      return "MPI_THREAD_MULTIPLE";
  }
}

void Check(int code, const char* what) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw Error(std::string("MPI executor: ") + what +
              " failed: " + std::string(text, static_cast<std::size_t>(length)));
}

void FinalizeAtExit() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

}  // namespace

MpiWorld& MpiWorld::Get() {
  static MpiWorld* const world = new MpiWorld;  // never destroyed: MPI lives to exit
  return *world;
}

MpiWorld::MpiWorld() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  int provided = MPI_THREAD_SINGLE;
  if (initialized) {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized) {
      throw InvalidArgument(
          "executor \"mpi\": MPI was already finalised in this process; run Tessera before "
          "MPI_Finalize");
    }
    MPI_Query_thread(&provided);
  } else {
    Check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided), "MPI_Init_thread");
    std::atexit(FinalizeAtExit);
  }
  if (provided < MPI_THREAD_SERIALIZED) {
    throw InvalidArgument(
        "executor \"mpi\": MPI was initialised with " + ThreadLevelName(provided) +
        ", but Tessera's MPI executor calls MPI from a thread of its own and needs "
        "MPI_THREAD_SERIALIZED or MPI_THREAD_MULTIPLE; initialise MPI with "
        "MPI_Init_thread(..., MPI_THREAD_MULTIPLE, ...) (mpi4py does by default: leave "
        "mpi4py.rc.thread_level as \"multiple\")");
  }
  Check(MPI_Comm_dup(MPI_COMM_WORLD, &comm_), "MPI_Comm_dup");
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  MPI_Comm node = MPI_COMM_NULL;
  Check(MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node),
        "MPI_Comm_split_type");
  MPI_Comm_size(node, &ranks_on_node_);
  int rank_on_node = 0;
  MPI_Comm_rank(node, &rank_on_node);
  first_on_node_ = rank_on_node == 0;
  MPI_Comm_free(&node);
}

ClusterFacts JoinMpiCluster() {
  const MpiWorld& world = MpiWorld::Get();
  ClusterFacts facts;
  facts.ranks = world.size();
  facts.rank = world.rank();
  const long long own_mem = detect_total_mem() / world.ranks_on_node();
  std::vector<long long> mem(static_cast<std::size_t>(world.size()), 0);
  Check(MPI_Allgather(&own_mem, 1, MPI_LONG_LONG, mem.data(), 1, MPI_LONG_LONG, world.comm()),
        "MPI_Allgather");
  for (const long long bytes : mem) {
    facts.rank_mem.push_back(bytes);
    facts.total_mem += bytes;
  }
  const int own_threads = std::max(HardwareThreads() / world.ranks_on_node(), 1);
  facts.rank_threads.assign(static_cast<std::size_t>(world.size()), 0);
  Check(
      MPI_Allgather(&own_threads, 1, MPI_INT, facts.rank_threads.data(), 1, MPI_INT, world.comm()),
      "MPI_Allgather");
  // A machine's first rank (the lowest on it) counts it.
  const int first_on_node = world.first_on_node() ? 1 : 0;
  Check(MPI_Allreduce(&first_on_node, &facts.nodes, 1, MPI_INT, MPI_SUM, world.comm()),
        "MPI_Allreduce");
  long long leader[2] = {static_cast<long long>(getpid()), ProcessStartTicks(getpid()).value_or(0)};
  Check(MPI_Bcast(leader, 2, MPI_LONG_LONG, 0, world.comm()), "MPI_Bcast");
  facts.leader_pid = leader[0];
  facts.leader_start = leader[1];
  return facts;
}

Channel::Channel(const MpiWorld& world) {
  Check(MPI_Comm_dup(world.comm(), &comm_), "MPI_Comm_dup");
}

Channel::~Channel() {
  try {
    Close();
  } catch (...) {
    // An MPI failure while unwinding: the process ends anyway (MPI aborts the job).
  }
}

void Channel::Close() {
  if (comm_ == MPI_COMM_NULL) return;
  while (Flush()) {
    while (Poll()) {
    }
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  MPI_Request barrier = MPI_REQUEST_NULL;
  Check(MPI_Ibarrier(comm_, &barrier), "MPI_Ibarrier");
  int done = 0;
  while (!done) {
    while (Poll()) {
    }
    Check(MPI_Test(&barrier, &done, MPI_STATUS_IGNORE), "MPI_Test");
    if (!done) std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  MPI_Comm_free(&comm_);
  comm_ = MPI_COMM_NULL;
}

void Channel::Send(int destination, int tag, std::vector<std::byte> bytes) {
  if (bytes.size() > static_cast<std::size_t>(INT_MAX)) {
    throw Error("MPI executor: a message of " + std::to_string(bytes.size()) +
                " bytes is larger than MPI sends at once (2 GiB); use smaller chunks");
  }
  Sending& sending = sending_.emplace_back();
  sending.bytes = std::move(bytes);
  Check(MPI_Isend(sending.bytes.data(), static_cast<int>(sending.bytes.size()), MPI_BYTE,
                  destination, tag, comm_, &sending.request),
        "MPI_Isend");
}

std::optional<Message> Channel::Poll() {
  int arrived = 0;
  MPI_Status status;
  Check(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm_, &arrived, &status), "MPI_Iprobe");
  if (!arrived) return std::nullopt;
  int size = 0;
  MPI_Get_count(&status, MPI_BYTE, &size);
  Message message;
  message.source = status.MPI_SOURCE;
  message.tag = status.MPI_TAG;
  message.bytes.resize(static_cast<std::size_t>(size));
  Check(MPI_Recv(message.bytes.data(), size, MPI_BYTE, status.MPI_SOURCE, status.MPI_TAG, comm_,
                 MPI_STATUS_IGNORE),
        "MPI_Recv");
  return message;
}

bool Channel::Flush() {
  std::size_t kept = 0;
  for (std::size_t index = 0; index < sending_.size(); ++index) {
    int done = 0;
    Check(MPI_Test(&sending_[index].request, &done, MPI_STATUS_IGNORE), "MPI_Test");
    if (!done) {
      if (kept != index) sending_[kept] = std::move(sending_[index]);
      ++kept;
    }
  }
  sending_.resize(kept);
  return !sending_.empty();
}

}  // namespace tessera::exec::mpi
