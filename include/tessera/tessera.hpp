// Tessera: N-dimensional arrays larger than memory, computed chunk by chunk under a
// memory budget proven before anything runs. This umbrella header is the public
// surface; see API.md for the names that must exist.
#pragma once

#include "tessera/core/buffer.hpp"
#include "tessera/core/byte_size.hpp"
#include "tessera/core/chunk_grid.hpp"
#include "tessera/core/dtype.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/core/ndarray.hpp"
#include "tessera/core/parallel.hpp"
#include "tessera/core/shape.hpp"
#include "tessera/core/spec.hpp"
#include "tessera/storage/codec.hpp"
#include "tessera/storage/directory_store.hpp"
#include "tessera/storage/memory_store.hpp"
#include "tessera/storage/store.hpp"
#include "tessera/storage/zarr_array.hpp"
#include "tessera/storage/zarr_metadata.hpp"
#include "tessera/version.hpp"
