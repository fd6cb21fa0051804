// The plan passes the environment switches off, for the test suite's configuration
// reruns (docs/testing.md): TESSERA_DISABLE_PASSES=name,name. Today the one pass that can
// be off is "fusion" (PlanOptions::fuse = false).
#pragma once

#include "tessera/plan/plan_options.hpp"

namespace tessera {

// `options` with the passes TESSERA_DISABLE_PASSES names switched off; `options` itself
// when the variable is unset or empty. Throws InvalidArgument for a name it does not
// know, so that a misspelt rerun does not silently test the default configuration.
// Finalize calls it once, where a plan's options are resolved, and nothing else reads
// the variable.
PlanOptions WithDisabledPasses(PlanOptions options);

}  // namespace tessera
