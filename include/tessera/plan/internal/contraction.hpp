// Contraction: how a contraction node (matmul, tensordot, outer — NodeKind::
// kContract) lines its two operands up with its result.
//
// The result's dimensions are, in order: `num_batch` batch dimensions (either or both
// operands may span them; extents broadcast as numpy does), the free dimensions of a
// (in a's order), then the free dimensions of b (in b's order). Each operand dimension
// is either one of those result dimensions or a contracted one, summed over together
// with its partner in the other operand:
//
//   // matmul of a (5, M, K) and b (K, N): result (5, M, N)
//   Contraction c{.num_batch = 1, .a_dims = {0, 1, Contraction::Contracted(0)},
//                 .b_dims = {Contraction::Contracted(0), 2}};
//
// Contracted pair k must appear once in a and once in b, with one extent.
#pragma once

#include <vector>

namespace tessera::planner {

struct Contraction {
  // The value of an operand dimension that is contracted pair `k`.
  static constexpr int Contracted(int k) { return -1 - k; }
  static constexpr bool IsContracted(int dim) { return dim < 0; }
  // The pair a contracted dimension belongs to. REQUIRES: IsContracted(dim).
  static constexpr int PairOf(int dim) { return -1 - dim; }

  int num_batch = 0;
  // Per dimension of a (of b): the result dimension it lines up with, or Contracted(k).
  std::vector<int> a_dims;
  std::vector<int> b_dims;

  // The number of contracted pairs.
  int num_contracted() const {
    int pairs = 0;
    for (const int dim : a_dims) pairs += IsContracted(dim) ? 1 : 0;
    return pairs;
  }
};

}  // namespace tessera::planner
