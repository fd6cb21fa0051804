// Fuzzes the Zarr metadata parsers with arbitrary bytes: every input is tried as a v2
// .zarray, as a v2 .zattrs and as a v3 zarr.json (an array's, then a group's), so seeds
// need no selector byte and any zarr-python document is a seed as it is.
//
// Contracts checked:
//   v2   parsing either succeeds or throws a tessera::Error (anything else escaping is a
//        crash); what parses is self-consistent (its chunk grid and sizes can be
//        computed, its fill value encoded) and survives serialize + re-parse unchanged.
//   v3   ParseZarrJson either succeeds or throws FormatError; what parses survives
//        ZarrJsonText + re-parse (equal metadata and attributes, and the text is then
//        stable), and ZarrArray::Open accepts it from a store holding it as "zarr.json"
//        (no further error, no absurd allocation: it builds the chunk codec, sharding
//        included) and reads one element of an array with no chunks as the fill value
//        (float16: as a chunk written full of the fill value reads); for chunks
//        (shards) up to 16 KiB, a block written reads back unchanged.
//   group ListZarrGroup, HasConsolidatedMetadata and IsZarrGroup over a store holding
//        the input as "zarr.json" and as "sub/zarr.json" either succeed or throw
//        FormatError, InvalidArgument or StorageError; listed members are valid keys.
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tessera/core/errors.hpp"
#include "tessera/core/ndarray.hpp"
#include "tessera/storage/memory_store.hpp"
#include "tessera/storage/zarr_array.hpp"
#include "tessera/storage/zarr_group.hpp"
#include "tessera/storage/zarr_metadata.hpp"

namespace {

// The largest item size of a Tessera dtype (complex128).
constexpr std::size_t kMaxItemSize = 16;

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
  std::array<std::byte, kMaxItemSize> element{};
  tessera::EncodeFillElement(
      metadata.fill_value, metadata.dtype,
      std::span(element).first(static_cast<std::size_t>(metadata.dtype.itemsize())));

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

// Chunks (shards) up to this size are written and read back: every codec configuration
// the parser accepts must round-trip, and small chunks keep each input fast.
constexpr tessera::Index kMaxWrittenChunkBytes = tessera::Index{16} << 10;

// Writes block 0 of `array` full of the fill value: its first element must read as
// `unwritten` (the first element read before any chunk was written). Then writes it with
// a byte pattern and reads it back, whole and (sharded, with two threads: by inner
// chunks) as a region; both must give the pattern back (float16 storage narrows it, so
// there only the reads are compared).
void CheckWriteRead(const tessera::ZarrArray& array, std::string_view text,
                    const tessera::NDArray& unwritten) {
  const tessera::ZarrMetadata& metadata = array.metadata();
  if (metadata.chunk_nbytes() > kMaxWrittenChunkBytes) return;
  const tessera::Shape block(metadata.shape.size(), 0);
  tessera::NDArray data(array.grid().BlockShape(block), metadata.dtype);
  const std::span<std::byte> bytes = data.mutable_bytes();
  const auto itemsize = static_cast<std::size_t>(metadata.dtype.itemsize());
  for (std::size_t element = 0; element < bytes.size(); element += itemsize) {
    tessera::EncodeFillElement(metadata.fill_value, metadata.dtype,
                               bytes.subspan(element, itemsize));
  }
  try {
    array.WriteBlock(block, data);
  } catch (const tessera::Error& error) {
    Fail("writing a block of accepted metadata fails",
         std::string(error.what()) + "\n" + std::string(text));
  }
  const tessera::NDArray fill_back =
      array.ReadRegion(tessera::Region{block, tessera::Shape(block.size(), 1)}, 1);
  if (!(fill_back == unwritten)) {
    Fail("a chunk written full of the fill value reads otherwise than one never written",
         std::string(text));
  }
  for (std::size_t byte = 0; byte < bytes.size(); ++byte) {
    bytes[byte] = metadata.dtype == tessera::bool_
                      ? static_cast<std::byte>(byte % 3 == 0)
                      : static_cast<std::byte>((byte * 131 + 7) & 0xff);
  }
  try {
    array.WriteBlock(block, data);
  } catch (const tessera::Error& error) {
    Fail("writing a block of accepted metadata fails",
         std::string(error.what()) + "\n" + std::string(text));
  }
  const tessera::NDArray back = array.ReadBlock(block);
  if (!metadata.float16_storage && !(back == data)) {
    Fail("a written block does not read back", std::string(text));
  }
  if (metadata.sharded()) {
    const tessera::NDArray region =
        array.ReadRegion(array.grid().BlockRegion(block), /*max_threads=*/2);
    if (!(region == back)) Fail("reading by inner chunks differs", std::string(text));
  }
}

// ZarrArray::Open of an accepted document, and a read of its first element from a store
// without chunks (the fill value).
void CheckOpen(const std::shared_ptr<tessera::MemoryStore>& store, std::string_view text,
               const tessera::ZarrMetadata& metadata) {
  std::optional<tessera::ZarrArray> array;
  try {
    array = tessera::ZarrArray::Open(store);
  } catch (const tessera::Error& error) {
    Fail("ZarrArray::Open refuses a document ParseZarrJson accepts",
         std::string(error.what()) + "\n" + std::string(text));
  }
  if (!(array->metadata() == metadata)) Fail("Open's metadata differs", std::string(text));
  for (const tessera::Index extent : metadata.shape) {
    if (extent == 0) return;  // no element to read
  }
  const std::size_t ndim = metadata.shape.size();
  const tessera::NDArray first = array->ReadRegion(
      tessera::Region{tessera::Shape(ndim, 0), tessera::Shape(ndim, 1)}, /*max_threads=*/1);
  std::array<std::byte, kMaxItemSize> fill{};
  const auto itemsize = static_cast<std::size_t>(metadata.dtype.itemsize());
  tessera::EncodeFillElement(metadata.fill_value, metadata.dtype, std::span(fill).first(itemsize));
  // float16 storage reads the fill value rounded to a half, as zarr-python holds it
  // (CheckWriteRead compares it with a written chunk of fill values instead).
  if (!metadata.float16_storage &&
      (first.bytes().size() != itemsize ||
       std::memcmp(first.bytes().data(), fill.data(), itemsize) != 0)) {
    Fail("an array without chunks does not read as its fill value", std::string(text));
  }
  CheckWriteRead(*array, text, first);
}

void CheckZarrJson(const std::shared_ptr<tessera::MemoryStore>& store, std::string_view text) {
  std::optional<std::pair<tessera::ZarrMetadata, tessera::ZarrAttributes>> parsed;
  try {
    parsed = tessera::ParseZarrJson(text, "fuzz/zarr.json");
  } catch (const tessera::FormatError&) {
    return;  // rejected as documented
  } catch (const tessera::Error& error) {
    Fail("ParseZarrJson threw an error other than FormatError",
         std::string(error.what()) + "\n" + std::string(text));
  }
  const auto& [metadata, attributes] = *parsed;
  if (metadata.zarr_format != 3) Fail("zarr_format is not 3", std::string(text));
  const tessera::ChunkGrid grid = metadata.grid();
  if (static_cast<std::size_t>(grid.ndim()) != metadata.shape.size())
    Fail("grid rank differs", std::string(text));
  if (metadata.chunk_nbytes() < 0) Fail("negative chunk size", std::string(text));
  if (metadata.read_chunks().size() != metadata.shape.size()) {
    Fail("read chunks of another rank", std::string(text));
  }
  (void)tessera::DescribeCodecs(metadata);

  std::string written;
  try {
    written = tessera::ZarrJsonText(metadata, attributes);
  } catch (const tessera::Error& error) {
    Fail("accepted metadata cannot be written",
         std::string(error.what()) + "\n" + std::string(text));
  }
  std::optional<std::pair<tessera::ZarrMetadata, tessera::ZarrAttributes>> reparsed;
  try {
    reparsed = tessera::ParseZarrJson(written, "fuzz/rewritten/zarr.json");
  } catch (const tessera::Error& error) {
    Fail("written metadata does not parse", std::string(error.what()) + "\n" + written);
  }
  if (!(reparsed->first == metadata)) Fail("re-parsed v3 metadata differs", written);
  if (!(reparsed->second == attributes)) Fail("re-parsed v3 attributes differ", written);
  if (tessera::ZarrJsonText(reparsed->first, reparsed->second) != written) {
    Fail("rewriting zarr.json is unstable", written);
  }
  CheckOpen(store, text, metadata);
}

void CheckMembers(const tessera::ZarrGroupMembers& members) {
  for (const auto* names : {&members.arrays, &members.groups}) {
    for (const std::string& name : *names) {
      try {
        tessera::ValidateKey(name);
      } catch (const tessera::InvalidArgument& error) {
        Fail("ListZarrGroup lists a member that is no valid key", error.what());
      }
    }
  }
}

void CheckGroup(const tessera::MemoryStore& store) {
  try {
    (void)tessera::IsZarrGroup(store, "");
    const bool consolidated = tessera::HasConsolidatedMetadata(store);
    const tessera::ZarrGroupMembers members = tessera::ListZarrGroup(store);
    CheckMembers(members);
    // Walked (not consolidated), the only member is "sub", which holds the input too.
    if (!consolidated && members.arrays.size() + members.groups.size() > 1) {
      Fail("a walked group lists more members than the store holds", "");
    }
  } catch (const tessera::FormatError&) {
  } catch (const tessera::InvalidArgument&) {
  } catch (const tessera::StorageError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  CheckMetadata(text);
  CheckAttributes(text);
  const std::shared_ptr<tessera::MemoryStore> store = tessera::MemoryStore::Create();
  store->Set("zarr.json", text);
  CheckZarrJson(store, text);
  store->Set("sub/zarr.json", text);
  CheckGroup(*store);
  return 0;
}
