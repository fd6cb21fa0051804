// Fuzzes the graph codec's decoder (plan/internal/graph_codec.hpp) with arbitrary bytes:
// what a Dask or Ray worker would be handed. Stored sources and targets name
// directories that are opened read-only (create = false) and only when present.
//
// Contract checked: decoding either succeeds or throws a tessera::Error (FormatError for
// malformed bytes; anything else escaping is a crash, and so is a stack overflow, which
// the decoder's nesting limit prevents); a decoded graph encodes again (it holds only
// what the codec can write: no map_blocks, since no FunctionLoader is installed), and
// those bytes decode to a graph that encodes to the same bytes.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/core/errors.hpp"
#include "tessera/plan/internal/graph_codec.hpp"

namespace {

[[noreturn]] void Fail(const char* what, std::string_view detail) {
  std::fprintf(stderr, "fuzz_graph_codec: %s\n%.*s\n", what, static_cast<int>(detail.size()),
               detail.data());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  std::vector<tessera::PlanOutput> outputs;
  try {
    outputs = tessera::planner::DecodeGraph(bytes);
  } catch (const tessera::Error&) {
    return 0;
  }
  std::string encoded;
  try {
    encoded = tessera::planner::EncodeGraph(outputs);
  } catch (const tessera::Error& error) {
    Fail("a decoded graph does not encode", error.what());
  }
  try {
    if (tessera::planner::EncodeGraph(tessera::planner::DecodeGraph(encoded)) != encoded) {
      Fail("encoding a decoded graph is unstable", "");
    }
  } catch (const tessera::Error& error) {
    Fail("an encoded graph does not decode", error.what());
  }
  return 0;
}
