// MakeContract: validates a Contraction against its operands and builds the kContract
// node (node.hpp). Planned by ContractOp (contract_op.hpp).
#include <algorithm>
#include <utility>

#include "node_detail.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/core/type_promotion.hpp"
#include "tessera/plan/internal/node.hpp"

namespace tessera::planner {
namespace {

std::string Describe(const std::string& op, const Node& a, const Node& b) {
  return op + " of shapes " + ShapeToString(a.shape()) + " and " + ShapeToString(b.shape());
}

// Checks that `dims` (an operand's) lines up with the result's layout: batch dimensions
// in increasing order, its free dimensions exactly [first_free, first_free + count) in
// order, each contracted pair once. Returns the number of free dimensions.
int CheckOperandDims(const std::vector<int>& dims, int num_batch, int first_free,
                     std::vector<int>& pair_seen, const std::string& what) {
  int last_batch = -1;
  int next_free = first_free;
  for (const int dim : dims) {
    if (Contraction::IsContracted(dim)) {
      const auto pair = static_cast<std::size_t>(Contraction::PairOf(dim));
      if (pair >= pair_seen.size()) pair_seen.resize(pair + 1, 0);
      ++pair_seen[pair];
    } else if (dim < num_batch) {
      if (dim <= last_batch) throw InvalidArgument(what + ": batch dimensions out of order");
      last_batch = dim;
    } else if (dim != next_free++) {
      throw InvalidArgument(what + ": free dimensions must follow the batch dimensions in order");
    }
  }
  return next_free - first_free;
}

// The result's extent along `dim` from the operand dimensions lined up with it
// (numpy broadcasting: equal extents, or 1).
Index ResultExtent(int dim, const Node& a, const std::vector<int>& a_dims, const Node& b,
                   const std::vector<int>& b_dims, const std::string& what) {
  Index extent = 1;
  bool spanned = false;
  const auto combine = [&](const Node& x, const std::vector<int>& dims) {
    for (std::size_t d = 0; d < dims.size(); ++d) {
      if (dims[d] != dim) continue;
      const Index e = x.shape()[d];
      if (spanned && e != extent && e != 1 && extent != 1) {
        throw InvalidArgument(what + ": batch dimensions " + std::to_string(extent) + " and " +
                              std::to_string(e) + " cannot be broadcast together");
      }
      if (!spanned || extent == 1) extent = e;
      spanned = true;
    }
  };
  combine(a, a_dims);
  combine(b, b_dims);
  return extent;
}

// The chunk of the result along `dim`: the first operand spanning it at full extent.
Index ResultChunk(int dim, Index extent, const Node& a, const std::vector<int>& a_dims,
                  const Node& b, const std::vector<int>& b_dims) {
  for (const auto& [x, dims] : {std::pair{&a, &a_dims}, std::pair{&b, &b_dims}}) {
    for (std::size_t d = 0; d < dims->size(); ++d) {
      if ((*dims)[d] == dim && x->shape()[d] == extent) return x->chunks()[d];
    }
  }
  return std::max<Index>(extent, 1);
}

}  // namespace

NodePtr MakeContract(std::string op, NodePtr a, NodePtr b, Contraction contraction) {
  if (a == nullptr || b == nullptr) throw InvalidArgument(op + ": an operand is empty");
  const std::string what = Describe(op, *a, *b);
  if (static_cast<int>(contraction.a_dims.size()) != a->ndim() ||
      static_cast<int>(contraction.b_dims.size()) != b->ndim()) {
    throw InvalidArgument(what + ": the contraction names " +
                          std::to_string(contraction.a_dims.size()) + " and " +
                          std::to_string(contraction.b_dims.size()) + " dimensions");
  }
  const int num_batch = contraction.num_batch;
  std::vector<int> pairs_in_a;
  std::vector<int> pairs_in_b;
  const int free_a = CheckOperandDims(contraction.a_dims, num_batch, num_batch, pairs_in_a, what);
  const int free_b =
      CheckOperandDims(contraction.b_dims, num_batch, num_batch + free_a, pairs_in_b, what);
  pairs_in_a.resize(std::max(pairs_in_a.size(), pairs_in_b.size()), 0);
  pairs_in_b.resize(pairs_in_a.size(), 0);
  for (std::size_t k = 0; k < pairs_in_a.size(); ++k) {
    if (pairs_in_a[k] != 1 || pairs_in_b[k] != 1) {
      throw InvalidArgument(what + ": contracted pair " + std::to_string(k) +
                            " must be one dimension of each operand");
    }
  }
  for (std::size_t da = 0; da < contraction.a_dims.size(); ++da) {
    if (!Contraction::IsContracted(contraction.a_dims[da])) continue;
    const auto db = static_cast<std::size_t>(
        std::find(contraction.b_dims.begin(), contraction.b_dims.end(), contraction.a_dims[da]) -
        contraction.b_dims.begin());
    if (a->shape()[da] != b->shape()[db]) {
      throw InvalidArgument(what + ": contracted dimensions " + std::to_string(da) + " of x1 (" +
                            std::to_string(a->shape()[da]) + ") and " + std::to_string(db) +
                            " of x2 (" + std::to_string(b->shape()[db]) + ") differ");
    }
  }
  const int ndim = num_batch + free_a + free_b;
  Shape shape(static_cast<std::size_t>(ndim));
  Shape chunks(shape.size());
  for (int dim = 0; dim < ndim; ++dim) {
    const auto d = static_cast<std::size_t>(dim);
    shape[d] = ResultExtent(dim, *a, contraction.a_dims, *b, contraction.b_dims, what);
    chunks[d] = ResultChunk(dim, shape[d], *a, contraction.a_dims, *b, contraction.b_dims);
  }
  const DType dtype = ResultType(a->dtype(), b->dtype());
  if (a->dtype() != dtype) a = MakeAsType(std::move(a), dtype);
  if (b->dtype() != dtype) b = MakeAsType(std::move(b), dtype);
  NodeDetail detail;
  detail.contraction = std::move(contraction);
  return std::make_shared<const Node>(NodeKind::kContract, std::move(op), std::move(shape),
                                      std::move(chunks), dtype,
                                      std::vector<NodePtr>{std::move(a), std::move(b)},
                                      std::make_shared<const NodeDetail>(std::move(detail)));
}

}  // namespace tessera::planner
