#include "gather_op.hpp"

#include <algorithm>
#include <cstring>
#include <unordered_map>
#include <utility>

#include "tessera/core/errors.hpp"

namespace tessera::planner {
namespace {

// Combinations of pieces (one per axis) enumerated for a projection; beyond this a
// block's largest read is bounded from its largest piece per axis instead.
constexpr Index kMaxEnumeratedReads = 4096;

// Calls fn(pieces) for every combination of one piece per axis, C order. Nothing when
// an axis has no piece; once (no pieces) for a 0-d output.
template <class Fn>
void ForEachCombination(const std::vector<std::vector<GatherOp::AxisPiece>>& pieces, Fn&& fn) {
  for (const auto& along : pieces) {
    if (along.empty()) return;
  }
  const std::size_t ndim = pieces.size();
  std::vector<std::size_t> pick(ndim, 0);
  std::vector<const GatherOp::AxisPiece*> combination(ndim);
  while (true) {
    for (std::size_t d = 0; d < ndim; ++d) combination[d] = &pieces[d][pick[d]];
    fn(static_cast<const std::vector<const GatherOp::AxisPiece*>&>(combination));
    std::size_t d = ndim;
    while (d > 0) {
      --d;
      if (++pick[d] < pieces[d].size()) break;
      pick[d] = 0;
      if (d == 0) return;
    }
    if (ndim == 0) return;
  }
}

}  // namespace

GatherOp::GatherOp(OpInfo info, std::shared_ptr<const IndexMap> map,
                   std::vector<std::shared_ptr<const StoredArray>> inputs,
                   std::vector<ChunkGrid> input_grids, std::shared_ptr<OpOutput> output,
                   std::int64_t reserved_mem)
    : OutputOp(std::move(info), std::move(output), reserved_mem),
      map_(std::move(map)),
      inputs_(std::move(inputs)),
      input_grids_(std::move(input_grids)),
      grid_(info_.shape, info_.chunks) {
  info_.num_tasks = grid_.num_blocks();
  info_.task_shape = grid_.chunks();
  info_.chunk_writes = grid_.num_blocks();
  const std::size_t ndim = grid_.shape().size();
  for (std::size_t source = 0; source < map_->sources.size(); ++source) {
    const GatherSource& spec = map_->sources[source];
    std::vector<int> readers(spec.fixed.size(), -1);
    for (std::size_t d = 0; d < spec.axes.size(); ++d) {
      if (spec.axes[d].input_axis >= 0)
        readers[static_cast<std::size_t>(spec.axes[d].input_axis)] = static_cast<int>(d);
    }
    for (std::size_t axis = 0; axis < readers.size(); ++axis) {
      if (readers[axis] < 0 && spec.fixed[axis] < 0) {
        throw Error("internal error: gather " + info_.name + " neither reads nor fixes axis " +
                    std::to_string(axis) + " of input " + std::to_string(source));
      }
    }
    reader_axis_.push_back(std::move(readers));
  }
  // Chunk reads: per source, a block reads the product over axes of the chunks its
  // indices touch, so the total is the product over axes of per-axis sums.
  worst_blocks_.assign(ndim, {});
  std::vector<Index> worst_extent(ndim, -1);
  for (std::size_t source = 0; source < map_->sources.size(); ++source) {
    Index reads = 1;
    for (std::size_t d = 0; d < ndim; ++d) {
      Index along = 0;
      for (Index b = 0; b < grid_.grid_shape()[d]; ++b) {
        Region region{Shape(ndim, 0), grid_.shape()};
        region.start[d] = b * grid_.chunks()[d];
        region.shape[d] = std::min(grid_.chunks()[d], grid_.shape()[d] - region.start[d]);
        const std::vector<AxisPiece> pieces = AxisPieces(source, d, region);
        along += static_cast<Index>(pieces.size());
        for (const AxisPiece& piece : pieces) {
          if (piece.last - piece.first > worst_extent[d]) {
            worst_extent[d] = piece.last - piece.first;
            worst_blocks_[d] = {b};
          }
        }
      }
      reads *= along;
    }
    info_.chunk_reads += reads;
  }
}

std::vector<GatherOp::AxisPiece> GatherOp::AxisPieces(std::size_t source, std::size_t d,
                                                      const Region& region) const {
  const GatherSource& spec = map_->sources[source];
  Index lo = region.start[d];
  Index hi = lo + region.shape[d];
  if (static_cast<int>(d) == map_->join_axis) {
    lo = std::max(lo, spec.begin);
    hi = std::min(hi, spec.end);
  }
  std::vector<AxisPiece> pieces;
  if (lo >= hi) return pieces;
  const AxisMap& axis = spec.axes[d];
  if (axis.input_axis < 0) {
    AxisPiece& piece = pieces.emplace_back();
    piece.segments.push_back(Segment{lo - region.start[d], 0, hi - lo, 0, 1});
    return pieces;
  }
  const Index chunk = input_grids_[source].chunks()[static_cast<std::size_t>(axis.input_axis)];
  std::unordered_map<Index, std::size_t> piece_of_chunk;
  Index current_chunk = -1;
  std::size_t current = 0;
  for (Index i = lo; i < hi; ++i) {
    const Index index = axis.InputIndex(i);
    const Index chunk_index = index / chunk;
    if (chunk_index != current_chunk) {
      current_chunk = chunk_index;
      const auto [found, added] = piece_of_chunk.try_emplace(chunk_index, pieces.size());
      current = found->second;
      if (added) {
        AxisPiece& piece = pieces.emplace_back();
        piece.first = index;
        piece.last = index;
      }
    }
    AxisPiece& piece = pieces[current];
    const Index position = i - region.start[d];
    piece.first = std::min(piece.first, index);
    piece.last = std::max(piece.last, index);
    if (!piece.segments.empty()) {
      // Extend the last segment when this index continues it: a second index sets the
      // step; a run of one index followed by another becomes a repeat (`every`).
      Segment& last = piece.segments.back();
      if (last.position + last.count == position) {
        if (last.count == 1) last.step = index - last.index;
        if (last.every == 1 && last.step == 0 && index != last.index) {
          last.every = last.count;
          last.step = index - last.index;
        }
        if (last.IndexAt(last.count) == index) {
          ++last.count;
          continue;
        }
      }
    }
    piece.segments.push_back(Segment{position, index, 1, 0, 1});
  }
  return pieces;
}

std::vector<std::vector<GatherOp::AxisPiece>> GatherOp::Pieces(std::size_t source,
                                                               const Region& region) const {
  std::vector<std::vector<AxisPiece>> pieces(region.shape.size());
  for (std::size_t d = 0; d < pieces.size(); ++d) {
    pieces[d] = AxisPieces(source, d, region);
    if (pieces[d].empty()) return {std::vector<AxisPiece>{}};
  }
  return pieces;
}

Region GatherOp::ReadBox(std::size_t source, const std::vector<const AxisPiece*>& pieces) const {
  const GatherSource& spec = map_->sources[source];
  Region box{Shape(spec.fixed.size()), Shape(spec.fixed.size())};
  for (std::size_t axis = 0; axis < spec.fixed.size(); ++axis) {
    const int reader = reader_axis_[source][axis];
    if (reader < 0) {
      box.start[axis] = spec.fixed[axis];
      box.shape[axis] = 1;
    } else {
      const AxisPiece& piece = *pieces[static_cast<std::size_t>(reader)];
      box.start[axis] = piece.first;
      box.shape[axis] = piece.last - piece.first + 1;
    }
  }
  return box;
}

void GatherOp::Scatter(const NDArray& box_values, const Region& box, std::size_t source,
                       const std::vector<const AxisPiece*>& pieces, NDArray& block) const {
  const std::size_t ndim = pieces.size();
  const std::size_t itemsize = static_cast<std::size_t>(info_.dtype.itemsize());
  const std::byte* const from = box_values.bytes().data();
  std::byte* const to = block.mutable_bytes().data();
  if (ndim == 0) {
    std::memcpy(to, from, itemsize);
    return;
  }
  const Shape box_strides = CStrides(box.shape);
  const Shape block_strides = CStrides(block.shape());
  const GatherSource& spec = map_->sources[source];
  // Per axis, the box's stride along the input axis it reads (0 for a new axis).
  std::vector<Index> in_strides(ndim, 0);
  for (std::size_t d = 0; d < ndim; ++d) {
    const int axis = spec.axes[d].input_axis;
    if (axis >= 0) in_strides[d] = box_strides[static_cast<std::size_t>(axis)];
  }
  // Offsets in the block and in the box of element k of segment `s` of axis d.
  const auto out_offset = [&](std::size_t d, const Segment& s, Index k) {
    return (s.position + k) * block_strides[d];
  };
  const auto in_offset = [&](std::size_t d, const Segment& s, Index k) {
    const int axis = spec.axes[d].input_axis;
    if (axis < 0) return Index{0};
    return (s.IndexAt(k) - box.start[static_cast<std::size_t>(axis)]) * in_strides[d];
  };
  // Walk every element of the outer axes (a cursor per axis: segment, element), and
  // copy the innermost axis segment by segment, whole when it is contiguous in the box.
  const std::size_t last = ndim - 1;
  std::vector<std::size_t> segment(last, 0);
  std::vector<Index> element(last, 0);
  const std::vector<Segment>& inner = pieces[last]->segments;
  while (true) {
    Index out_base = 0;
    Index in_base = 0;
    for (std::size_t d = 0; d < last; ++d) {
      const Segment& s = pieces[d]->segments[segment[d]];
      out_base += out_offset(d, s, element[d]);
      in_base += in_offset(d, s, element[d]);
    }
    for (const Segment& s : inner) {
      std::byte* out = to + static_cast<std::size_t>(out_base + out_offset(last, s, 0)) * itemsize;
      if (s.count == 1 || (s.every == 1 && s.step * in_strides[last] == 1)) {
        std::memcpy(out,
                    from + static_cast<std::size_t>(in_base + in_offset(last, s, 0)) * itemsize,
                    static_cast<std::size_t>(s.count) * itemsize);
        continue;
      }
      for (Index k = 0; k < s.count; ++k) {
        std::memcpy(out + static_cast<std::size_t>(k) * itemsize,
                    from + static_cast<std::size_t>(in_base + in_offset(last, s, k)) * itemsize,
                    itemsize);
      }
    }
    std::size_t d = last;
    while (d > 0) {
      --d;
      if (++element[d] < pieces[d]->segments[segment[d]].count) break;
      element[d] = 0;
      if (++segment[d] < pieces[d]->segments.size()) break;
      segment[d] = 0;
      if (d == 0) return;
    }
    if (last == 0) return;
  }
}

std::int64_t GatherOp::LargestRead(const Region& region) const {
  std::int64_t largest = 0;
  for (std::size_t source = 0; source < map_->sources.size(); ++source) {
    const auto pieces = Pieces(source, region);
    Index combinations = 1;
    for (const auto& along : pieces) combinations *= static_cast<Index>(along.size());
    if (combinations == 0) continue;
    if (combinations <= kMaxEnumeratedReads) {
      ForEachCombination(pieces, [&](const std::vector<const AxisPiece*>& combination) {
        largest = std::max(largest, inputs_[source]->ProjectRead(ReadBox(source, combination)));
      });
      continue;
    }
    // Every read lies in one chunk and is no larger than the largest piece per axis.
    std::vector<const AxisPiece*> widest(pieces.size());
    for (std::size_t d = 0; d < pieces.size(); ++d) {
      widest[d] = &*std::max_element(pieces[d].begin(), pieces[d].end(),
                                     [](const AxisPiece& a, const AxisPiece& b) {
                                       return a.last - a.first < b.last - b.first;
                                     });
    }
    largest = std::max(largest, inputs_[source]->ProjectRead(ReadBox(source, widest)));
  }
  return largest;
}

std::int64_t GatherOp::projected_mem(std::int64_t task) const {
  const Shape block = grid_.BlockIndex(task);
  const Region region = grid_.BlockRegion(block);
  const std::int64_t block_bytes = ShapeSize(region.shape) * info_.dtype.itemsize();
  return reserved_mem_ + block_bytes + std::max(LargestRead(region), output_->ProjectWrite(block));
}

std::string GatherOp::DescribeTask(std::int64_t task) const {
  return "block " + ShapeToString(grid_.BlockIndex(task));
}

bool GatherOp::IsTaskDone(std::int64_t task) const { return output_->Has(grid_.BlockIndex(task)); }

void GatherOp::RunTask(std::int64_t task) const {
  const Shape block = grid_.BlockIndex(task);
  const Region region = grid_.BlockRegion(block);
  NDArray values(region.shape, info_.dtype);
  for (std::size_t source = 0; source < map_->sources.size(); ++source) {
    ForEachCombination(Pieces(source, region),
                       [&](const std::vector<const AxisPiece*>& combination) {
                         const Region box = ReadBox(source, combination);
                         const std::shared_ptr<const NDArray> read = inputs_[source]->Read(box);
                         Scatter(*read, box, source, combination, values);
                       });
  }
  output_->Write(block, std::move(values));
}

std::int64_t GatherOp::MaxProjection(std::int64_t* worst_task) const {
  return LargestProjection(grid_, worst_blocks_, worst_task);
}

}  // namespace tessera::planner
