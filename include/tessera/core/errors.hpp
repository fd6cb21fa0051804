// Tessera's error types (API.md "Errors").
//
// Every error thrown by the public API derives from tessera::Error, which is a
// std::runtime_error. Messages say what was expected, what was found, and what to
// change. Pick the type by who must act:
//   InvalidArgument    the caller passed a bad value (shape, size string, option).
//   MemoryBudgetError  a plan cannot run within allowed_mem (thrown by planning only).
//   StorageError       the store failed (I/O error, missing array, permission).
//   FormatError        stored data is malformed: bad Zarr metadata or a corrupt chunk.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace tessera {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class InvalidArgument : public Error {
 public:
  using Error::Error;
};

class MemoryBudgetError : public Error {
 public:
  using Error::Error;
  // A refusal of tasks over allowed_mem that names the smallest allowed_mem that plans
  // the same computation (the figure its message gives).
  MemoryBudgetError(const std::string& message, std::int64_t required_allowed_mem)
      : Error(message), required_allowed_mem_(required_allowed_mem) {}

  // That figure, in bytes; 0 when the refusal names none (a forced RAM tier over
  // total_mem, no budget up to total_mem).
  std::int64_t required_allowed_mem() const { return required_allowed_mem_; }

 private:
  std::int64_t required_allowed_mem_ = 0;
};

class StorageError : public Error {
 public:
  using Error::Error;
};

class FormatError : public Error {
 public:
  using Error::Error;
};

}  // namespace tessera
