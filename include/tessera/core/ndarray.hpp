// NDArray: an in-memory, owned, contiguous C-order array — the result of compute().
//
//   tessera::NDArray a({3, 4}, tessera::float64);   // uninitialized
//   auto values = a.mutable_data<double>();         // std::span<double>, 12 elements
//   a.data<double>()[5];                            // read access, C order
//
// data<T>() requires T to match dtype() exactly and throws InvalidArgument otherwise.
// Copying deep-copies the elements (into memory of its own); moving is cheap.
// NDArray::Borrow views elements that another owner keeps alive (asarray of a numpy
// array shares it): read-only, so mutable_data/mutable_bytes on it throw InvalidArgument.
#pragma once

#include <cstring>
#include <span>

#include "tessera/core/buffer.hpp"
#include "tessera/core/dtype.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/core/shape.hpp"

namespace tessera {

class NDArray {
 public:
  // A 0-d float64 array holding 0.
  NDArray();
  // Uninitialized elements. Throws InvalidArgument for negative extents or overflow.
  NDArray(Shape shape, DType dtype);

  // Every element set to `value` converted to dtype (as static_cast would).
  static NDArray Full(Shape shape, DType dtype, double value);
  static NDArray Zeros(Shape shape, DType dtype) { return Full(std::move(shape), dtype, 0); }
  // A copy of `values` with the given shape; throws InvalidArgument if sizes differ.
  template <class T>
  static NDArray FromValues(Shape shape, std::span<const T> values) {
    NDArray array(std::move(shape), DTypeOf<T>());
    if (static_cast<Index>(values.size()) != array.size()) {
      throw InvalidArgument("NDArray::FromValues: shape " + ShapeToString(array.shape()) +
                            " needs " + std::to_string(array.size()) + " values, got " +
                            std::to_string(values.size()));
    }
    if (!values.empty()) std::memcpy(array.buffer_.data(), values.data(), values.size_bytes());
    return array;
  }

  // A read-only view of C-order elements at `data` (aligned for dtype), which `owner`
  // keeps alive as long as this NDArray or anything moved from it holds them.
  static NDArray Borrow(Shape shape, DType dtype, const std::byte* data,
                        std::shared_ptr<const void> owner);
  bool borrowed() const { return buffer_.borrowed(); }

  NDArray(const NDArray& other);
  NDArray& operator=(const NDArray& other);
  // A moved-from NDArray is empty: shape {0}, size 0.
  NDArray(NDArray&& other) noexcept;
  NDArray& operator=(NDArray&& other) noexcept;

  const Shape& shape() const { return shape_; }
  int ndim() const { return static_cast<int>(shape_.size()); }
  DType dtype() const { return dtype_; }
  Index size() const { return size_; }
  Index nbytes() const { return size_ * dtype_.itemsize(); }

  template <class T>
  std::span<const T> data() const {
    CheckType(DTypeOf<T>());
    return {reinterpret_cast<const T*>(buffer_.data()), static_cast<std::size_t>(size_)};
  }
  template <class T>
  std::span<T> mutable_data() {
    CheckType(DTypeOf<T>());
    CheckWritable();
    return {reinterpret_cast<T*>(buffer_.data()), static_cast<std::size_t>(size_)};
  }
  std::span<const std::byte> bytes() const {
    return {buffer_.data(), static_cast<std::size_t>(nbytes())};
  }
  std::span<std::byte> mutable_bytes() {
    CheckWritable();
    return {buffer_.data(), static_cast<std::size_t>(nbytes())};
  }

  // Element at a C-order linear index, converted to double (for printing and tests); a
  // complex element gives its real part.
  double GetAsDouble(Index linear_index) const;

  // True when shapes, dtypes and bytes are identical (NaN payloads compare bitwise).
  friend bool operator==(const NDArray& a, const NDArray& b);

 private:
  void CheckType(DType requested) const;
  void CheckWritable() const {
    if (buffer_.borrowed()) ThrowBorrowed();
  }
  [[noreturn]] static void ThrowBorrowed();
  // Shape, dtype and size set, no elements: Borrow fills in the buffer (the public
  // constructors would allocate one first).
  NDArray(Shape shape, DType dtype, Index size, Buffer buffer)
      : shape_(std::move(shape)), dtype_(dtype), size_(size), buffer_(std::move(buffer)) {}

  Shape shape_;
  DType dtype_ = float64;
  Index size_ = 0;
  Buffer buffer_;
};

}  // namespace tessera
