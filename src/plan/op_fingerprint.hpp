// Op fingerprints: what identifies a step of a pipeline from one run to the next, so
// that history measured in one run serves the next (OpInfo::fingerprint).
//
// The fingerprint hashes the op's kind, task and chunk shapes, and for each fused
// member its function ("add", "exp", map_blocks' identity and declared extra memory, a
// reduction's axes), dtype and chunks, and the op, dtype, chunks and codec of every
// array it reads from outside the op, all by name (never enum values). Names of nodes
// ("add-7"), array shapes, paths and data are left out: the same pipeline on other
// arrays of the same chunking shares its fingerprints; another kernel, dtype or chunking
// does not. Where the task shape follows the array's extent (a reduction's round groups
// as many blocks as the reduced axis has), arrays of other lengths get other
// fingerprints, as their tasks differ. 16 hex digits.
#pragma once

#include <string>
#include <vector>

#include "tessera/plan/internal/executable_op.hpp"
#include "tessera/plan/internal/node.hpp"

namespace tessera::planner {

// `members` are the nodes the op computes (OpInfo::fused, in order); may be empty for
// an op no node stands for.
std::string OpFingerprint(const OpInfo& info, const std::vector<const Node*>& members);

}  // namespace tessera::planner
