// Fuzzes the Zarr v2 metadata parser with arbitrary bytes, as .zarray and as .zattrs.
//
// Contract checked: parsing either succeeds or throws a tessera::Error (anything else
// escaping is a crash); what parses is self-consistent (its chunk grid and sizes can be
// computed, its fill value encoded) and survives serialize + re-parse unchanged.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "tessera/core/errors.hpp"
#include "tessera/storage/zarr_metadata.hpp"

namespace {

[[noreturn]] void Fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz_zarr_metadata: %s\n%s\n", what, detail.c_str());
  std::abort();
}

bool IsNan(const tessera::FillValue& fill) {
  const double* number = std::get_if<double>(&fill);
  return number != nullptr && std::isnan(*number);
}

// Equality that counts a NaN fill value as equal to itself.
bool SameMetadata(tessera::ZarrMetadata a, tessera::ZarrMetadata b) {
  if (IsNan(a.fill_value) && IsNan(b.fill_value)) a.fill_value = b.fill_value = 0.0;
  return a == b;
}

void CheckMetadata(std::string_view text) {
  std::optional<tessera::ZarrMetadata> parsed;
  try {
    parsed = tessera::ParseZarrMetadata(text, "fuzz/.zarray");
  } catch (const tessera::Error&) {
    return;  // rejected with a typed error: fine
  }
  // Accepted metadata must be usable without any further error.
  const tessera::ZarrMetadata& metadata = *parsed;
  const tessera::ChunkGrid grid = metadata.grid();
  if (grid.num_blocks() > 0) {
    tessera::Shape last = grid.grid_shape();
    for (tessera::Index& block : last) --block;
    const tessera::Region region = grid.BlockRegion(last);
    for (std::size_t dim = 0; dim < last.size(); ++dim) {
      if (region.shape[dim] < 1 || region.start[dim] + region.shape[dim] != metadata.shape[dim]) {
        Fail("last block does not end at the array's edge", std::string(text));
      }
    }
  }
  if (metadata.chunk_nbytes() < 0) Fail("negative chunk size", std::string(text));
  std::byte element[8];
  tessera::EncodeFillElement(
      metadata.fill_value, metadata.dtype,
      std::span(element, static_cast<std::size_t>(metadata.dtype.itemsize())));

  const std::string written = tessera::ZarrMetadataToJson(metadata);
  const tessera::ZarrMetadata reparsed = tessera::ParseZarrMetadata(written, "fuzz/rewritten");
  if (!SameMetadata(metadata, reparsed)) Fail("re-parsed metadata differs", written);
  if (tessera::ZarrMetadataToJson(reparsed) != written) Fail("rewriting is unstable", written);
}

void CheckAttributes(std::string_view text) {
  std::optional<tessera::ZarrAttributes> parsed;
  try {
    parsed = tessera::ParseZarrAttributes(text, "fuzz/.zattrs");
  } catch (const tessera::Error&) {
    return;
  }
  const std::string written = tessera::ZarrAttributesToJson(*parsed);
  const tessera::ZarrAttributes reparsed = tessera::ParseZarrAttributes(written, "fuzz/rewritten");
  if (!(reparsed == *parsed)) Fail("re-parsed attributes differ", written);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  CheckMetadata(text);
  CheckAttributes(text);
  return 0;
}
