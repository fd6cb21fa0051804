// Node: one array of the lazy plan DAG — what it is (shape, chunks, dtype), which op
// produces it from which input nodes. Nodes are immutable and shared (NodePtr); an
// Array (api/) is a handle on one. Building nodes validates shapes and dtypes
// (InvalidArgument) but never reads data and never checks memory: that happens when
// a plan is finalized (plan/finalized_plan.hpp).
//
// Internal to the engine (not installed): users build nodes through the array API.
//
//   NodePtr t2 = MakeZarrSource(store, "t2m");        // reads only .zarray
//   NodePtr k  = MakeConstant({}, Scalar(273.15), float32, {});
//   NodePtr d  = MakeBinary("subtract", t2, k);       // broadcasting + type promotion
//   NodePtr e  = MakeUnary("exp", d);
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/core/chunk_grid.hpp"
#include "tessera/core/dtype.hpp"
#include "tessera/core/ndarray.hpp"
#include "tessera/core/scalar.hpp"
#include "tessera/core/shape.hpp"
#include "tessera/plan/block_function.hpp"
#include "tessera/plan/internal/contraction.hpp"
#include "tessera/plan/node_handle.hpp"
#include "tessera/plan/reduction.hpp"

namespace tessera {
class Store;
class ZarrArray;
}  // namespace tessera

namespace tessera::planner {

enum class NodeKind {
  kZarr,       // a stored Zarr array (from_zarr)
  kInMemory,   // an NDArray given by the user (asarray)
  kConstant,   // full / ones / zeros: one value everywhere
  kArange,     // start + step * i (1-d)
  kRandom,     // counter-based uniform [0, 1)
  kUnary,      // elementwise f(x)
  kBinary,     // elementwise f(x, y) on operands of one dtype
  kWhere,      // elementwise condition ? x : y
  kAsType,     // elementwise cast
  kBroadcast,  // x seen with a larger shape (stride 0 along broadcast dimensions)
  kMapBlocks,  // a user's C++ function of whole blocks
  kRechunk,    // the input on another chunk grid (planned in stages, plan/rechunk_*)
  kReduce,     // a reduction over some axes (planned in rounds, plan/reduction_rounds)
  kContract,   // sums of products of two inputs (matmul, tensordot, ...: contraction.hpp)
  kGather,     // elements of inputs picked by an index map (plan/index_map.hpp)
  kReshape,    // the input's elements in C order in another shape (plan/index_map.hpp)
};

// Is the node computed element by element from its inputs (fusable tile by tile)?
bool IsElementwise(NodeKind kind);
// Is the node's value a function of the element index only (needs no input)?
bool IsGenerator(NodeKind kind);
// Is the node's value held in memory or storage already (no task computes it)?
bool IsSource(NodeKind kind);
// Is the node planned as ops of its own kind (rechunk copies, reduction rounds, ...),
// reading its inputs by region rather than block by block (never fused into an
// elementwise group)?
bool IsPlannedAlone(NodeKind kind);

struct NodeDetail;  // what the kind needs (kernel, source, function); see src/plan

class Node {
 public:
  Node(NodeKind kind, std::string op, Shape shape, Shape chunks, DType dtype,
       std::vector<NodePtr> inputs, std::shared_ptr<const NodeDetail> detail);

  // Unique in the process: "<op>-<n>", e.g. "add-7".
  const std::string& name() const { return name_; }
  NodeKind kind() const { return kind_; }
  // The op's name: "add", "exp", "astype", "ones", "from_zarr", "map_blocks", ...
  const std::string& op() const { return op_; }
  const Shape& shape() const { return shape_; }
  const Shape& chunks() const { return chunks_; }
  DType dtype() const { return dtype_; }
  int ndim() const { return static_cast<int>(shape_.size()); }
  Index size() const { return ShapeSize(shape_); }
  std::int64_t nbytes() const { return size() * dtype_.itemsize(); }
  ChunkGrid grid() const { return ChunkGrid(shape_, chunks_); }
  const std::vector<NodePtr>& inputs() const { return inputs_; }
  const NodeDetail& detail() const { return *detail_; }
  // The same node (name, op, detail) reading `inputs` instead: how a plan rewrite
  // re-points a reader (plan/passes). REQUIRES: inputs of the shapes and dtypes the node
  // was built for.
  NodePtr WithInputs(std::vector<NodePtr> inputs) const;

 private:
  std::string name_;
  NodeKind kind_;
  std::string op_;
  Shape shape_;
  Shape chunks_;
  DType dtype_;
  std::vector<NodePtr> inputs_;
  std::shared_ptr<const NodeDetail> detail_;
};

// ---- sources --------------------------------------------------------------------
// The Zarr array at `path` of `store`; reads its metadata now (FormatError/StorageError).
NodePtr MakeZarrSource(std::shared_ptr<Store> store, std::string path);
// `data` split into blocks of `chunks`.
NodePtr MakeInMemory(NDArray data, Shape chunks);

// ---- generators -----------------------------------------------------------------
NodePtr MakeConstant(Shape shape, Scalar value, DType dtype, Shape chunks, std::string op = "full");
NodePtr MakeArange(double start, double step, Index length, DType dtype, Shape chunks);
NodePtr MakeRandom(Shape shape, Shape chunks, std::uint64_t seed);

// ---- elementwise ----------------------------------------------------------------
// Unary op by its array API name ("exp", "negative", "isnan", ...). The operand is cast
// first when the op computes in another dtype (exp of int16 computes in float32).
NodePtr MakeUnary(std::string_view op, NodePtr x);
// Binary op by name ("add", "less", "bitwise_and", ...): shapes broadcast (numpy
// rules), dtypes promote (tessera::ResultType), each operand cast and broadcast as
// needed. The result takes its chunks from the first operand that spans each dimension.
NodePtr MakeBinary(std::string_view op, NodePtr x, NodePtr y);
// A binary op with a scalar operand (weak promotion); `scalar_first` puts it on the left.
NodePtr MakeBinaryWithScalar(std::string_view op, NodePtr x, const Scalar& y, bool scalar_first);
NodePtr MakeWhere(NodePtr condition, NodePtr x, NodePtr y);
NodePtr MakeAsType(NodePtr x, DType dtype);
// x broadcast to `shape` (numpy rules); the new array's chunks follow x's where x spans
// a dimension and are `shape`'s extent elsewhere. Returns x itself when shapes match.
NodePtr MakeBroadcast(NodePtr x, Shape shape);

// ---- user kernels ---------------------------------------------------------------
// out block i = fn(input blocks i...). Inputs must all have the output's number of
// blocks per dimension... in this version: the same shape and chunks as `chunks`
// (InvalidArgument otherwise: rechunk first). `extra_projected_mem`: bytes fn
// allocates beyond its output (scratch), counted in every task's projection.
// `identity` names the function for history (OpInfo::fingerprint); by default its C++
// type stands for it, which tells lambdas apart but not two versions of one lambda's
// body: name a kernel ("smooth-v2") to keep its history apart when its code changes.
// `recipe` rebuilds fn in another process (graph_codec.hpp); empty: the node cannot be
// sent to one.
NodePtr MakeMapBlocks(BlockFunction fn, std::vector<NodePtr> inputs, Shape shape, Shape chunks,
                      DType dtype, std::int64_t extra_projected_mem, std::string identity = "",
                      FunctionRecipe recipe = {});

// ---- rechunk --------------------------------------------------------------------
// x with chunks `chunks` (one per dimension; -1 means the whole extent; a chunk larger
// than its dimension is cut to it). Returns x when the chunks do not change; a
// generator (ones, arange, random, ...) is re-chunked for free, its values being a
// function of the index only. (A rechunk of a rechunk is planned as one rechunk of the
// first one's input: the planner's rechunk_of_rechunk pass.)
// InvalidArgument for a wrong rank or a chunk < 1.
NodePtr MakeRechunk(NodePtr x, Shape chunks);

// ---- reductions -----------------------------------------------------------------
// `op` of x over `axes` (sorted, distinct, in range: see api Axes::Resolve). The
// result drops the reduced axes (keeps them with extent 1 when `keepdims`) and keeps
// x's chunks along the others; its dtype is ReductionResultType(op, x's, dtype).
// `correction` is var/std's ddof. argmin/argmax take one axis, or all of them.
NodePtr MakeReduce(ReductionOp op, NodePtr x, std::vector<int> axes, bool keepdims,
                   std::optional<DType> dtype, double correction = 0);

// ---- contractions ---------------------------------------------------------------
// `op` ("matmul", "tensordot", ...) of a and b lined up by `contraction`: result[batch,
// i, j] = sum over the contracted pairs of a[...] * b[...]. Both operands are cast to
// ResultType(a, b) first; bool computes logical or of ands (numpy). The result takes a's
// chunks along its free dimensions, b's along b's, and the first spanning operand's
// along batch dimensions. InvalidArgument when the contraction does not fit the shapes
// (the api/linalg functions check their arguments first, with their own messages).
NodePtr MakeContract(std::string op, NodePtr a, NodePtr b, Contraction contraction);

// How a broadcast node (kBroadcast) lines up with its input: input dimension `d` is
// the broadcast's dimension `BroadcastDim(b, d)` (trailing dimensions align), and the
// input is repeated along it when `IsStretched(b, d)` (its extent 1 made larger).
std::size_t BroadcastDim(const Node& broadcast, int input_dim);
bool IsStretched(const Node& broadcast, int input_dim);

// Shapes combined by numpy's broadcasting rules; InvalidArgument naming both otherwise.
Shape BroadcastShapes(const Shape& a, const Shape& b);

}  // namespace tessera::planner
