// Graph codec (tessera/plan/internal/graph_codec.hpp): a plan's requested outputs and
// the node DAG under them as CBOR, decoded into equal nodes in another process.
//
// The bytes are one CBOR map (values: graph_codec_values.hpp):
//   {"format": "tessera-graph", "version": 1,
//    "nodes": [node, ...],                          // every input before its readers
//    "outputs": [{"node": index, "target": target or null}, ...]}
//   node: {"kind", "op", "dtype", "shape", "chunks", "inputs": [index, ...], and what the
//          kind needs: a source's location and path, data (CBOR bytes), a constant,
//          a reduction, a contraction, an index map, a map_blocks recipe (CBOR bytes)}
// Decoding rebuilds each node as its Make* function built it: the same NodeDetail, its
// kernels looked up by op name and the inputs' dtypes, with the Node constructor (Make*
// functions would insert the casts and broadcasts the graph already holds), after
// checking everything the Make* function checks. Node names are per process and differ.
#include "tessera/plan/internal/graph_codec.hpp"

#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <utility>

#include "graph_codec_values.hpp"
#include "kernels/op_lookup.hpp"
#include "node_detail.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/storage/open_store.hpp"

namespace tessera::planner {
namespace {

using graph_codec::Field;
using graph_codec::Json;
using graph_codec::Malformed;

constexpr std::string_view kFormat = "tessera-graph";
constexpr std::int64_t kVersion = 1;
// Nesting of maps and lists: the format's deepest is 9 (an index map's table).
constexpr int kMaxDepth = 16;

struct KindName {
  NodeKind kind;
  std::string_view name;
};
constexpr KindName kKindNames[] = {
    {NodeKind::kZarr, "zarr"},
    {NodeKind::kInMemory, "in_memory"},
    {NodeKind::kConstant, "constant"},
    {NodeKind::kArange, "arange"},
    {NodeKind::kRandom, "random"},
    {NodeKind::kUnary, "unary"},
    {NodeKind::kBinary, "binary"},
    {NodeKind::kWhere, "where"},
    {NodeKind::kAsType, "astype"},
    {NodeKind::kBroadcast, "broadcast"},
    {NodeKind::kMapBlocks, "map_blocks"},
    {NodeKind::kRechunk, "rechunk"},
    {NodeKind::kReduce, "reduce"},
    {NodeKind::kContract, "contract"},
    {NodeKind::kGather, "gather"},
    {NodeKind::kReshape, "reshape"},
};

std::string_view NameOf(NodeKind kind) {
  for (const KindName& entry : kKindNames) {
    if (entry.kind == kind) return entry.name;
  }
  return "?";
}

struct LoaderSlot {
  std::mutex mutex;
  FunctionLoader loader;
};
LoaderSlot& Loader() {
  static LoaderSlot slot;
  return slot;
}

constexpr std::string_view kBuiltinPrefix = "tessera-builtin:";

struct BuiltinKernels {
  std::mutex mutex;
  std::map<std::string, BuiltinKernelFactory, std::less<>> factories;  // GUARDED_BY(mutex)
};
BuiltinKernels& Builtins() {
  static auto* kernels = new BuiltinKernels();  // never destroyed: kernels may run at exit
  return *kernels;
}

// "tessera-builtin:<name>:<params>" (BuiltinRecipe) rebuilt by <name>'s factory.
BlockFunction BuiltinLoader(std::string_view recipe, DType dtype) {
  recipe.remove_prefix(kBuiltinPrefix.size());
  const std::size_t colon = recipe.find(':');
  const std::string_view name = recipe.substr(0, colon);
  const std::string_view params =
      colon == std::string_view::npos ? std::string_view() : recipe.substr(colon + 1);
  BuiltinKernelFactory factory;
  {
    BuiltinKernels& kernels = Builtins();
    const std::lock_guard lock(kernels.mutex);
    if (const auto found = kernels.factories.find(name); found != kernels.factories.end()) {
      factory = found->second;
    }
  }
  if (!factory) {
    throw FormatError("graph codec: no built-in kernel \"" + std::string(name) +
                      "\" in this Tessera: run the same version everywhere");
  }
  return factory(params, dtype);
}

// ---- encoding -----------------------------------------------------------------------

// What `node`'s kind needs beyond its shape, dtype and inputs, added to `out`.
void EncodeDetail(const Node& node, Json& out) {
  const NodeDetail& detail = node.detail();
  switch (node.kind()) {
    case NodeKind::kZarr: {
      const std::optional<std::string> location = detail.zarr->store()->Location();
      if (!location) {
        throw InvalidArgument(
            "from_zarr \"" + detail.zarr->path() + "\" (" + node.name() + ") reads " +
            detail.zarr->store()->Describe() +
            ", which lives in this process's memory, so other processes cannot read it: "
            "store it in a directory, or run with executor \"threads\", \"sync\" or \"mpi\"");
      }
      out["location"] = *location;
      out["path"] = detail.zarr->path();
      break;
    }
    case NodeKind::kInMemory: {
      const std::span<const std::byte> bytes = detail.data->bytes();
      const auto* first = reinterpret_cast<const std::uint8_t*>(bytes.data());
      out["data"] = Json::binary(std::vector<std::uint8_t>(first, first + bytes.size()));
      break;
    }
    case NodeKind::kConstant:
      out["value"] = graph_codec::WriteScalar(detail.constant);
      break;
    case NodeKind::kArange:
      out["start"] = graph_codec::WriteDouble(detail.start);
      out["step"] = graph_codec::WriteDouble(detail.step);
      break;
    case NodeKind::kRandom:
      out["seed"] = detail.seed;
      break;
    case NodeKind::kMapBlocks: {
      if (!detail.recipe) {
        throw InvalidArgument("map_blocks \"" + detail.identity +
                              "\" has a C++ function, which cannot be sent to other processes: "
                              "run it with executor \"threads\", \"sync\" or \"mpi\"");
      }
      const std::string recipe = detail.recipe();
      out["recipe"] = Json::binary(std::vector<std::uint8_t>(recipe.begin(), recipe.end()));
      out["identity"] = detail.identity;
      out["extra_projected_mem"] = detail.extra_projected_mem;
      break;
    }
    case NodeKind::kReduce:
      out["reduction"] = std::string(ReductionName(detail.reduction));
      out["axes"] = detail.axes;
      out["keepdims"] = detail.keepdims;
      out["correction"] = graph_codec::WriteDouble(detail.correction);
      break;
    case NodeKind::kContract:
      out["contraction"] = graph_codec::WriteContraction(detail.contraction);
      break;
    case NodeKind::kGather:
      out["index_map"] = graph_codec::WriteIndexMap(*detail.index_map);
      break;
    default:  // unary, binary, where, astype (kernels by op and dtypes), broadcast,
      break;  // rechunk, reshape: nothing beyond shape, chunks and dtype
  }
}

// The nodes under the outputs, each once, inputs first (an explicit stack: graphs may
// be deeper than the call stack).
class Encoder {
 public:
  std::size_t Add(const NodePtr& root) {
    std::vector<std::pair<const Node*, std::size_t>> stack{{root.get(), 0}};
    while (!stack.empty()) {
      auto& [node, next_input] = stack.back();
      if (index_.contains(node)) {
        stack.pop_back();
      } else if (next_input < node->inputs().size()) {
        stack.emplace_back(node->inputs()[next_input++].get(), 0);
      } else {
        Encode(*node);
        stack.pop_back();
      }
    }
    return index_.at(root.get());
  }
  Json TakeNodes() { return std::move(nodes_); }

 private:
  void Encode(const Node& node) {
    Json inputs = Json::array();
    for (const NodePtr& input : node.inputs()) inputs.push_back(index_.at(input.get()));
    Json out{{"kind", std::string(NameOf(node.kind()))},
             {"op", node.op()},
             {"dtype", graph_codec::WriteDType(node.dtype())},
             {"shape", node.shape()},
             {"chunks", node.chunks()},
             {"inputs", std::move(inputs)}};
    EncodeDetail(node, out);
    index_.emplace(&node, nodes_.size());
    nodes_.push_back(std::move(out));
  }

  std::unordered_map<const Node*, std::size_t> index_;
  Json nodes_ = Json::array();
};

// ---- decoding -----------------------------------------------------------------------

// nlohmann's DOM parser, refusing nesting deeper than kMaxDepth (its CBOR reader
// recurses once per level, so deep nesting would exhaust the stack).
class DepthLimitedParser : public nlohmann::detail::json_sax_dom_parser<Json> {
 public:
  using Base = nlohmann::detail::json_sax_dom_parser<Json>;
  using Base::Base;

  bool start_object(std::size_t length) { return Enter() && Base::start_object(length); }
  bool end_object() { return Leave() && Base::end_object(); }
  bool start_array(std::size_t length) { return Enter() && Base::start_array(length); }
  bool end_array() { return Leave() && Base::end_array(); }

 private:
  bool Enter() {
    if (++depth_ > kMaxDepth) {
      Malformed("the bytes", "nested deeper than " + std::to_string(kMaxDepth) + " levels");
    }
    return true;
  }
  bool Leave() {
    --depth_;
    return true;
  }
  int depth_ = 0;
};

Json Parse(std::string_view bytes) {
  Json root;
  try {
    DepthLimitedParser parser(root);
    Json::sax_parse(bytes.begin(), bytes.end(), &parser, nlohmann::json::input_format_t::cbor);
  } catch (const Json::exception& error) {
    Malformed("the bytes", std::string("not CBOR: ") + error.what());
  }
  return root;
}

// What every decoded node has; `inputs` are earlier nodes.
struct NodeHeader {
  std::string where;
  NodeKind kind;
  std::string op;
  DType dtype = float64;
  Shape shape;
  Shape chunks;
  std::vector<NodePtr> inputs;
};

// Runs `make` (a kernel lookup or a Make* function, checking what the bytes say): its
// InvalidArgument is a FormatError of the node.
template <class Make>
auto Checked(const std::string& where, Make&& make) -> decltype(make()) {
  try {
    return make();
  } catch (const InvalidArgument& error) {
    Malformed(where, error.what());
  }
}

NodeHeader ReadHeader(const Json& value, std::size_t index, const std::vector<NodePtr>& nodes) {
  NodeHeader header;
  header.where = "node " + std::to_string(index);
  const std::string& where = header.where;
  const std::string& kind = graph_codec::ReadString(Field(value, "kind", where), where);
  const KindName* found = nullptr;
  for (const KindName& entry : kKindNames) found = entry.name == kind ? &entry : found;
  if (found == nullptr) Malformed(where, "unknown kind \"" + kind + "\"");
  header.kind = found->kind;
  header.op = graph_codec::ReadString(Field(value, "op", where), where);
  header.where += " (" + header.op + ")";
  header.dtype = graph_codec::ReadDType(Field(value, "dtype", where), where);
  header.shape = graph_codec::ReadIndices(Field(value, "shape", where), where, 0);
  header.chunks = graph_codec::ReadIndices(Field(value, "chunks", where), where, 1);
  if (header.chunks.size() != header.shape.size()) {
    Malformed(where, "chunks " + ShapeToString(header.chunks) + " for shape " +
                         ShapeToString(header.shape));
  }
  try {
    CheckedMul(ShapeSize(header.shape), header.dtype.itemsize());
  } catch (const InvalidArgument&) {
    Malformed(where, "shape " + ShapeToString(header.shape) + " overflows");
  }
  const Json& inputs = Field(value, "inputs", where);
  if (!inputs.is_array()) Malformed(where, "inputs must be a list");
  for (const Json& input : inputs) {
    const auto earlier = static_cast<std::int64_t>(index) - 1;
    header.inputs.push_back(
        nodes[static_cast<std::size_t>(graph_codec::ReadInt(input, where + " input", 0, earlier))]);
  }
  return header;
}

void ExpectInputs(const NodeHeader& node, std::size_t count) {
  if (node.inputs.size() != count) {
    Malformed(node.where, std::to_string(node.inputs.size()) + " inputs, " + std::to_string(count) +
                              " expected");
  }
}

// Each input has the node's shape (and dtype, when `same_dtype`).
void ExpectLikeInputs(const NodeHeader& node, bool same_dtype) {
  for (const NodePtr& input : node.inputs) {
    if (input->shape() != node.shape || (same_dtype && input->dtype() != node.dtype)) {
      Malformed(node.where, "an input " + std::string(input->dtype().name()) + " " +
                                ShapeToString(input->shape()) + " for a result " +
                                std::string(node.dtype.name()) + " " + ShapeToString(node.shape));
    }
  }
}

// `made` (by a Make* function from the decoded inputs, for its checks) is the node the
// bytes describe: nothing inserted before it, the same shape, chunks and dtype.
NodePtr ExpectMade(const NodeHeader& node, NodePtr made) {
  if (made->kind() != node.kind || made->inputs() != node.inputs || made->shape() != node.shape ||
      made->chunks() != node.chunks || made->dtype() != node.dtype || made->op() != node.op) {
    Malformed(node.where, "inconsistent with its inputs (rebuilt: " + made->op() + " " +
                              std::string(made->dtype().name()) + " " +
                              ShapeToString(made->shape()) + " in chunks " +
                              ShapeToString(made->chunks()) + ")");
  }
  return made;
}

// The elementwise kernels of `node` by its op name and its inputs' dtypes.
void ReadElementwise(NodeHeader& node, NodeDetail& detail) {
  namespace k = kernels;
  if (node.kind == NodeKind::kUnary) {
    ExpectInputs(node, 1);
    ExpectLikeInputs(node, false);
    const DType input = node.inputs[0]->dtype();
    const k::UnaryOp op = k::UnaryOpFromName(node.op);
    const k::Signature signature = k::ResolveUnary(op, input);
    if (signature.input != input || signature.output != node.dtype) {
      Malformed(node.where,
                "not the dtype " + node.op + " of " + std::string(input.name()) + " has");
    }
    detail.unary = k::GetUnaryKernel(op, input);
  } else if (node.kind == NodeKind::kBinary) {
    ExpectInputs(node, 2);
    ExpectLikeInputs(node, false);
    const DType input = node.inputs[0]->dtype();
    const k::BinaryOp op = k::BinaryOpFromName(node.op);
    const k::Signature signature = k::ResolveBinary(op, input, input);
    if (node.inputs[1]->dtype() != input || signature.input != input ||
        signature.output != node.dtype) {
      Malformed(node.where, "operands or result of other dtypes than " + node.op + " has");
    }
    detail.binary = k::GetBinaryKernel(op, input);
  } else if (node.kind == NodeKind::kWhere) {
    ExpectInputs(node, 3);
    ExpectLikeInputs(node, false);
    if (node.inputs[0]->dtype() != bool_ || node.inputs[1]->dtype() != node.dtype ||
        node.inputs[2]->dtype() != node.dtype) {
      Malformed(node.where, "a condition that is not bool or values not of the result's dtype");
    }
    detail.where = k::GetWhereKernel(node.dtype);
  } else {
    ExpectInputs(node, 1);
    ExpectLikeInputs(node, false);
    detail.cast = k::GetCastKernel(node.inputs[0]->dtype(), node.dtype);
  }
}

std::optional<ReductionOp> ReductionFromName(std::string_view name) {
  for (int op = 0; op <= static_cast<int>(ReductionOp::kCountNonzero); ++op) {
    if (ReductionName(static_cast<ReductionOp>(op)) == name) return static_cast<ReductionOp>(op);
  }
  return std::nullopt;
}

NodePtr ReadReduce(const NodeHeader& node, const Json& value) {
  const std::string& where = node.where;
  ExpectInputs(node, 1);
  const std::string& name = graph_codec::ReadString(Field(value, "reduction", where), where);
  const std::optional<ReductionOp> op = ReductionFromName(name);
  if (!op) Malformed(where, "unknown reduction \"" + name + "\"");
  const int ndim = node.inputs[0]->ndim();
  std::vector<int> axes =
      graph_codec::ReadInts(Field(value, "axes", where), where, 0, std::max(ndim - 1, 0));
  const bool keepdims = graph_codec::ReadBool(Field(value, "keepdims", where), where);
  const double correction = graph_codec::ReadDouble(Field(value, "correction", where), where);
  // The dtype was requested unless it is the reduction's own (only sum, prod, mean, var
  // and std take one; a requested sum or prod casts before, which the graph holds).
  const DType input = node.inputs[0]->dtype();
  return ExpectMade(node, Checked(where, [&] {
                      std::optional<DType> requested = node.dtype;
                      if (ReductionResultType(*op, input, std::nullopt) == node.dtype) {
                        requested.reset();
                      }
                      return MakeReduce(*op, node.inputs[0], std::move(axes), keepdims, requested,
                                        correction);
                    }));
}

void ReadMapBlocks(const NodeHeader& node, const Json& value, NodeDetail& detail) {
  const std::string& where = node.where;
  for (const NodePtr& input : node.inputs) {
    if (input->shape() != node.shape || input->chunks() != node.chunks) {
      Malformed(where, "an input of other shape or chunks than the result's");
    }
  }
  detail.identity = graph_codec::ReadString(Field(value, "identity", where), where);
  detail.extra_projected_mem =
      graph_codec::ReadInt(Field(value, "extra_projected_mem", where), where, 0,
                           std::numeric_limits<std::int64_t>::max());
  const Json& recipe_bytes = Field(value, "recipe", where);
  if (!recipe_bytes.is_binary()) Malformed(where, "the recipe must be bytes");
  const Json::binary_t& held = recipe_bytes.get_binary();
  std::string recipe(held.begin(), held.end());
  FunctionLoader loader;
  {
    std::lock_guard lock(Loader().mutex);
    loader = recipe.starts_with(kBuiltinPrefix) ? BuiltinLoader : Loader().loader;
  }
  if (!loader) {
    throw InvalidArgument(
        "map_blocks \"" + detail.identity +
        "\": this process has no FunctionLoader to rebuild its function from "
        "its recipe (tessera::SetFunctionLoader; the Python module installs one)");
  }
  detail.function = loader(recipe, node.dtype);
  if (!detail.function) {
    throw InvalidArgument("map_blocks \"" + detail.identity +
                          "\": the FunctionLoader returned no function for its recipe");
  }
  detail.recipe = [recipe = std::move(recipe)] { return recipe; };
}

// The node the bytes describe; Malformed when they are not one.
NodePtr ReadNode(const Json& value, std::size_t index, const std::vector<NodePtr>& nodes) {
  NodeHeader node = ReadHeader(value, index, nodes);
  const std::string& where = node.where;
  NodeDetail detail;
  switch (node.kind) {
    case NodeKind::kZarr: {
      ExpectInputs(node, 0);
      const std::string& location = graph_codec::ReadString(Field(value, "location", where), where);
      if (!IsObjectStoreLocation(location) && !std::filesystem::path(location).is_absolute()) {
        Malformed(where, "the location \"" + location + "\" is not an absolute path or s3:// URL");
      }
      const std::string& path = graph_codec::ReadString(Field(value, "path", where), where);
      const NodePtr made = Checked(
          where, [&] { return MakeZarrSource(OpenStore(location, {.create = false}), path); });
      if (made->shape() != node.shape || made->chunks() != node.chunks ||
          made->dtype() != node.dtype) {
        Malformed(where, "the array \"" + path + "\" of " + location + " is now " +
                             std::string(made->dtype().name()) + " " +
                             ShapeToString(made->shape()) + " in chunks " +
                             ShapeToString(made->chunks()) + ", the plan read " +
                             std::string(node.dtype.name()) + " " + ShapeToString(node.shape) +
                             " in chunks " + ShapeToString(node.chunks));
      }
      return made;
    }
    case NodeKind::kInMemory: {
      ExpectInputs(node, 0);
      const Json& data = Field(value, "data", where);
      if (!data.is_binary()) Malformed(where, "the data must be bytes");
      const Json::binary_t& bytes = data.get_binary();
      // Checked before allocating: the shape alone may claim any size.
      const Index nbytes = ShapeSize(node.shape) * node.dtype.itemsize();  // checked in ReadHeader
      if (static_cast<Index>(bytes.size()) != nbytes) {
        Malformed(where,
                  std::to_string(bytes.size()) + " bytes of data for " + std::to_string(nbytes));
      }
      NDArray array(node.shape, node.dtype);
      if (!bytes.empty()) std::memcpy(array.mutable_bytes().data(), bytes.data(), bytes.size());
      detail.data = std::make_shared<const NDArray>(std::move(array));
      break;
    }
    case NodeKind::kConstant:
      ExpectInputs(node, 0);
      detail.constant = graph_codec::ReadScalar(Field(value, "value", where), where);
      break;
    case NodeKind::kArange:
      ExpectInputs(node, 0);
      if (node.shape.size() != 1) Malformed(where, "an arange that is not 1-d");
      detail.start = graph_codec::ReadDouble(Field(value, "start", where), where);
      detail.step = graph_codec::ReadDouble(Field(value, "step", where), where);
      if (detail.step == 0) Malformed(where, "an arange of step 0");
      break;
    case NodeKind::kRandom:
      ExpectInputs(node, 0);
      if (node.dtype != float64) Malformed(where, "random values that are not float64");
      detail.seed = graph_codec::ReadUInt(Field(value, "seed", where), where);
      break;
    case NodeKind::kUnary:
    case NodeKind::kBinary:
    case NodeKind::kWhere:
    case NodeKind::kAsType:
      Checked(where, [&] { ReadElementwise(node, detail); });
      break;
    case NodeKind::kBroadcast:
      ExpectInputs(node, 1);
      if (node.inputs[0]->dtype() != node.dtype ||
          Checked(where, [&] { return BroadcastShapes(node.inputs[0]->shape(), node.shape); }) !=
              node.shape) {
        Malformed(where, "an input that does not broadcast to it");
      }
      break;
    case NodeKind::kRechunk:
      ExpectInputs(node, 1);
      ExpectLikeInputs(node, true);
      break;
    case NodeKind::kMapBlocks:
      ReadMapBlocks(node, value, detail);
      break;
    case NodeKind::kReduce:
      return ReadReduce(node, value);
    case NodeKind::kContract: {
      ExpectInputs(node, 2);
      Contraction contraction =
          graph_codec::ReadContraction(Field(value, "contraction", where), where);
      return ExpectMade(node, Checked(where, [&] {
                          return MakeContract(node.op, node.inputs[0], node.inputs[1],
                                              std::move(contraction));
                        }));
    }
    case NodeKind::kGather: {
      if (node.inputs.empty()) Malformed(where, "a gather of no input");
      std::vector<Shape> input_shapes;
      for (const NodePtr& input : node.inputs) {
        if (input->dtype() != node.dtype) Malformed(where, "an input of another dtype");
        input_shapes.push_back(input->shape());
      }
      detail.index_map = std::make_shared<const IndexMap>(graph_codec::ReadIndexMap(
          Field(value, "index_map", where), where, node.shape, input_shapes));
      break;
    }
    case NodeKind::kReshape:
      ExpectInputs(node, 1);
      return ExpectMade(node,
                        Checked(where, [&] { return MakeReshape(node.inputs[0], node.shape); }));
  }
  return std::make_shared<const Node>(node.kind, std::move(node.op), std::move(node.shape),
                                      std::move(node.chunks), node.dtype, std::move(node.inputs),
                                      std::make_shared<const NodeDetail>(std::move(detail)));
}

}  // namespace

std::string EncodeGraph(const std::vector<PlanOutput>& outputs) {
  Encoder encoder;
  Json encoded_outputs = Json::array();
  for (const PlanOutput& output : outputs) {
    if (output.node == nullptr) throw InvalidArgument("EncodeGraph: an output has no node");
    const std::size_t index = encoder.Add(output.node);
    encoded_outputs.push_back(
        Json{{"node", index},
             {"target", output.target ? graph_codec::WriteTarget(*output.target) : Json(nullptr)}});
  }
  const Json root{{"format", std::string(kFormat)},
                  {"version", kVersion},
                  {"nodes", encoder.TakeNodes()},
                  {"outputs", std::move(encoded_outputs)}};
  const std::vector<std::uint8_t> bytes = Json::to_cbor(root);
  return std::string(bytes.begin(), bytes.end());
}

std::vector<PlanOutput> DecodeGraph(std::string_view bytes) {
  const Json root = Parse(bytes);
  const std::string where = "the graph";
  const Json& format = Field(root, "format", where);
  if (!format.is_string() || format.get_ref<const std::string&>() != kFormat) {
    Malformed(where, "not a Tessera graph (no format \"" + std::string(kFormat) + "\")");
  }
  const std::int64_t version = graph_codec::ReadInt(Field(root, "version", where), where, 0,
                                                    std::numeric_limits<std::int64_t>::max());
  if (version != kVersion) {
    Malformed(where, "version " + std::to_string(version) + ", but this build reads version " +
                         std::to_string(kVersion));
  }
  const Json& encoded_nodes = Field(root, "nodes", where);
  if (!encoded_nodes.is_array()) Malformed(where, "nodes must be a list");
  std::vector<NodePtr> nodes;
  for (const Json& node : encoded_nodes) {
    nodes.push_back(ReadNode(node, nodes.size(), nodes));
  }
  const Json& encoded_outputs = Field(root, "outputs", where);
  if (!encoded_outputs.is_array()) Malformed(where, "outputs must be a list");
  std::vector<PlanOutput> outputs;
  for (const Json& output : encoded_outputs) {
    const std::string output_where = "output " + std::to_string(outputs.size());
    const auto last = static_cast<std::int64_t>(nodes.size()) - 1;
    const std::int64_t index =
        graph_codec::ReadInt(Field(output, "node", output_where), output_where, 0, last);
    const Json& target = Field(output, "target", output_where);
    outputs.push_back(
        PlanOutput{nodes[static_cast<std::size_t>(index)],
                   target.is_null()
                       ? std::nullopt
                       : std::optional<ZarrTarget>(graph_codec::ReadTarget(target, output_where))});
  }
  return outputs;
}

void RegisterBuiltinKernel(std::string name, BuiltinKernelFactory factory) {
  BuiltinKernels& kernels = Builtins();
  const std::lock_guard lock(kernels.mutex);
  kernels.factories[std::move(name)] = std::move(factory);
}

FunctionRecipe BuiltinRecipe(std::string_view name, std::string_view params) {
  return [text = std::string(kBuiltinPrefix) + std::string(name) + ":" + std::string(params)] {
    return text;
  };
}

}  // namespace tessera::planner

namespace tessera {

void SetFunctionLoader(FunctionLoader loader) {
  std::lock_guard lock(planner::Loader().mutex);
  planner::Loader().loader = std::move(loader);
}

}  // namespace tessera
