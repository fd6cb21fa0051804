// Reduction kernels: the loops behind every round of a reduction (plan/reduce_op.hpp).
//
// A reduction is computed in partial states, one per output element: round 1 turns a
// region of input values into states (FromValues), later rounds combine the states of
// neighbouring regions (FromPartials), and the last round turns states into the result
// dtype (Finish). States are plain bytes (`state_bytes` each) so that partial results
// are stored like any array (uint8, the state as a trailing dimension), in RAM or on disk.
//
//   ReductionKernel k = GetReductionKernel(ReductionOp::kVar, float32, float32);
//   k.from_values(block, reduced, start, full_shape, -1, states);     // round 1, per block
//   k.merge(task_states, states, count);                              //   into the task's
//   k.from_partials(partials, reduced, more_states);                  // round 2..
//   k.finish(more_states, count, {reduced_count, /*correction=*/1}, out);  // last round
//
// What the states hold, and numpy's rules they keep:
// - sum/prod: a float64 accumulator for floats (more accurate than numpy's float32
//   pairwise sum, equal within rounding), a 64-bit one wrapping modulo 2^64 for
//   integers (numpy wraps in the result dtype: the same low bits); sum of bools is
//   their logical or, prod their logical and (numpy's add/multiply on bool).
// - min/max: NaN anywhere gives NaN; argmin/argmax: the first NaN's index if any, else
//   the first extreme's (value, index), ties going to the smaller index.
// - mean: the sum in float64, divided by the number of values reduced (the same for
//   every output element, so no state carries it); var/std: (count, mean, M2), computed two-pass
//   within a region and combined across regions with Chan et al.'s formula; the result is M2 /
//   max(count - correction, 0) as numpy (0/0 gives NaN).
// - all/any: NaN counts as true; count_nonzero: an int64 count.
// The caller casts the input to the result dtype first where numpy would (an explicit
// dtype, integer promotion of sum/prod): the kernel's input and result dtypes differ
// only where the state is the wider type (float32 -> float64 accumulator, mean/var/std
// of integers, arg*/all/any/count_nonzero).
#pragma once

#include <cstddef>
#include <vector>

#include "tessera/core/dtype.hpp"
#include "tessera/core/ndarray.hpp"
#include "tessera/core/shape.hpp"
#include "tessera/plan/reduction.hpp"

namespace tessera::kernels {

// What the last round knows of the whole reduction.
struct ReductionFinish {
  double reduced_count = 0;  // values reduced into each output element (mean)
  double correction = 0;     // var/std: numpy's ddof
};

struct ReductionKernel {
  // Bytes of one partial state.
  Index state_bytes = 0;
  // The states of `values` over its dimensions with `reduced[d]`: one per element of
  // values' shape without them (C order), written to `states` (overwritten).
  // `start` and `full_shape` place `values` in the whole input, for argmin/argmax's
  // indices: along `index_axis`, or into the flattened input when it is -1.
  void (*from_values)(const NDArray& values, const std::vector<bool>& reduced, const Shape& start,
                      const Shape& full_shape, int index_axis, std::byte* states) = nullptr;
  // The states combining `partials` (uint8, shape P + [state_bytes]) over the
  // dimensions of P with `reduced[d]` (reduced.size() == P's rank), in C order of P:
  // written to `states` (overwritten).
  void (*from_partials)(const NDArray& partials, const std::vector<bool>& reduced,
                        std::byte* states) = nullptr;
  // Combines `count` states of `from` (covering later elements) into `into`.
  void (*merge)(std::byte* into, const std::byte* from, Index count) = nullptr;
  // `count` results of the result dtype from `count` states.
  void (*finish)(const std::byte* states, Index count, const ReductionFinish& how,
                 std::byte* out) = nullptr;
};

// The kernel of `op` over `input` values giving `result`. InvalidArgument for a pair the
// planner never asks for (see above).
ReductionKernel GetReductionKernel(ReductionOp op, DType input, DType result);

}  // namespace tessera::kernels
