// ConcurrencyGauge: how many calls of some code run at once, and the most that ever did
// (tests of admission and of concurrency limits count inside a task or kernel).
//
//   testing::ConcurrencyGauge gauge;
//   gauge.Enter();  ...  gauge.Leave();       // around the code, on any thread
//   EXPECT_LE(gauge.most(), 2);
#pragma once

#include <atomic>

namespace tessera::testing {

class ConcurrencyGauge {
 public:
  // One more call runs; returns how many run now.
  int Enter() {
    const int now = running_.fetch_add(1) + 1;
    int seen = most_.load();
    while (now > seen && !most_.compare_exchange_weak(seen, now)) {
    }
    return now;
  }
  void Leave() { running_.fetch_sub(1); }
  int running() const { return running_.load(); }
  int most() const { return most_.load(); }
  // Starts counting afresh. REQUIRES: nothing runs.
  void Reset() {
    running_ = 0;
    most_ = 0;
  }

 private:
  std::atomic<int> running_{0};
  std::atomic<int> most_{0};
};

}  // namespace tessera::testing
