// Wire: the bytes of the MPI executor's messages. A Writer appends fixed-size values and
// length-prefixed strings and byte runs; a Reader takes them back in the same order and
// throws Error on a message shorter than what it reads (a defect: the ranks run one
// build). Little-endian as the machine is: every rank of one run runs the same binary.
// Internal to src/exec/mpi.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "tessera/core/errors.hpp"

namespace tessera::exec::mpi {

class Writer {
 public:
  template <typename T>
  Writer& Put(T value) {
    static_assert(std::is_trivially_copyable_v<T>);
    Append(&value, sizeof(T));
    return *this;
  }
  Writer& PutString(const std::string& text) {
    Put<std::uint64_t>(text.size());
    Append(text.data(), text.size());
    return *this;
  }
  Writer& PutBytes(std::span<const std::byte> bytes) {
    Put<std::uint64_t>(bytes.size());
    Append(bytes.data(), bytes.size());
    return *this;
  }
  std::vector<std::byte> Take() { return std::move(bytes_); }

 private:
  void Append(const void* data, std::size_t size) {
    if (size == 0) return;
    const std::size_t at = bytes_.size();
    bytes_.resize(at + size);
    std::memcpy(bytes_.data() + at, data, size);
  }

  std::vector<std::byte> bytes_;
};

class Reader {
 public:
  explicit Reader(std::span<const std::byte> bytes) : bytes_(bytes) {}

  template <typename T>
  T Get() {
    static_assert(std::is_trivially_copyable_v<T>);
    T value;
    std::memcpy(&value, Take(sizeof(T)).data(), sizeof(T));
    return value;
  }
  std::string GetString() {
    const std::span<const std::byte> bytes = Take(Get<std::uint64_t>());
    return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  }
  // A view into the message (valid while the message is).
  std::span<const std::byte> GetBytes() { return Take(Get<std::uint64_t>()); }

 private:
  std::span<const std::byte> Take(std::size_t size) {
    if (size > bytes_.size() - offset_) {
      throw Error("internal error: an MPI executor message is shorter than its contents");
    }
    const std::span<const std::byte> taken = bytes_.subspan(offset_, size);
    offset_ += size;
    return taken;
  }

  std::span<const std::byte> bytes_;
  std::size_t offset_ = 0;
};

}  // namespace tessera::exec::mpi
