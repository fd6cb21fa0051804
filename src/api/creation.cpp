#include "tessera/api/creation.hpp"

#include <cmath>
#include <utility>

#include "tessera/core/errors.hpp"
#include "tessera/plan/internal/node.hpp"
#include "tessera/storage/open_store.hpp"

namespace tessera {

using planner::MakeArange;
using planner::MakeConstant;
using planner::MakeInMemory;
using planner::MakeRandom;
using planner::MakeZarrSource;

Array ones(Shape shape, DType dtype, Shape chunks, const Spec& spec) {
  return Array(MakeConstant(std::move(shape), Scalar(1), dtype, std::move(chunks), "ones"), spec);
}

Array zeros(Shape shape, DType dtype, Shape chunks, const Spec& spec) {
  return Array(MakeConstant(std::move(shape), Scalar(0), dtype, std::move(chunks), "zeros"), spec);
}

Array full(Shape shape, Scalar value, DType dtype, Shape chunks, const Spec& spec) {
  return Array(MakeConstant(std::move(shape), value, dtype, std::move(chunks), "full"), spec);
}

Array ones_like(const Array& like, std::optional<DType> dtype) {
  return ones(like.shape(), dtype.value_or(like.dtype()), like.chunks(), like.spec());
}
Array zeros_like(const Array& like, std::optional<DType> dtype) {
  return zeros(like.shape(), dtype.value_or(like.dtype()), like.chunks(), like.spec());
}
Array full_like(const Array& like, Scalar value, std::optional<DType> dtype) {
  return full(like.shape(), value, dtype.value_or(like.dtype()), like.chunks(), like.spec());
}

Array arange(double start, double stop, double step, DType dtype, Index chunk, const Spec& spec) {
  if (step == 0) throw InvalidArgument("arange: step must not be 0");
  if (!std::isfinite(start) || !std::isfinite(stop) || !std::isfinite(step)) {
    throw InvalidArgument("arange: start, stop and step must be finite");
  }
  const double count = std::ceil((stop - start) / step);
  const Index length = count > 0 ? static_cast<Index>(count) : 0;
  return Array(MakeArange(start, step, length, dtype, {chunk}), spec);
}

Array arange(Index stop, Index chunk, const Spec& spec) {
  return arange(0, static_cast<double>(stop), 1, int64, chunk, spec);
}

Array asarray(NDArray data, Shape chunks, const Spec& spec) {
  return Array(MakeInMemory(std::move(data), std::move(chunks)), spec);
}

Array from_zarr(const std::string& path, const Spec& spec) {
  return Array(MakeZarrSource(OpenStore(path, {.create = false}), ""), spec);
}

Array from_zarr(std::shared_ptr<Store> store, const std::string& path, const Spec& spec) {
  if (store == nullptr) throw InvalidArgument("from_zarr: the store is null");
  return Array(MakeZarrSource(std::move(store), path), spec);
}

namespace random {
Array random(Shape shape, Shape chunks, const Spec& spec, std::uint64_t seed) {
  return Array(MakeRandom(std::move(shape), std::move(chunks), seed), spec);
}
}  // namespace random

}  // namespace tessera
