// include/tessera/api/elementwise.hpp declares one function for each row of the table
// of elementwise ops (tessera/plan/internal/elementwise_ops.def) and no other: elementwise.cpp
// defines them from the rows and fails to compile where a row has no declaration; this
// test reads the header for the other way round, a declaration without its row (which
// would be a function nobody defines).
#include "tessera/plan/internal/elementwise_table.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

namespace tessera {
namespace {

TEST(ElementwiseHeader, DeclaresAFunctionForEveryRowOfTheTableAndNoOther) {
  const std::string path = std::string(TESSERA_SOURCE_DIR) + "/include/tessera/api/elementwise.hpp";
  std::ifstream file(path);
  ASSERT_TRUE(file) << "cannot read " << path;
  std::stringstream text;
  text << file.rdbuf();
  const std::string header = text.str();

  // "Array sqrt(const Array& x);" and "TESSERA_DECLARE_BINARY(add)".
  std::set<std::string> declared[3];
  const std::regex unary(R"(\nArray (\w+)\(const Array& x\);)");
  const std::regex binary(R"(\nTESSERA_DECLARE_BINARY\((\w+)\))");
  for (auto it = std::sregex_iterator(header.begin(), header.end(), unary);
       it != std::sregex_iterator(); ++it) {
    declared[1].insert((*it)[1]);
  }
  for (auto it = std::sregex_iterator(header.begin(), header.end(), binary);
       it != std::sregex_iterator(); ++it) {
    declared[2].insert((*it)[1]);
  }
  std::set<std::string> rows[3];
  for (const kernels::ElementwiseOp& op : kernels::ElementwiseOps()) {
    rows[op.arity].insert(std::string(op.name));
  }
  EXPECT_EQ(declared[1], rows[1]) << "unary functions of elementwise.hpp and the table differ";
  EXPECT_EQ(declared[2], rows[2]) << "binary functions of elementwise.hpp and the table differ";
}

}  // namespace
}  // namespace tessera
