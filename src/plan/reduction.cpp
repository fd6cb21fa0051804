#include "tessera/plan/reduction.hpp"

#include <string>

#include "tessera/core/errors.hpp"

namespace tessera {

std::string_view ReductionName(ReductionOp op) {
  switch (op) {
    case ReductionOp::kSum:
      return "sum";
    case ReductionOp::kProd:
      return "prod";
    case ReductionOp::kMean:
      return "mean";
    case ReductionOp::kVar:
      return "var";
    case ReductionOp::kStd:
      return "std";
    case ReductionOp::kMin:
      return "min";
    case ReductionOp::kMax:
      return "max";
    case ReductionOp::kArgMin:
      return "argmin";
    case ReductionOp::kArgMax:
      return "argmax";
    case ReductionOp::kAll:
      return "all";
    case ReductionOp::kAny:
      return "any";
    case ReductionOp::kCountNonzero:
      return "count_nonzero";
  }
  return "reduce";
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
    if (floating && requested->kind() != DTypeKind::kFloat &&
        !(op == ReductionOp::kMean && requested->is_complex() && input.is_complex())) {
      throw InvalidArgument("mean, var and std compute in a floating dtype; got dtype " +
                            std::string(requested->name()) + " (use float32 or float64)");
    }
    return *requested;
  }
  const bool ordered = op == ReductionOp::kMin || op == ReductionOp::kMax ||
                       op == ReductionOp::kArgMin || op == ReductionOp::kArgMax;
  if (input.is_complex() && ordered) {
    throw InvalidArgument(std::string(ReductionName(op)) + " is not defined for " +
                          std::string(input.name()) +
                          ": complex numbers have no order; reduce abs(x), real(x) or imag(x)");
  }
  if (input.is_complex() && (op == ReductionOp::kVar || op == ReductionOp::kStd)) {
    throw InvalidArgument(std::string(ReductionName(op)) + " is not defined for " +
                          std::string(input.name()) +
                          " (the array API takes real floating dtypes); take it of real(x) "
                          "and imag(x), or of abs(x)");
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
      return input.kind() == DTypeKind::kFloat || input.is_complex() ? input : float64;
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
