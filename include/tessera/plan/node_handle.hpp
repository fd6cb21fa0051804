// The handle a lazy Array holds on its node of the plan DAG. The node itself (what it
// is, which op makes it) is the engine's (tessera/plan/internal/node.hpp, not
// installed); users hold it only through tessera::Array.
#pragma once

#include <memory>

namespace tessera::planner {

class Node;
using NodePtr = std::shared_ptr<const Node>;

class ExecutableOp;  // tessera/plan/internal/executable_op.hpp

}  // namespace tessera::planner
