// Small int32 arrays whose values say where they came from (0, 1, 2, ... in C order), for
// the api tests of ops that move elements around (manipulation, indexing): build one,
// compute it back, catch the InvalidArgument a bad call throws. Header-only.
#pragma once

#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "tessera/api/creation.hpp"
#include "tessera/core/errors.hpp"

namespace tessera::testing {

// The spec these tests plan under: 1 MiB per task, 2 workers.
inline Spec SmallSpec() {
  Spec spec;
  spec.allowed_mem = 1 << 20;
  spec.max_workers = 2;
  return spec;
}

// first, first + 1, ... (int32) of `shape` in blocks of `chunks`, in memory.
inline Array Iota(const Shape& shape, const Shape& chunks, std::int32_t first = 0) {
  NDArray values(shape, int32);
  auto data = values.mutable_data<std::int32_t>();
  std::iota(data.begin(), data.end(), first);
  return asarray(std::move(values), chunks, SmallSpec());
}

// The values of an int32 array, computed.
inline std::vector<std::int32_t> Computed(const Array& x) {
  const NDArray values = x.compute();
  const auto data = values.data<std::int32_t>();
  return {data.begin(), data.end()};
}

// The message of the InvalidArgument `fn` throws ("" when it throws none).
template <class Fn>
std::string ErrorOf(Fn&& fn) {
  try {
    fn();
  } catch (const InvalidArgument& error) {
    return error.what();
  }
  return "";
}

}  // namespace tessera::testing
