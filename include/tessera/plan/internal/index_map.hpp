// Index maps: lazy arrays whose every element is an element of an input, picked by an
// index map (kGather nodes), and reshapes (kReshape nodes). Slicing, permute_dims,
// expand_dims, squeeze, flip, roll, repeat, tile, concat and stack are all gathers
// (api/manipulation.hpp and api/indexing.hpp build them); a chain of gathers
// composes into one node when it is built, so x[::2].T[1:] reads x once.
//
//   IndexMap map = IdentityMap(*x);                  // out[i, j] = x[i, j]
//   map.sources[0].axes[1] = AxisMap{1, n - 1, -1};  // out[i, j] = x[i, n - 1 - j]
//   NodePtr flipped = MakeGather({x}, map, x->shape(), x->chunks(), x->dtype());
//
// A gather's task computes one output block: it reads, one at a time, the sub-box of
// each input chunk the block's indices touch (and no other chunk) and scatters it into
// the block (plan/gather_op.hpp).
#pragma once

#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "tessera/plan/internal/node.hpp"

namespace tessera::planner {

// Where one output axis takes its index from: output index i reads input index
//   lookup(wrap(start + step * (i / divisor)))    on `input_axis`,
// where wrap(k) = k mod modulus (in [0, modulus)) when modulus > 0, else k, and
// lookup(k) = (*table)[k] when there is a table, else k.
// slice: (start, step); flip: (n - 1, -1); roll by s: (-s, 1, modulus n); tile:
// modulus n; repeat r: divisor r; take(indices): the indices as the table.
// input_axis -1 is an axis the input does not have (new axis, stack's axis): every
// index along it reads the same input elements.
struct AxisMap {
  AxisMap(int input_axis_ = -1, Index start_ = 0, Index step_ = 1, Index divisor_ = 1,  // NOLINT
          Index modulus_ = 0, std::shared_ptr<const std::vector<Index>> table_ = nullptr)
      : input_axis(input_axis_),
        start(start_),
        step(step_),
        divisor(divisor_),
        modulus(modulus_),
        table(std::move(table_)) {}

  int input_axis = -1;
  Index start = 0;
  Index step = 1;
  Index divisor = 1;
  Index modulus = 0;
  std::shared_ptr<const std::vector<Index>> table;  // null: no lookup

  // REQUIRES: i >= 0, and a table (if any) covering wrap(...) of it.
  Index InputIndex(Index i) const;
  bool IsIdentity() const {
    return start == 0 && step == 1 && divisor == 1 && modulus == 0 && table == nullptr;
  }
  friend bool operator==(const AxisMap& a, const AxisMap& b);
};

// One input of a gather: a map per output axis, and per input axis the fixed index it
// is read at when no output axis reads it (-1 where one does). The input fills the
// output indices [begin, end) along the map's join axis.
struct GatherSource {
  std::vector<AxisMap> axes;
  Shape fixed;
  Index begin = 0;
  Index end = 0;
};

// The whole map: one source per input node (several for concat and stack, placed
// one after another along `join_axis`).
struct IndexMap {
  int join_axis = 0;
  std::vector<GatherSource> sources;
};

// out = x: every axis read by the axis of the same number, one source covering
// the whole extent along axis 0.
IndexMap IdentityMap(const Node& x);
// The map of one source: `axes` per output axis, `fixed` per input axis, covering the
// whole output `shape`.
IndexMap OneSourceMap(std::vector<AxisMap> axes, Shape fixed, const Shape& shape);

// The gather of `inputs` (one per source of `map`) of the given shape, chunks, dtype.
// Inputs must have `dtype` (cast them first). Sources that read another single-input
// gather are composed with it when the two maps compose; a one-source map over a
// concat or stack reads its inputs directly when it fixes the joined axis (one input)
// or keeps it unchanged (every input); a gather of an elementwise op (unary, astype,
// binary, where, operands of its shape) no larger than it is that op of gathered
// operands; an identity map returns the input itself. Generators are stored first (their values are
// a function of the index on their own grid), a constant is re-made in the new shape. REQUIRES: a
// consistent map (api/ validates user input and throws InvalidArgument before getting here).
NodePtr MakeGather(std::vector<NodePtr> inputs, IndexMap map, Shape shape, Shape chunks,
                   DType dtype);

// x with the same elements in C order in `shape` (ShapeSize equal; InvalidArgument
// otherwise). Axes of x are grouped with the output axes they merge into or split
// from; a block of the result is one region of x reinterpreted, which needs, in each
// group, whole chunks along every axis but the first. When x's chunks are not so, x is
// rechunked first (MakeRechunk) to chunks that line up, as close to its own as can be.
NodePtr MakeReshape(NodePtr x, Shape shape);

}  // namespace tessera::planner
