#include "tessera/plan/internal/node.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>

#include "kernels/op_lookup.hpp"
#include "node_detail.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/core/type_promotion.hpp"
#include "tessera/storage/zarr_array.hpp"

namespace tessera::planner {
namespace {

std::string UniqueName(std::string_view op) {
  static std::atomic<std::int64_t> counter{0};
  return std::string(op) + "-" + std::to_string(counter.fetch_add(1) + 1);
}

NodePtr MakeNode(NodeKind kind, std::string op, Shape shape, Shape chunks, DType dtype,
                 std::vector<NodePtr> inputs, NodeDetail detail) {
  return std::make_shared<const Node>(kind, std::move(op), std::move(shape), std::move(chunks),
                                      dtype, std::move(inputs),
                                      std::make_shared<const NodeDetail>(std::move(detail)));
}

// Chunks for a computed array of `shape`: `chunks` validated, or one block per
// dimension when empty.
Shape CheckedChunks(const Shape& shape, Shape chunks, std::string_view op) {
  if (chunks.empty() && !shape.empty()) {
    chunks.resize(shape.size());
    for (std::size_t d = 0; d < shape.size(); ++d) chunks[d] = std::max<Index>(shape[d], 1);
  }
  if (chunks.size() != shape.size()) {
    throw InvalidArgument(std::string(op) + ": chunks " + ShapeToString(chunks) + " have " +
                          std::to_string(chunks.size()) + " dimensions but the shape " +
                          ShapeToString(shape) + " has " + std::to_string(shape.size()));
  }
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] < 0) {
      throw InvalidArgument(std::string(op) + ": shape " + ShapeToString(shape) +
                            " has a negative extent");
    }
    if (chunks[d] < 1) {
      throw InvalidArgument(std::string(op) + ": chunks " + ShapeToString(chunks) +
                            " must be >= 1 in every dimension");
    }
  }
  ShapeSize(shape);  // overflow check
  return chunks;
}

// The operand's dimension that lines up with result dimension `d` (numpy broadcasting
// aligns trailing dimensions), or -1 when the operand has no such dimension.
int AlignedDim(const Node& operand, int result_ndim, int d) {
  const int dim = d - (result_ndim - operand.ndim());
  return dim >= 0 ? dim : -1;
}

// Chunks of an elementwise result: per dimension, those of the first operand that spans
// it, preferring stored or computed operands over generators (whose chunking is free).
Shape ResultChunks(const Shape& shape, std::span<const NodePtr> operands) {
  const int ndim = static_cast<int>(shape.size());
  Shape chunks(shape.size());
  for (int d = 0; d < ndim; ++d) {
    Index chosen = 0;
    for (int pass = 0; pass < 2 && chosen == 0; ++pass) {
      for (const NodePtr& operand : operands) {
        if (pass == 0 && IsGenerator(operand->kind())) continue;
        const int dim = AlignedDim(*operand, ndim, d);
        if (dim >= 0 &&
            operand->shape()[static_cast<std::size_t>(dim)] == shape[static_cast<std::size_t>(d)]) {
          chosen = operand->chunks()[static_cast<std::size_t>(dim)];
          break;
        }
      }
    }
    chunks[static_cast<std::size_t>(d)] =
        chosen > 0 ? chosen : std::max<Index>(shape[static_cast<std::size_t>(d)], 1);
  }
  return chunks;
}

// x as dtype `dtype`: x itself when it already is; a constant is converted directly.
NodePtr CastTo(NodePtr x, DType dtype) {
  if (x->dtype() == dtype) return x;
  return MakeAsType(std::move(x), dtype);
}

NodePtr BroadcastTo(NodePtr x, const Shape& shape, const Shape& chunks) {
  if (x->shape() == shape) return x;
  if (x->kind() == NodeKind::kConstant) {
    return MakeConstant(shape, x->detail().constant, x->dtype(), chunks, x->op());
  }
  const DType dtype = x->dtype();
  return MakeNode(NodeKind::kBroadcast, "broadcast_to", shape, chunks, dtype, {std::move(x)},
                  NodeDetail{});
}

// numpy refuses an integer base to a negative integer power ("Integers to negative
// integer powers are not allowed."): x ** -1 of integers would otherwise be 0 (or, for
// unsigned x, the -1 cast to a huge power). Refused when the graph is built, for a
// constant exponent; an exponent array is checked by the kernel as it runs.
void CheckIntegerPowerByConstant(const Node& exponent, DType compute) {
  if (exponent.kind() != NodeKind::kConstant || compute.kind() == DTypeKind::kFloat ||
      compute.is_complex()) {
    return;
  }
  const double value = exponent.detail().constant.As<double>();
  if (!(value < 0)) return;
  throw InvalidArgument(
      "pow: Integers to negative integer powers are not allowed (as numpy): the base is " +
      std::string(compute.name()) + " and the exponent is " +
      exponent.detail().constant.ToString() +
      "; cast to a float first, e.g. astype(x, float64) ** " +
      exponent.detail().constant.ToString() + ", or write 1.0 / x for x ** -1");
}

}  // namespace

bool IsElementwise(NodeKind kind) {
  switch (kind) {
    case NodeKind::kUnary:
    case NodeKind::kBinary:
    case NodeKind::kWhere:
    case NodeKind::kAsType:
    case NodeKind::kBroadcast:
      return true;
    default:
      return IsGenerator(kind);
  }
}

bool IsGenerator(NodeKind kind) {
  return kind == NodeKind::kConstant || kind == NodeKind::kArange || kind == NodeKind::kRandom;
}

bool IsSource(NodeKind kind) { return kind == NodeKind::kZarr || kind == NodeKind::kInMemory; }

bool IsPlannedAlone(NodeKind kind) {
  return kind == NodeKind::kRechunk || kind == NodeKind::kReduce || kind == NodeKind::kContract ||
         kind == NodeKind::kGather || kind == NodeKind::kReshape;
}

Node::Node(NodeKind kind, std::string op, Shape shape, Shape chunks, DType dtype,
           std::vector<NodePtr> inputs, std::shared_ptr<const NodeDetail> detail)
    : name_(UniqueName(op)),
      kind_(kind),
      op_(std::move(op)),
      shape_(std::move(shape)),
      chunks_(std::move(chunks)),
      dtype_(dtype),
      inputs_(std::move(inputs)),
      detail_(std::move(detail)) {}

NodePtr Node::WithInputs(std::vector<NodePtr> inputs) const {
  auto copy = std::make_shared<Node>(*this);
  copy->inputs_ = std::move(inputs);
  return copy;
}

NodePtr MakeRechunk(NodePtr x, Shape chunks) {
  if (x == nullptr) throw InvalidArgument("rechunk: the array is empty");
  if (chunks.size() != x->shape().size()) {
    throw InvalidArgument("rechunk: chunks " + ShapeToString(chunks) + " have " +
                          std::to_string(chunks.size()) + " dimensions but the array " +
                          ShapeToString(x->shape()) + " has " + std::to_string(x->ndim()) +
                          "; give one chunk length per dimension (-1 for a whole dimension)");
  }
  for (std::size_t d = 0; d < chunks.size(); ++d) {
    const Index extent = std::max<Index>(x->shape()[d], 1);
    if (chunks[d] == -1) chunks[d] = extent;
    if (chunks[d] < 1) {
      throw InvalidArgument("rechunk: chunk " + std::to_string(chunks[d]) + " in dimension " +
                            std::to_string(d) + " of " + ShapeToString(chunks) +
                            " must be >= 1 (or -1 for the whole dimension)");
    }
    chunks[d] = std::min(chunks[d], extent);
  }
  // The same grid, whatever chunk lengths beyond the extent the input was given.
  Shape current = x->chunks();
  for (std::size_t d = 0; d < current.size(); ++d)
    current[d] = std::min(current[d], std::max<Index>(x->shape()[d], 1));
  if (chunks == current) return x;
  if (IsGenerator(x->kind())) {
    // Values depend on the index only: the same generator on the new grid.
    return MakeNode(x->kind(), x->op(), x->shape(), std::move(chunks), x->dtype(), {}, x->detail());
  }
  return MakeNode(NodeKind::kRechunk, "rechunk", x->shape(), std::move(chunks), x->dtype(), {x},
                  NodeDetail{});
}

NodePtr MakeReduce(ReductionOp op, NodePtr x, std::vector<int> axes, bool keepdims,
                   std::optional<DType> dtype, double correction) {
  if (x == nullptr) throw InvalidArgument("reduction: the array is empty");
  for (std::size_t i = 0; i < axes.size(); ++i) {
    if (axes[i] < 0 || axes[i] >= x->ndim() || (i > 0 && axes[i] <= axes[i - 1])) {
      throw InvalidArgument("reduction: axes must be sorted, distinct and within the array's " +
                            std::to_string(x->ndim()) + " dimensions");
    }
  }
  const bool one_axis_or_all = axes.size() <= 1 || static_cast<int>(axes.size()) == x->ndim();
  if ((op == ReductionOp::kArgMin || op == ReductionOp::kArgMax) && !one_axis_or_all) {
    throw InvalidArgument("argmin/argmax reduce one axis or the whole array, not " +
                          std::to_string(axes.size()) + " axes");
  }
  const DType result = ReductionResultType(op, x->dtype(), dtype);
  const bool sum_or_prod = op == ReductionOp::kSum || op == ReductionOp::kProd;
  if (sum_or_prod && result != x->dtype() &&
      result != ReductionResultType(op, x->dtype(), std::nullopt)) {
    x = MakeAsType(x, result);  // numpy casts each element to the requested dtype first
  }
  const bool has_identity = op != ReductionOp::kMin && op != ReductionOp::kMax &&
                            op != ReductionOp::kArgMin && op != ReductionOp::kArgMax;
  bool reduces_empty = false;
  Index kept_size = 1;
  for (int d = 0; d < x->ndim(); ++d) {
    const Index extent = x->shape()[static_cast<std::size_t>(d)];
    if (std::find(axes.begin(), axes.end(), d) != axes.end()) {
      reduces_empty = reduces_empty || extent == 0;
    } else {
      kept_size *= extent;
    }
  }
  if (!has_identity && reduces_empty && kept_size > 0) {
    throw InvalidArgument(std::string(ReductionName(op)) + " of an empty dimension of " +
                          x->name() + " " + ShapeToString(x->shape()) +
                          ": it has no identity (numpy raises too); reduce a non-empty array");
  }
  Shape shape;
  Shape chunks;
  for (int d = 0; d < x->ndim(); ++d) {
    const auto dim = static_cast<std::size_t>(d);
    const bool reduced = std::find(axes.begin(), axes.end(), d) != axes.end();
    if (!reduced) {
      shape.push_back(x->shape()[dim]);
      chunks.push_back(x->chunks()[dim]);
    } else if (keepdims) {
      shape.push_back(1);
      chunks.push_back(1);
    }
  }
  NodeDetail detail;
  detail.reduction = op;
  detail.axes = std::move(axes);
  detail.keepdims = keepdims;
  detail.correction = correction;
  return MakeNode(NodeKind::kReduce, std::string(ReductionName(op)), std::move(shape),
                  std::move(chunks), result, {std::move(x)}, std::move(detail));
}

std::size_t BroadcastDim(const Node& broadcast, int input_dim) {
  const Node& input = *broadcast.inputs().front();
  return static_cast<std::size_t>(input_dim + broadcast.ndim() - input.ndim());
}

bool IsStretched(const Node& broadcast, int input_dim) {
  const Node& input = *broadcast.inputs().front();
  return input.shape()[static_cast<std::size_t>(input_dim)] == 1 &&
         broadcast.shape()[BroadcastDim(broadcast, input_dim)] != 1;
}

Shape BroadcastShapes(const Shape& a, const Shape& b) {
  const std::size_t ndim = std::max(a.size(), b.size());
  Shape result(ndim);
  for (std::size_t i = 0; i < ndim; ++i) {
    const Index x = i < a.size() ? a[a.size() - 1 - i] : 1;
    const Index y = i < b.size() ? b[b.size() - 1 - i] : 1;
    if (x != y && x != 1 && y != 1) {
      throw InvalidArgument("shapes " + ShapeToString(a) + " and " + ShapeToString(b) +
                            " cannot be broadcast together (dimension " +
                            std::to_string(ndim - 1 - i) + ": " + std::to_string(x) + " vs " +
                            std::to_string(y) + ")");
    }
    result[ndim - 1 - i] = x == 1 ? y : x;
  }
  return result;
}

NodePtr MakeZarrSource(std::shared_ptr<Store> store, std::string path) {
  auto array =
      std::make_shared<const ZarrArray>(ZarrArray::Open(std::move(store), std::move(path)));
  const ZarrMetadata& meta = array->metadata();
  NodeDetail detail;
  detail.zarr = array;
  // Tasks read the smallest chunks that can be read alone: a sharded array's inner chunks.
  return MakeNode(NodeKind::kZarr, "from_zarr", meta.shape, meta.read_chunks(), meta.dtype, {},
                  std::move(detail));
}

NodePtr MakeInMemory(NDArray data, Shape chunks) {
  Shape shape = data.shape();
  chunks = CheckedChunks(shape, std::move(chunks), "asarray");
  const DType dtype = data.dtype();
  NodeDetail detail;
  detail.data = std::make_shared<const NDArray>(std::move(data));
  return MakeNode(NodeKind::kInMemory, "asarray", std::move(shape), std::move(chunks), dtype, {},
                  std::move(detail));
}

NodePtr MakeConstant(Shape shape, Scalar value, DType dtype, Shape chunks, std::string op) {
  chunks = CheckedChunks(shape, std::move(chunks), op);
  NodeDetail detail;
  detail.constant = value;
  return MakeNode(NodeKind::kConstant, std::move(op), std::move(shape), std::move(chunks), dtype,
                  {}, std::move(detail));
}

NodePtr MakeArange(double start, double step, Index length, DType dtype, Shape chunks) {
  if (step == 0) throw InvalidArgument("arange: step must not be 0");
  if (length < 0) length = 0;
  Shape shape{length};
  chunks = CheckedChunks(shape, std::move(chunks), "arange");
  NodeDetail detail;
  detail.start = start;
  detail.step = step;
  return MakeNode(NodeKind::kArange, "arange", std::move(shape), std::move(chunks), dtype, {},
                  std::move(detail));
}

NodePtr MakeRandom(Shape shape, Shape chunks, std::uint64_t seed) {
  chunks = CheckedChunks(shape, std::move(chunks), "random");
  NodeDetail detail;
  detail.seed = seed;
  return MakeNode(NodeKind::kRandom, "random", std::move(shape), std::move(chunks), float64, {},
                  std::move(detail));
}

NodePtr MakeUnary(std::string_view op, NodePtr x) {
  const kernels::UnaryOp unary = kernels::UnaryOpFromName(op);
  const kernels::Signature signature = kernels::ResolveUnary(unary, x->dtype());
  x = CastTo(std::move(x), signature.input);
  NodeDetail detail;
  detail.unary = kernels::GetUnaryKernel(unary, signature.input);
  Shape shape = x->shape();
  Shape chunks = x->chunks();
  return MakeNode(NodeKind::kUnary, std::string(op), std::move(shape), std::move(chunks),
                  signature.output, {std::move(x)}, std::move(detail));
}

NodePtr MakeBinary(std::string_view op, NodePtr x, NodePtr y) {
  const kernels::BinaryOp binary = kernels::BinaryOpFromName(op);
  const kernels::Signature signature = kernels::ResolveBinary(binary, x->dtype(), y->dtype());
  Shape shape = BroadcastShapes(x->shape(), y->shape());
  if (binary == kernels::BinaryOp::kPow) CheckIntegerPowerByConstant(*y, signature.input);
  const NodePtr operands[] = {x, y};
  Shape chunks = ResultChunks(shape, operands);
  x = BroadcastTo(CastTo(std::move(x), signature.input), shape, chunks);
  y = BroadcastTo(CastTo(std::move(y), signature.input), shape, chunks);
  NodeDetail detail;
  detail.binary = kernels::GetBinaryKernel(binary, signature.input);
  return MakeNode(NodeKind::kBinary, std::string(op), std::move(shape), std::move(chunks),
                  signature.output, {std::move(x), std::move(y)}, std::move(detail));
}

NodePtr MakeBinaryWithScalar(std::string_view op, NodePtr x, const Scalar& y, bool scalar_first) {
  const DType dtype = ResultTypeWithScalar(x->dtype(), y.kind());
  NodePtr constant = MakeConstant(x->shape(), y, dtype, x->chunks());
  return scalar_first ? MakeBinary(op, std::move(constant), std::move(x))
                      : MakeBinary(op, std::move(x), std::move(constant));
}

NodePtr MakeWhere(NodePtr condition, NodePtr x, NodePtr y) {
  const DType dtype = ResultType(x->dtype(), y->dtype());
  Shape shape = BroadcastShapes(BroadcastShapes(condition->shape(), x->shape()), y->shape());
  const NodePtr operands[] = {condition, x, y};
  Shape chunks = ResultChunks(shape, operands);
  condition = BroadcastTo(CastTo(std::move(condition), bool_), shape, chunks);
  x = BroadcastTo(CastTo(std::move(x), dtype), shape, chunks);
  y = BroadcastTo(CastTo(std::move(y), dtype), shape, chunks);
  NodeDetail detail;
  detail.where = kernels::GetWhereKernel(dtype);
  return MakeNode(NodeKind::kWhere, "where", std::move(shape), std::move(chunks), dtype,
                  {std::move(condition), std::move(x), std::move(y)}, std::move(detail));
}

NodePtr MakeAsType(NodePtr x, DType dtype) {
  NodeDetail detail;
  detail.cast = kernels::GetCastKernel(x->dtype(), dtype);
  Shape shape = x->shape();
  Shape chunks = x->chunks();
  return MakeNode(NodeKind::kAsType, "astype", std::move(shape), std::move(chunks), dtype,
                  {std::move(x)}, std::move(detail));
}

NodePtr MakeBroadcast(NodePtr x, Shape shape) {
  const Shape combined = BroadcastShapes(x->shape(), shape);
  if (combined != shape) {
    throw InvalidArgument("broadcast_to: cannot broadcast shape " + ShapeToString(x->shape()) +
                          " to " + ShapeToString(shape));
  }
  const NodePtr operands[] = {x};
  Shape chunks = ResultChunks(shape, operands);
  return BroadcastTo(std::move(x), shape, chunks);
}

namespace {

// What names a kernel given without an identity, the same in every run of one build: a
// plain function by its symbol (or, unexported, its offset in its module), any other
// callable by its C++ type (each lambda has its own).
std::string KernelIdentity(const BlockFunction& fn) {
  using Function = NDArray (*)(std::span<const NDArray>, const BlockInfo&);
  if (const Function* function = fn.target<Function>(); function != nullptr && *function) {
    const void* address = reinterpret_cast<const void*>(*function);
    Dl_info where{};
    if (dladdr(address, &where) != 0) {
      if (where.dli_sname != nullptr) return std::string("function ") + where.dli_sname;
      const auto offset = reinterpret_cast<std::uintptr_t>(address) -
                          reinterpret_cast<std::uintptr_t>(where.dli_fbase);
      const std::string module = where.dli_fname != nullptr
                                     ? std::filesystem::path(where.dli_fname).filename().string()
                                     : "?";
      return "function " + module + "+" + std::to_string(offset);
    }
  }
  return fn.target_type().name();
}

}  // namespace

NodePtr MakeMapBlocks(BlockFunction fn, std::vector<NodePtr> inputs, Shape shape, Shape chunks,
                      DType dtype, std::int64_t extra_projected_mem, std::string identity,
                      FunctionRecipe recipe) {
  if (!fn) throw InvalidArgument("map_blocks: the function is empty");
  if (extra_projected_mem < 0) {
    throw InvalidArgument("map_blocks: extra_projected_mem must be >= 0, got " +
                          std::to_string(extra_projected_mem));
  }
  chunks = CheckedChunks(shape, std::move(chunks), "map_blocks");
  for (const NodePtr& input : inputs) {
    if (input->shape() != shape || input->chunks() != chunks) {
      throw InvalidArgument("map_blocks: input " + input->name() + " has shape " +
                            ShapeToString(input->shape()) + " and chunks " +
                            ShapeToString(input->chunks()) + ", but the output has shape " +
                            ShapeToString(shape) + " and chunks " + ShapeToString(chunks) +
                            "; rechunk the input to the output's chunks first");
    }
  }
  NodeDetail detail;
  detail.identity = identity.empty() ? KernelIdentity(fn) : std::move(identity);
  detail.function = std::move(fn);
  detail.extra_projected_mem = extra_projected_mem;
  detail.recipe = std::move(recipe);
  return MakeNode(NodeKind::kMapBlocks, "map_blocks", std::move(shape), std::move(chunks), dtype,
                  std::move(inputs), std::move(detail));
}

}  // namespace tessera::planner
