#include "reshape_op.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <utility>

#include "tessera/core/errors.hpp"

namespace tessera::planner {
namespace {

// Product of the extents [begin, end) of `shape`.
Index Product(const Shape& shape, std::size_t begin, std::size_t end) {
  Index product = 1;
  for (std::size_t d = begin; d < end; ++d) product *= shape[d];
  return product;
}

}  // namespace

std::vector<ReshapeGroup> ReshapeGroups(const Shape& in, const Shape& out) {
  std::vector<ReshapeGroup> groups;
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < in.size() || j < out.size()) {
    ReshapeGroup group{i, i, j, j};
    const bool in_one = i < in.size() && in[i] == 1;
    const bool out_one = j < out.size() && out[j] == 1;
    if (in_one || out_one) {
      // Extent-1 axes pair up with each other, or stand alone.
      if (in_one) group.in_end = ++i;
      if (out_one) group.out_end = ++j;
      groups.push_back(group);
      continue;
    }
    if (i == in.size() || j == out.size()) {
      throw Error("internal error: reshape of " + ShapeToString(in) + " into " +
                  ShapeToString(out) + ": the sizes differ");
    }
    Index in_product = in[i];
    Index out_product = out[j];
    group.in_end = ++i;
    group.out_end = ++j;
    while (in_product != out_product) {
      if (in_product < out_product) {
        in_product *= in[i];
        group.in_end = ++i;
      } else {
        out_product *= out[j];
        group.out_end = ++j;
      }
    }
    groups.push_back(group);
  }
  return groups;
}

Shape AlignedInputChunks(const std::vector<ReshapeGroup>& groups, const Shape& in,
                         const Shape& in_chunks, const Shape& out) {
  Shape chunks = in_chunks;
  for (const ReshapeGroup& group : groups) {
    if (group.in_begin == group.in_end) continue;
    // Chunks at least as long as their axis are whole already (and kept: a rechunk
    // that only shortens them to the extent would copy for nothing).
    for (std::size_t d = group.in_begin + 1; d < group.in_end; ++d) {
      chunks[d] = std::max(chunks[d], in[d]);
    }
    if (group.out_begin == group.out_end) continue;
    // A block of c rows of the first axis holds c * inner elements; it is a whole
    // number of output rows when c is a multiple of `unit`.
    const Index inner = Product(in, group.in_begin + 1, group.in_end);
    const Index out_inner = Product(out, group.out_begin + 1, group.out_end);
    const Index unit = out_inner / std::gcd(inner, out_inner);
    const Index extent = in[group.in_begin];
    const Index chunk = std::min(chunks[group.in_begin], extent);
    const Index aligned = std::min(std::max(unit, chunk / unit * unit), extent);
    if (aligned != chunk) chunks[group.in_begin] = aligned;
  }
  return chunks;
}

Shape ReshapeOutputChunks(const std::vector<ReshapeGroup>& groups, const Shape& in,
                          const Shape& in_chunks, const Shape& out) {
  Shape chunks(out.size());
  for (const ReshapeGroup& group : groups) {
    for (std::size_t d = group.out_begin; d < group.out_end; ++d) chunks[d] = out[d];
    if (group.in_begin == group.in_end || group.out_begin == group.out_end) continue;
    const Index inner = Product(in, group.in_begin + 1, group.in_end);
    const Index out_inner = Product(out, group.out_begin + 1, group.out_end);
    const Index chunk = std::min(in_chunks[group.in_begin], in[group.in_begin]);
    chunks[group.out_begin] = std::min(chunk * inner / out_inner, out[group.out_begin]);
  }
  return chunks;
}

ReshapeOp::ReshapeOp(OpInfo info, std::shared_ptr<const StoredArray> input, Shape input_shape,
                     std::shared_ptr<OpOutput> output, std::int64_t reserved_mem)
    : OutputOp(std::move(info), std::move(output), reserved_mem),
      input_(std::move(input)),
      input_shape_(std::move(input_shape)),
      groups_(ShapeSize(input_shape_) > 0 ? ReshapeGroups(input_shape_, info_.shape)
                                          : std::vector<ReshapeGroup>{}),
      grid_(info_.shape, info_.chunks) {
  info_.num_tasks = grid_.num_blocks();
  info_.task_shape = grid_.chunks();
  info_.chunk_reads = grid_.num_blocks();
  info_.chunk_writes = grid_.num_blocks();
}

Region ReshapeOp::InputRegion(const Shape& block) const {
  const Region out = grid_.BlockRegion(block);
  Region region{Shape(input_shape_.size(), 0), input_shape_};
  for (const ReshapeGroup& group : groups_) {
    if (group.in_begin == group.in_end) continue;
    if (group.out_begin == group.out_end) continue;  // extent-1 axes: the whole of them
    const Index inner = Product(input_shape_, group.in_begin + 1, group.in_end);
    const Index out_inner = Product(info_.shape, group.out_begin + 1, group.out_end);
    region.start[group.in_begin] = out.start[group.out_begin] * out_inner / inner;
    region.shape[group.in_begin] = out.shape[group.out_begin] * out_inner / inner;
  }
  return region;
}

std::int64_t ReshapeOp::projected_mem(std::int64_t task) const {
  const Shape block = grid_.BlockIndex(task);
  const std::int64_t block_bytes = ShapeSize(grid_.BlockShape(block)) * info_.dtype.itemsize();
  return reserved_mem_ + block_bytes +
         std::max(input_->ProjectRead(InputRegion(block)), output_->ProjectWrite(block));
}

std::string ReshapeOp::DescribeTask(std::int64_t task) const {
  return "block " + ShapeToString(grid_.BlockIndex(task));
}

bool ReshapeOp::IsTaskDone(std::int64_t task) const { return output_->Has(grid_.BlockIndex(task)); }

void ReshapeOp::RunTask(std::int64_t task) const {
  const Shape block = grid_.BlockIndex(task);
  NDArray values(grid_.BlockShape(block), info_.dtype);
  {
    const std::shared_ptr<const NDArray> read = input_->Read(InputRegion(block));
    if (values.nbytes() > 0) {
      std::memcpy(values.mutable_bytes().data(), read->bytes().data(),
                  static_cast<std::size_t>(values.nbytes()));
    }
  }
  output_->Write(block, std::move(values));
}

std::int64_t ReshapeOp::MaxProjection(std::int64_t* worst_task) const {
  return LargestProjection(grid_, {}, worst_task);
}

}  // namespace tessera::planner
