// WIP (issue 5): the reduction API over a kReduce node planned in rounds (see
// docs/issue5-plan.md). Only the argument handling is written so far.
#include "tessera/api/reduction.hpp"

#include <algorithm>
#include <string>

#include "tessera/core/errors.hpp"

namespace tessera {

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

DType ReductionResultType(ReductionOp op, DType input, std::optional<DType> requested) {
  const bool takes_dtype = op == ReductionOp::kSum || op == ReductionOp::kProd ||
                           op == ReductionOp::kMean || op == ReductionOp::kVar ||
                           op == ReductionOp::kStd;
  const bool floating =
      op == ReductionOp::kMean || op == ReductionOp::kVar || op == ReductionOp::kStd;
  if (requested) {
    if (!takes_dtype) {
      throw InvalidArgument("this reduction does not take a dtype: its result is " +
                            std::string(ReductionResultType(op, input, std::nullopt).name()));
    }
    if (floating && requested->kind() != DTypeKind::kFloat) {
      throw InvalidArgument("mean, var and std compute in a floating dtype; got dtype " +
                            std::string(requested->name()) + " (use float32 or float64)");
    }
    return *requested;
  }
  switch (op) {
    case ReductionOp::kSum:
    case ReductionOp::kProd:
      if (input.kind() == DTypeKind::kBool || input.kind() == DTypeKind::kSignedInt) return int64;
      if (input.kind() == DTypeKind::kUnsignedInt) return uint64;
      return input;
    case ReductionOp::kMean:
    case ReductionOp::kVar:
    case ReductionOp::kStd:
      return input.kind() == DTypeKind::kFloat ? input : float64;
    case ReductionOp::kMin:
    case ReductionOp::kMax:
      return input;
    case ReductionOp::kArgMin:
    case ReductionOp::kArgMax:
    case ReductionOp::kCountNonzero:
      return int64;
    case ReductionOp::kAll:
    case ReductionOp::kAny:
      return bool_;
  }
  return input;
}

}  // namespace tessera
