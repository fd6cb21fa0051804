// Creating arrays (API.md "creation"). All lazy: nothing is allocated or read until a
// plan runs; `chunks` gives each dimension's block extent ({} = one block).
//
//   auto a = tessera::ones({1000, 1000}, tessera::float32, {100, 100}, spec);
//   auto r = tessera::random::random({1000, 1000}, {100, 100}, spec, /*seed=*/42);
//   auto x = tessera::asarray(ndarray, {2, 2}, spec);
//   auto z = tessera::from_zarr("data.zarr/t2m", spec);      // reads .zarray only
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tessera/api/array.hpp"
#include "tessera/core/scalar.hpp"

namespace tessera {

Array ones(Shape shape, DType dtype, Shape chunks, const Spec& spec);
Array zeros(Shape shape, DType dtype, Shape chunks, const Spec& spec);
Array full(Shape shape, Scalar value, DType dtype, Shape chunks, const Spec& spec);
// The shape, chunks and spec of `like` (nothing of it is read), with its dtype or, as
// numpy's dtype=, the one given; full_like casts `value` to that dtype as full() does.
Array ones_like(const Array& like, std::optional<DType> dtype = std::nullopt);
Array zeros_like(const Array& like, std::optional<DType> dtype = std::nullopt);
Array full_like(const Array& like, Scalar value, std::optional<DType> dtype = std::nullopt);
// start, start + step, ... below stop (above it for a negative step), as numpy.arange.
Array arange(double start, double stop, double step, DType dtype, Index chunk, const Spec& spec);
Array arange(Index stop, Index chunk, const Spec& spec);  // int64 0, 1, ..., stop - 1

Array asarray(NDArray data, Shape chunks, const Spec& spec);
template <class T>
Array asarray(std::initializer_list<T> values, Shape chunks, const Spec& spec) {
  const std::vector<T> copy(values);
  return asarray(NDArray::FromValues<T>({static_cast<Index>(copy.size())}, copy), std::move(chunks),
                 spec);
}
template <class T>
Array asarray(std::initializer_list<std::initializer_list<T>> rows, Shape chunks,
              const Spec& spec) {
  std::vector<T> values;
  Index columns = rows.size() == 0 ? 0 : static_cast<Index>(rows.begin()->size());
  for (const auto& row : rows) {
    if (static_cast<Index>(row.size()) != columns) {
      throw InvalidArgument("asarray: rows of different lengths");
    }
    values.insert(values.end(), row.begin(), row.end());
  }
  return asarray(NDArray::FromValues<T>({static_cast<Index>(rows.size()), columns}, values),
                 std::move(chunks), spec);
}

// A stored Zarr v2 array: a directory path ("data.zarr" or "data.zarr/t2m"), or a path
// in a store. Reads the metadata now (FormatError, StorageError); no chunk until run.
Array from_zarr(const std::string& path, const Spec& spec);
Array from_zarr(std::shared_ptr<Store> store, const std::string& path, const Spec& spec);

namespace random {
// Uniform float64 in [0, 1). The same seed gives the same values whatever the chunking.
Array random(Shape shape, Shape chunks, const Spec& spec, std::uint64_t seed = 0);
}  // namespace random

}  // namespace tessera
