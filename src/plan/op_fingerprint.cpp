#include "op_fingerprint.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <sstream>

#include "node_detail.hpp"

namespace tessera::planner {
namespace {

// FNV-1a, 64 bits: stable across processes and builds (std::hash is not).
std::uint64_t Fnv1a(const std::string& text) {
  std::uint64_t hash = 14695981039346656037ULL;
  for (const char c : text) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 1099511628211ULL;
  }
  return hash;
}

void WriteShape(std::ostream& out, const Shape& shape) {
  out << '(';
  for (const Index extent : shape) out << extent << ',';
  out << ')';
}

void WriteCodec(std::ostream& out, const CodecConfig& codec) {
  out << codec.id << '/' << codec.cname << '/' << codec.level << '/' << codec.shuffle << '/'
      << codec.blocksize << '/' << codec.acceleration;
}

// An array read from outside the op: what decides its blocks' bytes.
void WriteSource(std::ostream& out, const Node& node) {
  out << "in:" << node.op() << ':' << node.dtype().name() << ':';
  WriteShape(out, node.chunks());
  if (node.kind() == NodeKind::kZarr && node.detail().zarr != nullptr) {
    const ZarrMetadata& metadata = node.detail().zarr->metadata();
    out << ":codec=";
    if (metadata.compressor) WriteCodec(out, *metadata.compressor);
    for (const CodecConfig& filter : metadata.filters) {
      out << '+';
      WriteCodec(out, filter);
    }
  }
  out << ';';
}

void WriteMember(std::ostream& out, const Node& node) {
  const NodeDetail& detail = node.detail();
  // Names, not enum values: a later version may number its kinds differently.
  out << "node:" << node.op() << ':' << node.dtype().name() << ':';
  WriteShape(out, node.chunks());
  switch (node.kind()) {
    case NodeKind::kMapBlocks:
      out << ":fn=" << detail.identity << ":extra=" << detail.extra_projected_mem;
      break;
    case NodeKind::kReduce:
      out << ":reduce=" << ReductionName(detail.reduction) << ":keepdims=" << detail.keepdims
          << ":axes=";
      for (const int axis : detail.axes) out << axis << ',';
      break;
    default:
      break;
  }
  out << ';';
}

}  // namespace

std::string OpFingerprint(const OpInfo& info, const std::vector<const Node*>& members) {
  std::ostringstream text;
  text << "op:" << info.kind << ':' << info.dtype.name() << ":chunks=";
  WriteShape(text, info.chunks);
  text << ":task=";
  WriteShape(text, info.task_shape);
  text << ":in=";
  WriteShape(text, info.input_chunks);
  text << ":disk=";
  WriteShape(text, info.disk_chunks);
  text << ":slab=";
  WriteShape(text, info.contraction_block);
  text << ":stage=" << info.stage << '/' << info.num_stages << ':' << TierName(info.tier) << ';';
  for (const Node* member : members) WriteMember(text, *member);
  for (const Node* member : members) {
    for (const NodePtr& input : member->inputs()) {
      if (std::find(members.begin(), members.end(), input.get()) == members.end()) {
        WriteSource(text, *input);
      }
    }
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(Fnv1a(text.str())));
  return hex;
}

}  // namespace tessera::planner
