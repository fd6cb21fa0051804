// MpiWorld: this process's MPI, as the MPI executor uses it, and Channel, its messages.
//
//   mpi::MpiWorld& world = mpi::MpiWorld::Get();   // starts MPI, or adopts a started one
//   world.rank(), world.size()
//   mpi::Channel channel(world);                   // per run, on one thread
//   channel.Send(1, mpi::kTagControl, bytes);      // never blocks
//   std::optional<mpi::Message> message = channel.Poll();   // whatever has arrived
//
// MpiWorld::Get initialises MPI (MPI_THREAD_MULTIPLE asked for) unless the program
// already did (mpi4py, the user's own MPI_Init); then it only checks that the thread level
// lets one thread other than the main one call MPI (MPI_THREAD_SERIALIZED or above) and
// says what to change otherwise. It works on a duplicate of MPI_COMM_WORLD, so that its
// messages never meet the program's own, and finalises MPI at exit only when it started
// it. Every rank's first Get is collective.
//
// Thread safety: Get is; a Channel is used by one thread at a time, and only one Channel
// exists at once per process (the executor's run holds it).
#pragma once

#include <mpi.h>

#include <cstddef>
#include <optional>
#include <vector>

#include "tessera/core/cluster.hpp"

namespace tessera::exec::mpi {

// Message tags: the leader's orders to a rank, a rank's reports to the leader, and block
// values from one rank to another.
inline constexpr int kTagControl = 1;
inline constexpr int kTagReport = 2;
inline constexpr int kTagData = 3;

class MpiWorld {
 public:
  // The process's MPI (see above). Throws InvalidArgument when MPI was started at a thread
  // level too low to use, Error when it cannot start.
  static MpiWorld& Get();

  int rank() const { return rank_; }
  int size() const { return size_; }
  MPI_Comm comm() const { return comm_; }
  // The ranks on this rank's machine (they share its memory).
  int ranks_on_node() const { return ranks_on_node_; }
  // Whether this rank is its machine's first (lowest) rank.
  bool first_on_node() const { return first_on_node_; }

 private:
  MpiWorld();

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
  int ranks_on_node_ = 1;
  bool first_on_node_ = true;
};

// The cluster's facts (tessera/core/cluster.hpp): each rank's memory is its machine's
// detected memory shared equally by the ranks on that machine.
ClusterFacts JoinMpiCluster();

struct Message {
  int source = 0;
  int tag = 0;
  std::vector<std::byte> bytes;
};

// One run's messages, on a communicator of its own (a duplicate made by the constructor
// and freed by Close: collective), so that nothing a run leaves unread reaches the next.
class Channel {
 public:
  explicit Channel(const MpiWorld& world);
  ~Channel();  // Close(), if not yet
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;

  MPI_Comm comm() const { return comm_; }
  // Ends the run's messages on every rank (collective): completes this rank's sends while
  // discarding whatever still arrives, waits in a barrier (discarding meanwhile) for every
  // rank to have done the same, and frees the communicator. Call once every message the
  // run needs has been handled.
  void Close();

  // Sends `bytes` to rank `destination` (this rank included) without waiting for it.
  void Send(int destination, int tag, std::vector<std::byte> bytes);
  // One message that has arrived (any source, any of the tags above), or nullopt.
  std::optional<Message> Poll();
  // Completes the sends the receivers have taken; true while some are still in flight.
  bool Flush();

 private:
  struct Sending {
    std::vector<std::byte> bytes;
    MPI_Request request = MPI_REQUEST_NULL;
  };
  MPI_Comm comm_ = MPI_COMM_NULL;
  std::vector<Sending> sending_;
};

}  // namespace tessera::exec::mpi
