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

}  // namespace tessera
