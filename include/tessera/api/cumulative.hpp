// Cumulative sums and products along one axis (the array API's cumulative_sum and
// cumulative_prod; numpy's cumsum and cumprod).
//
//   auto running = tessera::cumulative_sum(rain, 0);            // along time
//   auto growth = tessera::cumulative_prod(rates, 1, tessera::float64);
//   auto padded = tessera::cumulative_sum(x, 0, std::nullopt, /*include_initial=*/true);
//
// Planned chunk by chunk, never the whole axis at once: each block is scanned on its
// own, the last element of each block (its running total) is scanned again, smaller
// (recursively when there are many blocks), and each block then adds (multiplies by)
// the totals of the blocks before it. Every task holds a few blocks whatever the
// axis's length; the plan's memory check covers each step. Lazy like every Array.
//
// axis may be omitted for a 1-d x only (the standard's rule); dtype, as sum's: bool and
// signed ints accumulate in int64, unsigned ints in uint64, floats in their own type.
// include_initial puts the initial value (0, or 1 for the product) first, so the axis
// grows by one. Integer overflow wraps, as numpy's. Floats are rounded as a blocked
// scan rounds, which can differ from a sequential one in the last bits.
#pragma once

#include <optional>

#include "tessera/api/array.hpp"

namespace tessera {

Array cumulative_sum(const Array& x, std::optional<int> axis = std::nullopt,
                     std::optional<DType> dtype = std::nullopt, bool include_initial = false);
Array cumulative_prod(const Array& x, std::optional<int> axis = std::nullopt,
                      std::optional<DType> dtype = std::nullopt, bool include_initial = false);

}  // namespace tessera
