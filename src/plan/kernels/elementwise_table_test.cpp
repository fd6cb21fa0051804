// The table of elementwise ops against the kernels: every row names a kernel that exists
// under its name, takes exactly the dtypes its type rule says and gives what it says.
// (Values against numpy: elementwise_numpy_test.cpp; the API and the calculator made
// from the same rows: src/api/expression_test.cpp.)
#include "tessera/plan/internal/elementwise_table.hpp"

#include <gtest/gtest.h>

#include <array>
#include <set>
#include <string>
#include <string_view>

#include "elementwise_kernels.hpp"
#include "op_lookup.hpp"
#include "tessera/core/errors.hpp"

namespace tessera::kernels {
namespace {

constexpr std::array<DType, 11> kAllDTypes = {bool_,  int8,   int16,  int32,   int64,  uint8,
                                              uint16, uint32, uint64, float32, float64};

bool IsFloat(DType dtype) { return dtype == float32 || dtype == float64; }

TEST(ElementwiseTable, EveryRowHasAKernelFollowingItsTypeRule) {
  for (const ElementwiseOp& op : ElementwiseOps()) {
    for (const DType dtype : kAllDTypes) {
      SCOPED_TRACE(std::string(op.name) + " of " + std::string(dtype.name()));
      const bool takes =
          (dtype != bool_ || TakesBool(op.rule)) && (!IsFloat(dtype) || TakesFloats(op.rule));
      if (!takes) {
        EXPECT_THROW(op.arity == 1 ? ResolveUnary(UnaryOpFromName(op.name), dtype)
                                   : ResolveBinary(BinaryOpFromName(op.name), dtype, dtype),
                     InvalidArgument);
        continue;
      }
      const Signature signature = [&] {
        if (op.arity == 1) {
          const UnaryOp unary = UnaryOpFromName(op.name);
          EXPECT_EQ(Name(unary), op.name);
          const Signature found = ResolveUnary(unary, dtype);
          EXPECT_NE(GetUnaryKernel(unary, found.input), nullptr);
          return found;
        }
        const BinaryOp binary = BinaryOpFromName(op.name);
        EXPECT_EQ(Name(binary), op.name);
        const Signature found = ResolveBinary(binary, dtype, dtype);
        EXPECT_NE(GetBinaryKernel(binary, found.input), nullptr);
        return found;
      }();
      if (GivesBool(op.rule)) {
        EXPECT_EQ(signature.output, bool_);
      }
      if (GivesFloat(op.rule)) {
        EXPECT_TRUE(IsFloat(signature.output));
      }
      if (!GivesBool(op.rule) && !GivesFloat(op.rule) && dtype != bool_) {
        EXPECT_EQ(signature.output, dtype);  // integers and floats keep their dtype
      }
    }
  }
}

TEST(ElementwiseTable, NamesAndAliasesAreUniqueAndFoundByFind) {
  std::set<std::string_view> seen;
  for (const ElementwiseOp& op : ElementwiseOps()) {
    EXPECT_TRUE(op.arity == 1 || op.arity == 2) << op.name;
    EXPECT_TRUE(seen.insert(op.name).second) << op.name;
    EXPECT_EQ(FindElementwiseOp(op.name), &op);
    ForEachAlias(op, [&](std::string_view alias) {
      EXPECT_TRUE(seen.insert(alias).second) << alias;
      EXPECT_EQ(FindElementwiseOp(alias), &op) << alias;
    });
  }
  EXPECT_EQ(FindElementwiseOp("arctan2")->name, "atan2");
  EXPECT_EQ(FindElementwiseOp("sum"), nullptr);  // a reduction, not elementwise
  EXPECT_EQ(FindElementwiseOp(""), nullptr);
}

TEST(ElementwiseTable, UnknownNamesListTheKnownOnes) {
  try {
    UnaryOpFromName("arcsin");  // aliases are the calculator's; plans use array API names
    ADD_FAILURE() << "arcsin was found";
  } catch (const InvalidArgument& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("unknown unary function \"arcsin\"; known: negative, positive, abs"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("bitwise_invert"), std::string::npos) << message;
  }
  EXPECT_THROW(BinaryOpFromName("sqrt"), InvalidArgument);
}

}  // namespace
}  // namespace tessera::kernels
