// The linear algebra API: each function checks its arguments as numpy does and lines
// its operands up as one Contraction (plan/contraction.hpp).
#include "tessera/api/linalg.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "tessera/api/elementwise.hpp"
#include "tessera/api/reduction.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/plan/internal/node.hpp"

namespace tessera {

using planner::BroadcastShapes;
using planner::Contraction;
using planner::MakeContract;
namespace {

std::string Shapes(const Array& x1, const Array& x2) {
  return "shapes " + ShapeToString(x1.shape()) + " and " + ShapeToString(x2.shape());
}

Array Contract(const char* op, const Array& x1, const Array& x2, Contraction contraction) {
  return Array(MakeContract(op, x1.node(), x2.node(), std::move(contraction)), x1.spec());
}

// `batch_ndim` leading dimensions of an operand, aligned right with `num_batch` result
// batch dimensions (numpy broadcasting).
void AddBatchDims(std::vector<int>& dims, int batch_ndim, int num_batch) {
  for (int d = 0; d < batch_ndim; ++d) dims.push_back(d + num_batch - batch_ndim);
}

// Checks that the batch shapes broadcast, naming the function.
void CheckBatchBroadcast(const char* op, const Shape& batch1, const Shape& batch2, const Array& x1,
                         const Array& x2) {
  try {
    BroadcastShapes(batch1, batch2);
  } catch (const InvalidArgument&) {
    throw InvalidArgument(std::string(op) + ": the batch dimensions of " + Shapes(x1, x2) + " (" +
                          ShapeToString(batch1) + " and " + ShapeToString(batch2) +
                          ") do not broadcast; make them equal or 1");
  }
}

int NormalizedAxis(const char* op, const char* name, int axis, int ndim) {
  if (axis < -ndim || axis >= ndim) {
    throw InvalidArgument(std::string(op) + ": axis " + std::to_string(axis) + " of " + name +
                          " is out of range for " + std::to_string(ndim) + " dimensions (use -" +
                          std::to_string(ndim) + " to " + std::to_string(ndim - 1) + ")");
  }
  return axis < 0 ? axis + ndim : axis;
}

}  // namespace

Array matmul(const Array& x1, const Array& x2) {
  if (x1.ndim() == 0 || x2.ndim() == 0) {
    throw InvalidArgument("matmul: operands must have at least one dimension, got " +
                          Shapes(x1, x2) + "; use multiply for scalars");
  }
  const int n1 = x1.ndim();
  const int n2 = x2.ndim();
  const Index k1 = x1.shape().back();
  const Index k2 = n2 == 1 ? x2.shape().front() : x2.shape()[static_cast<std::size_t>(n2 - 2)];
  if (k1 != k2) {
    throw InvalidArgument("matmul: x1's last dimension (" + std::to_string(k1) +
                          ") must equal x2's " + (n2 == 1 ? "only" : "second-to-last") +
                          " dimension (" + std::to_string(k2) + "), got " + Shapes(x1, x2) +
                          "; transpose or reshape an operand");
  }
  const int batch1 = std::max(n1 - 2, 0);
  const int batch2 = std::max(n2 - 2, 0);
  CheckBatchBroadcast("matmul", Shape(x1.shape().begin(), x1.shape().begin() + batch1),
                      Shape(x2.shape().begin(), x2.shape().begin() + batch2), x1, x2);
  Contraction contraction;
  contraction.num_batch = std::max(batch1, batch2);
  const int rows = contraction.num_batch;  // x1's free dimension, when it has one
  AddBatchDims(contraction.a_dims, batch1, contraction.num_batch);
  if (n1 >= 2) contraction.a_dims.push_back(rows);
  contraction.a_dims.push_back(Contraction::Contracted(0));
  AddBatchDims(contraction.b_dims, batch2, contraction.num_batch);
  contraction.b_dims.push_back(Contraction::Contracted(0));
  if (n2 >= 2) contraction.b_dims.push_back(rows + (n1 >= 2 ? 1 : 0));
  return Contract("matmul", x1, x2, std::move(contraction));
}

Array tensordot(const Array& x1, const Array& x2, int axes) {
  if (axes < 0 || axes > std::min(x1.ndim(), x2.ndim())) {
    throw InvalidArgument("tensordot: axes=" + std::to_string(axes) + " must be between 0 and " +
                          std::to_string(std::min(x1.ndim(), x2.ndim())) +
                          " (the smaller number of dimensions of " + Shapes(x1, x2) + ")");
  }
  std::vector<int> axes1;
  std::vector<int> axes2;
  for (int i = 0; i < axes; ++i) {
    axes1.push_back(x1.ndim() - axes + i);
    axes2.push_back(i);
  }
  return tensordot(x1, x2, axes1, axes2);
}

Array tensordot(const Array& x1, const Array& x2, const std::vector<int>& axes1,
                const std::vector<int>& axes2) {
  if (axes1.size() != axes2.size()) {
    throw InvalidArgument(
        "tensordot: the axis lists pair x1's axes with x2's and must have one "
        "length, got " +
        std::to_string(axes1.size()) + " and " + std::to_string(axes2.size()));
  }
  Contraction contraction;
  contraction.a_dims.assign(static_cast<std::size_t>(x1.ndim()), 0);
  contraction.b_dims.assign(static_cast<std::size_t>(x2.ndim()), 0);
  std::vector<bool> summed1(contraction.a_dims.size(), false);
  std::vector<bool> summed2(contraction.b_dims.size(), false);
  for (std::size_t k = 0; k < axes1.size(); ++k) {
    const auto a = static_cast<std::size_t>(NormalizedAxis("tensordot", "x1", axes1[k], x1.ndim()));
    const auto b = static_cast<std::size_t>(NormalizedAxis("tensordot", "x2", axes2[k], x2.ndim()));
    if (summed1[a] || summed2[b]) {
      throw InvalidArgument("tensordot: axis " + std::to_string(summed1[a] ? axes1[k] : axes2[k]) +
                            " of " + (summed1[a] ? "x1" : "x2") +
                            " is given twice; each axis may be summed once");
    }
    if (x1.shape()[a] != x2.shape()[b]) {
      throw InvalidArgument("tensordot: x1's axis " + std::to_string(axes1[k]) + " (extent " +
                            std::to_string(x1.shape()[a]) + ") and x2's axis " +
                            std::to_string(axes2[k]) + " (extent " + std::to_string(x2.shape()[b]) +
                            ") are summed together and must " + "have one extent, got " +
                            Shapes(x1, x2));
    }
    summed1[a] = summed2[b] = true;
    contraction.a_dims[a] = Contraction::Contracted(static_cast<int>(k));
    contraction.b_dims[b] = Contraction::Contracted(static_cast<int>(k));
  }
  int next = 0;
  for (std::size_t d = 0; d < summed1.size(); ++d) {
    if (!summed1[d]) contraction.a_dims[d] = next++;
  }
  for (std::size_t d = 0; d < summed2.size(); ++d) {
    if (!summed2[d]) contraction.b_dims[d] = next++;
  }
  return Contract("tensordot", x1, x2, std::move(contraction));
}

Array vecdot(const Array& x1, const Array& x2, int axis) {
  if (x1.ndim() == 0 || x2.ndim() == 0) {
    throw InvalidArgument("vecdot: operands must have at least one dimension, got " +
                          Shapes(x1, x2));
  }
  if (axis >= 0 && x1.ndim() != x2.ndim()) {
    throw InvalidArgument("vecdot: a non-negative axis (" + std::to_string(axis) +
                          ") needs operands with one number of dimensions, got " + Shapes(x1, x2) +
                          "; count the axis from the end (negative)");
  }
  const int n = std::min(x1.ndim(), x2.ndim());
  const int from_end =
      NormalizedAxis("vecdot", axis < 0 ? "both operands" : "x1", axis, n) - n;  // in [-n, -1]
  const int axis1 = x1.ndim() + from_end;
  const int axis2 = x2.ndim() + from_end;
  const Index k1 = x1.shape()[static_cast<std::size_t>(axis1)];
  const Index k2 = x2.shape()[static_cast<std::size_t>(axis2)];
  if (k1 != k2) {
    throw InvalidArgument("vecdot: the summed axis " + std::to_string(axis) + " has extent " +
                          std::to_string(k1) + " in x1 and " + std::to_string(k2) +
                          " in x2; it must be the same (it does not broadcast), got " +
                          Shapes(x1, x2));
  }
  const auto others = [](const Array& x, int summed) {
    Shape rest = x.shape();
    rest.erase(rest.begin() + summed);
    return rest;
  };
  CheckBatchBroadcast("vecdot", others(x1, axis1), others(x2, axis2), x1, x2);
  // An elementwise product summed by a reduction: its first round computes the product
  // block by block, so nothing but partial sums is stored. Summing in the operands'
  // result dtype keeps numpy's dtype (and its wrap-around for integers). Complex x1 is
  // conjugated first: the standard's vecdot is the inner product sum(conj(x1) * x2).
  const DType dtype = ResultType(x1.dtype(), x2.dtype());
  const Array first = dtype.is_complex() ? conj(x1.astype(dtype)) : x1.astype(dtype);
  return sum(multiply(first, x2.astype(dtype)), from_end, false, dtype);
}

Array outer(const Array& x1, const Array& x2) {
  if (x1.ndim() != 1 || x2.ndim() != 1) {
    throw InvalidArgument("outer: both operands must be 1-d, got " + Shapes(x1, x2) +
                          "; reshape them first");
  }
  Contraction contraction;
  contraction.a_dims = {0};
  contraction.b_dims = {1};
  return Contract("outer", x1, x2, std::move(contraction));
}

}  // namespace tessera
