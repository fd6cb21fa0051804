#include "tessera/core/warning.hpp"

#include <cstdio>
#include <mutex>
#include <utility>

namespace tessera {
namespace {

std::mutex& HandlerMutex() {
  static std::mutex mutex;
  return mutex;
}

WarningHandler& CurrentHandler() {
  static WarningHandler handler;
  return handler;
}

}  // namespace

void Warn(const std::string& warning) {
  std::lock_guard<std::mutex> lock(HandlerMutex());
  const WarningHandler& handler = CurrentHandler();
  if (!handler) {
    std::fprintf(stderr, "tessera: warning: %s\n", warning.c_str());
    return;
  }
  try {
    handler(warning);
  } catch (...) {
    // A warning never stops a computation (warning.hpp).
  }
}

WarningHandler SetWarningHandler(WarningHandler handler) {
  std::lock_guard<std::mutex> lock(HandlerMutex());
  return std::exchange(CurrentHandler(), std::move(handler));
}

}  // namespace tessera
