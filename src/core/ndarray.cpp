#include "tessera/core/ndarray.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <utility>

namespace tessera {
namespace {

Index CheckedSize(const Shape& shape) {
  for (std::size_t dim = 0; dim < shape.size(); ++dim) {
    if (shape[dim] < 0) {
      throw InvalidArgument("NDArray shape " + ShapeToString(shape) +
                            " has a negative extent in dimension " + std::to_string(dim));
    }
  }
  return ShapeSize(shape);
}

}  // namespace

NDArray::NDArray() : size_(1), buffer_(8) { std::memset(buffer_.data(), 0, 8); }

NDArray::NDArray(Shape shape, DType dtype)
    : shape_(std::move(shape)),
      dtype_(dtype),
      size_(CheckedSize(shape_)),
      buffer_(CheckedMul(size_, dtype.itemsize())) {}

NDArray NDArray::Borrow(Shape shape, DType dtype, const std::byte* data,
                        std::shared_ptr<const void> owner) {
  const Index size = CheckedSize(shape);
  const std::int64_t bytes = CheckedMul(size, dtype.itemsize());
  if (bytes > 0 && reinterpret_cast<std::uintptr_t>(data) %
                           static_cast<std::uintptr_t>(dtype.component_size()) !=
                       0) {
    throw InvalidArgument("NDArray::Borrow: the elements are not aligned for " +
                          std::string(dtype.name()));
  }
  return NDArray(std::move(shape), dtype, size, Buffer::Borrow(data, bytes, std::move(owner)));
}

void NDArray::ThrowBorrowed() {
  throw InvalidArgument(
      "this NDArray shares another array's memory (asarray of a numpy array) and is "
      "read-only; copy it (NDArray copy = borrowed;) to write");
}

NDArray NDArray::Full(Shape shape, DType dtype, double value) {
  NDArray array(std::move(shape), dtype);
  VisitDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T element{};
    if constexpr (std::is_same_v<T, bool>) {
      element = value != 0;
    } else if constexpr (std::is_integral_v<T>) {
      // The range check keeps the conversion defined: out-of-range or NaN values
      // would be undefined behaviour in a static_cast.
      // T's range is [lowest, 2^digits), both exact in a double.
      const double truncated = std::trunc(value);
      const double upper = std::ldexp(1.0, std::numeric_limits<T>::digits);
      if (!(truncated >= static_cast<double>(std::numeric_limits<T>::lowest()) &&
            truncated < upper)) {
        throw InvalidArgument("NDArray::Full: value " + std::to_string(value) +
                              " does not fit in " + std::string(dtype.name()));
      }
      element = static_cast<T>(truncated);
    } else if constexpr (kIsComplex<T>) {
      element = T(static_cast<typename T::value_type>(value));
    } else {
      element = static_cast<T>(value);
    }
    auto values = array.mutable_data<T>();
    std::fill(values.begin(), values.end(), element);
  });
  return array;
}

NDArray::NDArray(const NDArray& other)
    : shape_(other.shape_),
      dtype_(other.dtype_),
      size_(other.size_),
      buffer_(other.buffer_.Clone()) {}

NDArray::NDArray(NDArray&& other) noexcept
    : shape_(std::exchange(other.shape_, Shape{0})),
      dtype_(other.dtype_),
      size_(std::exchange(other.size_, 0)),
      buffer_(std::move(other.buffer_)) {}

NDArray& NDArray::operator=(NDArray&& other) noexcept {
  if (this != &other) {
    shape_ = std::exchange(other.shape_, Shape{0});
    dtype_ = other.dtype_;
    size_ = std::exchange(other.size_, 0);
    buffer_ = std::move(other.buffer_);
  }
  return *this;
}

NDArray& NDArray::operator=(const NDArray& other) {
  if (this != &other) *this = NDArray(other);
  return *this;
}

double NDArray::GetAsDouble(Index linear_index) const {
  if (linear_index < 0 || linear_index >= size_) {
    throw InvalidArgument("NDArray index " + std::to_string(linear_index) +
                          " out of range for size " + std::to_string(size_));
  }
  return VisitDType(dtype_, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T element = data<T>()[static_cast<std::size_t>(linear_index)];
    if constexpr (kIsComplex<T>) {
      return static_cast<double>(element.real());
    } else {
      return static_cast<double>(element);
    }
  });
}

bool operator==(const NDArray& a, const NDArray& b) {
  if (a.shape_ != b.shape_ || !(a.dtype_ == b.dtype_)) return false;
  auto lhs = a.bytes();
  auto rhs = b.bytes();
  return std::equal(lhs.begin(), lhs.end(), rhs.begin(), rhs.end());
}

void NDArray::CheckType(DType requested) const {
  if (!(requested == dtype_)) {
    throw InvalidArgument("NDArray holds " + std::string(dtype_.name()) +
                          " elements, but they were accessed as " + std::string(requested.name()));
  }
}

}  // namespace tessera
