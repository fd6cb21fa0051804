// The reduction API: kReduce nodes (planned in rounds: WIP, issue 5, see
// docs/issue5-plan.md — planning one throws until then).
#include "tessera/api/reduction.hpp"

#include <algorithm>
#include <string>

#include "tessera/core/errors.hpp"
#include "tessera/plan/internal/node.hpp"

namespace tessera {

using planner::MakeReduce;

std::vector<int> Axes::Resolve(int ndim) const {
  std::vector<int> resolved;
  if (!axes_) {
    for (int axis = 0; axis < ndim; ++axis) resolved.push_back(axis);
    return resolved;
  }
  for (const int axis : *axes_) {
    if (axis < -ndim || axis >= ndim) {
      throw InvalidArgument("axis " + std::to_string(axis) + " is out of range for an array of " +
                            std::to_string(ndim) + " dimensions (use -" + std::to_string(ndim) +
                            " to " + std::to_string(ndim - 1) + ")");
    }
    const int normalized = axis < 0 ? axis + ndim : axis;
    if (std::find(resolved.begin(), resolved.end(), normalized) != resolved.end()) {
      throw InvalidArgument("axis " + std::to_string(axis) + " is given twice");
    }
    resolved.push_back(normalized);
  }
  std::sort(resolved.begin(), resolved.end());
  return resolved;
}

namespace {

Array Reduce(ReductionOp op, const Array& x, const Axes& axes, bool keepdims,
             std::optional<DType> dtype, double correction = 0) {
  return Array(MakeReduce(op, x.node(), axes.Resolve(x.ndim()), keepdims, dtype, correction),
               x.spec());
}

Array ArgReduce(ReductionOp op, const Array& x, std::optional<int> axis, bool keepdims) {
  return Reduce(op, x, axis ? Axes(*axis) : Axes(), keepdims, std::nullopt);
}

}  // namespace

Array sum(const Array& x, Axes axes, bool keepdims, std::optional<DType> dtype) {
  return Reduce(ReductionOp::kSum, x, axes, keepdims, dtype);
}
Array prod(const Array& x, Axes axes, bool keepdims, std::optional<DType> dtype) {
  return Reduce(ReductionOp::kProd, x, axes, keepdims, dtype);
}
Array mean(const Array& x, Axes axes, bool keepdims, std::optional<DType> dtype) {
  return Reduce(ReductionOp::kMean, x, axes, keepdims, dtype);
}
Array var(const Array& x, Axes axes, bool keepdims, double correction, std::optional<DType> dtype) {
  return Reduce(ReductionOp::kVar, x, axes, keepdims, dtype, correction);
}
Array std(const Array& x, Axes axes, bool keepdims, double correction, std::optional<DType> dtype) {
  return Reduce(ReductionOp::kStd, x, axes, keepdims, dtype, correction);
}
Array min(const Array& x, Axes axes, bool keepdims) {
  return Reduce(ReductionOp::kMin, x, axes, keepdims, std::nullopt);
}
Array max(const Array& x, Axes axes, bool keepdims) {
  return Reduce(ReductionOp::kMax, x, axes, keepdims, std::nullopt);
}
Array argmin(const Array& x, std::optional<int> axis, bool keepdims) {
  return ArgReduce(ReductionOp::kArgMin, x, axis, keepdims);
}
Array argmax(const Array& x, std::optional<int> axis, bool keepdims) {
  return ArgReduce(ReductionOp::kArgMax, x, axis, keepdims);
}
Array all(const Array& x, Axes axes, bool keepdims) {
  return Reduce(ReductionOp::kAll, x, axes, keepdims, std::nullopt);
}
Array any(const Array& x, Axes axes, bool keepdims) {
  return Reduce(ReductionOp::kAny, x, axes, keepdims, std::nullopt);
}
Array count_nonzero(const Array& x, Axes axes, bool keepdims) {
  return Reduce(ReductionOp::kCountNonzero, x, axes, keepdims, std::nullopt);
}

}  // namespace tessera
