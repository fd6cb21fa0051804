#include "contract_op.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <utility>

#include "node_detail.hpp"
#include "representative_tasks.hpp"

namespace tessera::planner {
namespace {

using Operand = ContractOp::Operand;

Index Product(const Shape& shape, std::size_t begin, std::size_t end) {
  Index product = 1;
  for (std::size_t d = begin; d < end; ++d) product *= shape[d];
  return product;
}

// The operand's dimensions of each role, in GEMM order: batch dimensions (in the
// result's order), free dimensions, contracted pairs by pair index.
struct Roles {
  std::vector<int> batch, free, contracted;
};

Roles RolesOf(const std::vector<int>& dims, int num_batch) {
  Roles roles;
  std::vector<std::pair<int, int>> pairs;  // (pair, operand dimension)
  for (int d = 0; d < static_cast<int>(dims.size()); ++d) {
    const int dim = dims[static_cast<std::size_t>(d)];
    if (Contraction::IsContracted(dim)) {
      pairs.emplace_back(Contraction::PairOf(dim), d);
    } else if (dim < num_batch) {
      roles.batch.push_back(d);
    } else {
      roles.free.push_back(d);
    }
  }
  std::sort(pairs.begin(), pairs.end());
  for (const auto& pair : pairs) roles.contracted.push_back(pair.second);
  return roles;
}

std::vector<int> Concat(const std::vector<int>& x, const std::vector<int>& y,
                        const std::vector<int>& z) {
  std::vector<int> all = x;
  all.insert(all.end(), y.begin(), y.end());
  all.insert(all.end(), z.begin(), z.end());
  return all;
}

// How a GEMM reads the operand: as stored when its dimensions already run (batch,
// rows, columns) — a: (batch, free, contracted), or transposed (batch, contracted,
// free); b: (batch, contracted, free), or transposed (batch, free, contracted) —
// otherwise repacked into the untransposed order.
Operand MakeOperand(std::shared_ptr<const StoredArray> array, const Node& input,
                    const std::vector<int>& dims, bool is_a, int num_batch,
                    const Shape& result_shape) {
  Operand operand;
  operand.array = std::move(array);
  operand.shape = input.shape();
  operand.chunks = input.chunks();
  operand.dims = dims;
  const Roles roles = RolesOf(dims, num_batch);
  const std::vector<int> plain = is_a ? Concat(roles.batch, roles.free, roles.contracted)
                                      : Concat(roles.batch, roles.contracted, roles.free);
  const std::vector<int> transposed = is_a ? Concat(roles.batch, roles.contracted, roles.free)
                                           : Concat(roles.batch, roles.free, roles.contracted);
  std::vector<int> stored(dims.size());
  std::iota(stored.begin(), stored.end(), 0);
  if (stored != plain) {
    if (stored == transposed) {
      operand.transposed = true;
    } else {
      operand.order = plain;
    }
  }
  operand.batch_dims.assign(static_cast<std::size_t>(num_batch), -1);
  for (const int d : roles.batch) {
    const auto dim = static_cast<std::size_t>(d);
    const auto out = static_cast<std::size_t>(dims[dim]);
    const bool stretched = operand.shape[dim] == 1 && result_shape[out] != 1;
    if (!stretched) operand.batch_dims[out] = d;
    operand.leading_batch.push_back(stretched ? -1 : dims[dim]);
  }
  return operand;
}

// `x` with its dimensions in `order` (result dimension i is x's order[i]).
NDArray Permuted(const NDArray& x, const std::vector<int>& order) {
  const std::size_t ndim = order.size();
  Shape strides(ndim, 1);
  for (std::size_t d = ndim; d-- > 1;) strides[d - 1] = strides[d] * x.shape()[d];
  Shape shape(ndim);
  Shape source_strides(ndim);
  for (std::size_t d = 0; d < ndim; ++d) {
    const auto from = static_cast<std::size_t>(order[d]);
    shape[d] = x.shape()[from];
    source_strides[d] = strides[from];
  }
  NDArray result(shape, x.dtype());
  if (result.size() == 0) return result;
  const auto itemsize = static_cast<std::size_t>(x.dtype().itemsize());
  const std::byte* source = x.bytes().data();
  std::byte* target = result.mutable_bytes().data();
  const Index inner = shape[ndim - 1];
  const Index inner_stride = source_strides[ndim - 1];
  Shape index(ndim, 0);
  while (true) {
    Index offset = 0;
    for (std::size_t d = 0; d + 1 < ndim; ++d) offset += index[d] * source_strides[d];
    for (Index i = 0; i < inner; ++i) {
      std::memcpy(target, source + static_cast<std::size_t>(offset + i * inner_stride) * itemsize,
                  itemsize);
      target += itemsize;
    }
    std::size_t d = ndim - 1;
    while (d > 0) {
      --d;
      if (++index[d] < shape[d]) break;
      index[d] = 0;
      if (d == 0) return result;
    }
    if (ndim == 1) return result;
  }
}

// The block of `extent` cut in `block`s that touches the most `chunk`s (first found).
Index MostChunksTouched(Index extent, Index block, Index chunk) {
  Index most = -1;
  Index at = 0;
  Index index = 0;
  for (Index begin = 0; begin < extent; begin += block, ++index) {
    const Index end = std::min(begin + block, extent);
    const Index touched = (end - 1) / chunk - begin / chunk + 1;
    if (touched > most) {
      most = touched;
      at = index;
    }
  }
  return at;
}

Shape ContractedExtents(const Node& node) {
  const Contraction& contraction = node.detail().contraction;
  Shape extents(static_cast<std::size_t>(contraction.num_contracted()));
  const Node& a = *node.inputs().front();
  for (std::size_t d = 0; d < contraction.a_dims.size(); ++d) {
    if (Contraction::IsContracted(contraction.a_dims[d])) {
      extents[static_cast<std::size_t>(Contraction::PairOf(contraction.a_dims[d]))] = a.shape()[d];
    }
  }
  return extents;
}

}  // namespace

ContractOp::ContractOp(OpInfo info, const Node& node, std::shared_ptr<const StoredArray> a,
                       std::shared_ptr<const StoredArray> b, std::shared_ptr<OpOutput> output,
                       Shape widths, std::int64_t reserved_mem)
    : OutputOp(std::move(info), std::move(output), reserved_mem),
      a_(MakeOperand(std::move(a), *node.inputs()[0], node.detail().contraction.a_dims, true,
                     node.detail().contraction.num_batch, node.shape())),
      b_(MakeOperand(std::move(b), *node.inputs()[1], node.detail().contraction.b_dims, false,
                     node.detail().contraction.num_batch, node.shape())),
      num_batch_(node.detail().contraction.num_batch),
      free_a_(static_cast<int>(RolesOf(a_.dims, num_batch_).free.size())),
      grid_(node.shape(), node.chunks()),
      slabs_(ContractedExtents(node), std::move(widths)),
      gemm_(kernels::GetGemmKernel(node.dtype())) {
  info_.shape = grid_.shape();
  info_.chunks = grid_.chunks();
  info_.dtype = node.dtype();
  info_.task_shape = grid_.chunks();
  info_.num_tasks = grid_.num_blocks();
  info_.contraction_block = slabs_.chunks();
  info_.contraction_steps = slabs_.num_blocks();
}

Region ContractOp::OperandRegion(const Operand& operand, const Region& block,
                                 const Region& slab) const {
  Region region{Shape(operand.dims.size()), Shape(operand.dims.size())};
  for (std::size_t d = 0; d < operand.dims.size(); ++d) {
    const int dim = operand.dims[d];
    if (Contraction::IsContracted(dim)) {
      const auto pair = static_cast<std::size_t>(Contraction::PairOf(dim));
      region.start[d] = slab.start[pair];
      region.shape[d] = slab.shape[pair];
    } else if (dim < num_batch_ &&
               operand.batch_dims[static_cast<std::size_t>(dim)] != static_cast<int>(d)) {
      region.start[d] = 0;  // stretched from extent 1
      region.shape[d] = 1;
    } else {
      region.start[d] = block.start[static_cast<std::size_t>(dim)];
      region.shape[d] = block.shape[static_cast<std::size_t>(dim)];
    }
  }
  return region;
}

std::int64_t ContractOp::ProjectSlab(const Region& block, const Region& slab) const {
  const std::int64_t itemsize = info_.dtype.itemsize();
  std::int64_t bytes = 0;
  for (const Operand* operand : {&a_, &b_}) {
    const Region region = OperandRegion(*operand, block, slab);
    bytes += operand->array->ProjectRead(region);
    if (!operand->order.empty()) bytes += ShapeSize(region.shape) * itemsize;
  }
  return bytes;
}

std::vector<std::vector<Index>> ContractOp::WorstSlabs() const {
  std::vector<std::vector<Index>> worst(slabs_.shape().size());
  for (const Operand* operand : {&a_, &b_}) {
    for (std::size_t d = 0; d < operand->dims.size(); ++d) {
      if (!Contraction::IsContracted(operand->dims[d])) continue;
      const auto pair = static_cast<std::size_t>(Contraction::PairOf(operand->dims[d]));
      if (slabs_.shape()[pair] == 0) continue;
      worst[pair].push_back(MostChunksTouched(slabs_.shape()[pair], slabs_.chunks()[pair],
                                              std::max<Index>(operand->chunks[d], 1)));
    }
  }
  return worst;
}

std::int64_t ContractOp::projected_mem(std::int64_t task) const {
  const Shape block_index = grid_.BlockIndex(task);
  const Region block = grid_.BlockRegion(block_index);
  const std::int64_t accumulator = ShapeSize(block.shape) * info_.dtype.itemsize();
  std::int64_t step = 0;
  ForRepresentativeTasks(slabs_, WorstSlabs(), [&](Index slab) {
    step = std::max(step, ProjectSlab(block, slabs_.BlockRegion(slabs_.BlockIndex(slab))));
  });
  return reserved_mem_ + accumulator + std::max(step, output_->ProjectWrite(block_index));
}

std::string ContractOp::DescribeTask(std::int64_t task) const {
  return "block " + ShapeToString(grid_.BlockIndex(task)) + ", summing " +
         std::to_string(slabs_.num_blocks()) + " slabs of " + ShapeToString(slabs_.chunks());
}

bool ContractOp::IsTaskDone(std::int64_t task) const {
  return output_->Has(grid_.BlockIndex(task));
}

void ContractOp::MultiplyInto(NDArray& accumulator, const NDArray& a, const NDArray& b,
                              const Region& block, const Region& slab) const {
  const auto nb = static_cast<std::size_t>(num_batch_);
  const auto first_b = nb + static_cast<std::size_t>(free_a_);
  kernels::GemmShape shape;
  shape.m = Product(block.shape, nb, first_b);
  shape.n = Product(block.shape, first_b, block.shape.size());
  shape.k = ShapeSize(slab.shape);
  shape.trans_a = a_.transposed;
  shape.trans_b = b_.transposed;
  // Per batch dimension, how far each operand's matrix moves per step along it.
  const auto batch_strides = [nb](const Operand& operand, const NDArray& values) {
    Shape strides(nb, 0);
    Index stride = values.size();
    for (std::size_t p = 0; p < operand.leading_batch.size(); ++p) {
      stride /= values.shape()[p];  // > 0: the block and the slab are not empty
      const int out = operand.leading_batch[p];
      if (out >= 0) strides[static_cast<std::size_t>(out)] = stride;
    }
    return strides;
  };
  const Shape a_strides = batch_strides(a_, a);
  const Shape b_strides = batch_strides(b_, b);
  const std::size_t itemsize = static_cast<std::size_t>(info_.dtype.itemsize());
  const std::byte* a_data = a.bytes().data();
  const std::byte* b_data = b.bytes().data();
  std::byte* c_data = accumulator.mutable_bytes().data();
  const Index matrix = shape.m * shape.n;
  Shape index(nb, 0);
  for (Index batch = 0; batch < Product(block.shape, 0, nb); ++batch) {
    Index a_offset = 0;
    Index b_offset = 0;
    for (std::size_t d = 0; d < nb; ++d) {
      a_offset += index[d] * a_strides[d];
      b_offset += index[d] * b_strides[d];
    }
    gemm_(shape, a_data + static_cast<std::size_t>(a_offset) * itemsize,
          b_data + static_cast<std::size_t>(b_offset) * itemsize,
          c_data + static_cast<std::size_t>(batch * matrix) * itemsize);
    for (std::size_t d = nb; d-- > 0;) {
      if (++index[d] < block.shape[d]) break;
      index[d] = 0;
    }
  }
}

void ContractOp::RunTask(std::int64_t task) const {
  const Shape block_index = grid_.BlockIndex(task);
  const Region block = grid_.BlockRegion(block_index);
  NDArray accumulator = NDArray::Zeros(block.shape, info_.dtype);
  if (accumulator.size() > 0) {
    for (Index slab_index = 0; slab_index < slabs_.num_blocks(); ++slab_index) {
      const Region slab = slabs_.BlockRegion(slabs_.BlockIndex(slab_index));
      // Read (and repack) a, then b: what ProjectSlab counts.
      const auto read = [&](const Operand& operand) {
        std::shared_ptr<const NDArray> values =
            operand.array->Read(OperandRegion(operand, block, slab));
        if (operand.order.empty()) return values;
        auto packed = std::make_shared<const NDArray>(Permuted(*values, operand.order));
        return packed;
      };
      const std::shared_ptr<const NDArray> a = read(a_);
      const std::shared_ptr<const NDArray> b = read(b_);
      MultiplyInto(accumulator, *a, *b, block, slab);
    }
  }
  output_->Write(block_index, std::move(accumulator));
}

std::int64_t ContractOp::MaxProjection(std::int64_t* worst_task) const {
  std::vector<std::vector<Index>> worst(grid_.shape().size());
  for (const Operand* operand : {&a_, &b_}) {
    for (std::size_t d = 0; d < operand->dims.size(); ++d) {
      const int dim = operand->dims[d];
      if (Contraction::IsContracted(dim) || grid_.shape()[static_cast<std::size_t>(dim)] == 0)
        continue;
      const auto out = static_cast<std::size_t>(dim);
      worst[out].push_back(MostChunksTouched(grid_.shape()[out], grid_.chunks()[out],
                                             std::max<Index>(operand->chunks[d], 1)));
    }
  }
  return LargestProjection(grid_, worst, worst_task);
}

std::shared_ptr<ContractOp> MakeContractOp(OpInfo info, const Node& node,
                                           std::shared_ptr<const StoredArray> a,
                                           std::shared_ptr<const StoredArray> b,
                                           std::shared_ptr<OpOutput> output, const Spec& spec) {
  const Shape extents = ContractedExtents(node);
  Shape widths(extents.size());
  for (std::size_t k = 0; k < extents.size(); ++k) widths[k] = std::max<Index>(extents[k], 1);
  const auto make = [&] {
    return std::make_shared<ContractOp>(info, node, a, b, output, widths, spec.reserved_mem);
  };
  const auto fits = [&](std::size_t k, Index width) {
    widths[k] = width;
    return make()->MaxProjection() <= spec.allowed_mem;
  };
  // The largest of width(1) .. width(count) that fits, assuming larger never fits
  // once a smaller does not; 0 when none does.
  const auto largest_fitting = [&](std::size_t k, Index count, const auto& width) {
    Index low = 0;  // fits (or 0: none known to)
    Index high = count + 1;
    while (high - low > 1) {
      const Index middle = low + (high - low) / 2;
      if (fits(k, width(middle))) {
        low = middle;
      } else {
        high = middle;
      }
    }
    return low;
  };
  const Node& a_node = *node.inputs().front();
  const Contraction& contraction = node.detail().contraction;
  for (std::size_t k = 0; k < extents.size(); ++k) {
    const Index extent = extents[k];
    if (extent <= 1 || fits(k, extent)) {
      widths[k] = std::max<Index>(extent, 1);
      return make();
    }
    Index chunk = extent;
    for (std::size_t d = 0; d < contraction.a_dims.size(); ++d) {
      if (contraction.a_dims[d] == Contraction::Contracted(static_cast<int>(k))) {
        chunk = std::clamp<Index>(a_node.chunks()[d], 1, extent);
      }
    }
    const Index multiples = (extent + chunk - 1) / chunk - 1;  // whole extent ruled out
    const auto multiple = [chunk](Index m) { return m * chunk; };
    if (const Index m = largest_fitting(k, multiples, multiple); m > 0) {
      widths[k] = multiple(m);
      return make();
    }
    const auto below_chunk = [](Index w) { return w; };
    if (const Index w = largest_fitting(k, chunk - 1, below_chunk); w > 0) {
      widths[k] = w;
      return make();
    }
    widths[k] = 1;
  }
  return make();
}

}  // namespace tessera::planner
