// Warnings: things a user should know that are no reason to stop (a history database
// that cannot be written, a task that measured more than its projection).
//
//   tessera::Warn("history database ... is damaged; the run goes on without history");
//   auto previous = tessera::SetWarningHandler([](const std::string& w) { log(w); });
//
// By default a warning is printed to stderr as "tessera: warning: <text>". A handler
// replaces that for the whole process (null restores the default); it may be called from
// any thread, one warning at a time. A handler that throws has its exception swallowed:
// a warning never stops a computation. A handler runs under Tessera's locks: it must
// not call Warn or SetWarningHandler, nor open or use a history database.
#pragma once

#include <functional>
#include <string>

namespace tessera {

using WarningHandler = std::function<void(const std::string& warning)>;

// Sends `warning` to the current handler.
void Warn(const std::string& warning);

// Installs `handler` (null: the default, stderr) and returns the one it replaces.
WarningHandler SetWarningHandler(WarningHandler handler);

// Installs a handler for the lifetime of the object, restoring the previous one after.
class ScopedWarningHandler {
 public:
  explicit ScopedWarningHandler(WarningHandler handler)
      : previous_(SetWarningHandler(std::move(handler))) {}
  ~ScopedWarningHandler() { SetWarningHandler(std::move(previous_)); }
  ScopedWarningHandler(const ScopedWarningHandler&) = delete;
  ScopedWarningHandler& operator=(const ScopedWarningHandler&) = delete;

 private:
  WarningHandler previous_;
};

}  // namespace tessera
