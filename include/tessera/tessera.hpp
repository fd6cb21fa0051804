// Tessera: N-dimensional arrays larger than memory, computed chunk by chunk under a
// memory budget proven before anything runs. This umbrella header is the public
// surface (see API.md for the names that must exist): the array API, the value types,
// errors, Spec, FinalizedPlan and OpInfo, ExecutionReport, the storage API and history.
// What the engine builds them from (plan nodes, executable ops, executors) lives in
// namespaces tessera::planner and tessera::exec, in headers under .../internal/ that
// are not installed.
#pragma once

#include "tessera/api/array.hpp"
#include "tessera/api/creation.hpp"
#include "tessera/api/cumulative.hpp"
#include "tessera/api/elementwise.hpp"
#include "tessera/api/expression.hpp"
#include "tessera/api/expression_error.hpp"
#include "tessera/api/history.hpp"
#include "tessera/api/indexing.hpp"
#include "tessera/api/linalg.hpp"
#include "tessera/api/manipulation.hpp"
#include "tessera/api/map_blocks.hpp"
#include "tessera/api/reduction.hpp"
#include "tessera/api/reserved_mem.hpp"
#include "tessera/api/storage.hpp"
#include "tessera/core/buffer.hpp"
#include "tessera/core/byte_size.hpp"
#include "tessera/core/chunk_grid.hpp"
#include "tessera/core/dtype.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/core/ndarray.hpp"
#include "tessera/core/scalar.hpp"
#include "tessera/core/shape.hpp"
#include "tessera/core/spec.hpp"
#include "tessera/core/type_promotion.hpp"
#include "tessera/core/warning.hpp"
#include "tessera/exec/execution_report.hpp"
#include "tessera/memory/history.hpp"
#include "tessera/memory/process_memory.hpp"
#include "tessera/plan/block_function.hpp"
#include "tessera/plan/finalized_plan.hpp"
#include "tessera/plan/op_info.hpp"
#include "tessera/plan/plan_options.hpp"
#include "tessera/storage/codec.hpp"
#include "tessera/storage/directory_store.hpp"
#include "tessera/storage/memory_store.hpp"
#include "tessera/storage/store.hpp"
#include "tessera/storage/zarr_array.hpp"
#include "tessera/storage/zarr_group.hpp"
#include "tessera/storage/zarr_metadata.hpp"
#include "tessera/version.hpp"
