#include "tessera/core/buffer.hpp"

#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <utility>

#include "tessera/core/errors.hpp"

namespace tessera {
namespace {

// Cache-line alignment: lets SIMD codecs and kernels use aligned loads.
constexpr std::size_t kAlignment = 64;

std::byte* Allocate(std::int64_t size) {
  if (size == 0) return nullptr;
  std::size_t rounded = (static_cast<std::size_t>(size) + kAlignment - 1) / kAlignment * kAlignment;
  void* memory = std::aligned_alloc(kAlignment, rounded);
  if (memory == nullptr) throw std::bad_alloc();
  return static_cast<std::byte*>(memory);
}

}  // namespace

Buffer::Buffer(std::int64_t size) {
  if (size < 0) throw InvalidArgument("Buffer size must be >= 0, got " + std::to_string(size));
  data_ = Allocate(size);
  size_ = size;
  capacity_ = size;
}

Buffer::~Buffer() { std::free(data_); }

Buffer::Buffer(Buffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      capacity_(std::exchange(other.capacity_, 0)) {}

Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    std::free(data_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    capacity_ = std::exchange(other.capacity_, 0);
  }
  return *this;
}

Buffer Buffer::CopyOf(std::span<const std::byte> bytes) {
  Buffer buffer(static_cast<std::int64_t>(bytes.size()));
  if (!bytes.empty()) std::memcpy(buffer.data(), bytes.data(), bytes.size());
  return buffer;
}

Buffer Buffer::Clone() const { return CopyOf(span()); }

void Buffer::Truncate(std::int64_t new_size) {
  if (new_size < 0 || new_size > capacity_) {
    throw InvalidArgument("Buffer::Truncate(" + std::to_string(new_size) + ") outside capacity " +
                          std::to_string(capacity_));
  }
  size_ = new_size;
}

}  // namespace tessera
