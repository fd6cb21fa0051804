// What a reduction computes and the dtype of its result (numpy's rules): shared by the
// array API (api/reduction.hpp) and the planner, which expands a reduction into rounds
// of partial reductions (WIP, issue 5: docs/issue5-plan.md).
#pragma once

#include <optional>
#include <string_view>

#include "tessera/core/dtype.hpp"

namespace tessera {

// What a reduction computes.
enum class ReductionOp {
  kSum,
  kProd,
  kMean,
  kVar,
  kStd,
  kMin,
  kMax,
  kArgMin,
  kArgMax,
  kAll,
  kAny,
  kCountNonzero
};

// "sum", "prod", "mean", "var", "std", "min", "max", "argmin", "argmax", "all", "any",
// "count_nonzero".
std::string_view ReductionName(ReductionOp op);

// The result dtype of `op` over `input` (numpy's rules), or `requested` when given
// (sum, prod, mean, var, std only; InvalidArgument for a requested dtype that cannot
// hold the result, e.g. an integer dtype for mean).
DType ReductionResultType(ReductionOp op, DType input, std::optional<DType> requested);

}  // namespace tessera
