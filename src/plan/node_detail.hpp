// NodeDetail: what each NodeKind needs to be computed, resolved when the node is built
// (kernel pointers, the source array, the user's function). Internal to src/plan.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/elementwise_kernels.hpp"
#include "tessera/core/ndarray.hpp"
#include "tessera/core/scalar.hpp"
#include "tessera/plan/internal/index_map.hpp"
#include "tessera/plan/internal/node.hpp"
#include "tessera/storage/zarr_array.hpp"

namespace tessera::planner {

struct NodeDetail {
  // kZarr
  std::shared_ptr<const ZarrArray> zarr;
  // kInMemory
  std::shared_ptr<const NDArray> data;
  // kConstant
  Scalar constant;
  // kArange
  double start = 0;
  double step = 1;
  // kRandom
  std::uint64_t seed = 0;
  // kUnary / kBinary / kWhere / kAsType (the kernel for the inputs' dtype)
  kernels::UnaryKernel unary = nullptr;
  kernels::BinaryKernel binary = nullptr;
  kernels::WhereKernel where = nullptr;
  kernels::CastKernel cast = nullptr;
  // kReduce
  ReductionOp reduction = ReductionOp::kSum;
  std::vector<int> axes;
  bool keepdims = false;
  double correction = 0;
  // kContract
  Contraction contraction;
  // kGather
  std::shared_ptr<const IndexMap> index_map;
  // kMapBlocks
  BlockFunction function;
  std::int64_t extra_projected_mem = 0;
  std::string identity;
  // How another process rebuilds `function` (graph_codec.hpp); empty: it cannot.
  FunctionRecipe recipe;
};

}  // namespace tessera::planner
