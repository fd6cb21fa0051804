// The ERA5 case of rechunker's docs, planned only (no chunk is written): t2m,
// (350640, 721, 1440) float32 (1.456 TB) in chunks (31, 721, 1440), blosc-lz4, under
// allowed_mem 2.5 GB, total_mem 16 GB and 4 workers. The seed's rechunk takes it to
// chunks (350640, 10, 10). Header-only.
#pragma once

#include <memory>

#include "tessera/api/creation.hpp"
#include "tessera/storage/memory_store.hpp"
#include "tessera/storage/zarr_array.hpp"

namespace tessera::testing {

inline Spec Era5Spec() {
  return Spec::from({{"allowed_mem", "2.5GB"}, {"total_mem", "16GB"}, {"max_workers", "4"}});
}

// t2m as from_zarr reads it, planned under `spec`.
inline Array Era5Temperature(const Spec& spec = Era5Spec()) {
  auto store = std::make_shared<MemoryStore>();
  ZarrMetadata metadata;
  metadata.shape = {350640, 721, 1440};
  metadata.chunks = {31, 721, 1440};
  metadata.dtype = float32;
  metadata.compressor = ParseCodecSpec("blosc-lz4");
  ZarrArray::Create(store, "t2m", metadata);
  return from_zarr(store, "t2m", spec);
}

}  // namespace tessera::testing
