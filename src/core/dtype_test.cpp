#include "tessera/core/dtype.hpp"

#include <gtest/gtest.h>

#include <cstdint>

#include "tessera/core/errors.hpp"

namespace tessera {
namespace {

TEST(DType, ItemsizeKindAndName) {
  struct Expected {
    DType dtype;
    std::int64_t itemsize;
    DTypeKind kind;
    const char* name;
  };
  for (const Expected& e : {
           Expected{bool_, 1, DTypeKind::kBool, "bool"},
           Expected{int8, 1, DTypeKind::kSignedInt, "int8"},
           Expected{int16, 2, DTypeKind::kSignedInt, "int16"},
           Expected{int32, 4, DTypeKind::kSignedInt, "int32"},
           Expected{int64, 8, DTypeKind::kSignedInt, "int64"},
           Expected{uint8, 1, DTypeKind::kUnsignedInt, "uint8"},
           Expected{uint16, 2, DTypeKind::kUnsignedInt, "uint16"},
           Expected{uint32, 4, DTypeKind::kUnsignedInt, "uint32"},
           Expected{uint64, 8, DTypeKind::kUnsignedInt, "uint64"},
           Expected{float32, 4, DTypeKind::kFloat, "float32"},
           Expected{float64, 8, DTypeKind::kFloat, "float64"},
       }) {
    SCOPED_TRACE(e.name);
    EXPECT_EQ(e.dtype.itemsize(), e.itemsize);
    EXPECT_EQ(e.dtype.kind(), e.kind);
    EXPECT_EQ(e.dtype.name(), e.name);
    EXPECT_EQ(DType::FromName(e.name), e.dtype);
    // The visitor's C++ type agrees with the constant.
    VisitDType(e.dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      EXPECT_EQ(DTypeOf<T>(), e.dtype);
      EXPECT_EQ(static_cast<std::int64_t>(sizeof(T)), e.itemsize);
    });
  }
}

TEST(DType, ShortNamesAndErrors) {
  EXPECT_EQ(DType::FromName("f8"), float64);
  EXPECT_EQ(DType::FromName("u2"), uint16);
  EXPECT_EQ(DType::FromName("complex128"), complex128);
  EXPECT_EQ(DType::FromName("c8"), complex64);
  EXPECT_THROW(DType::FromName("float16"), InvalidArgument);
  EXPECT_THROW(DType::FromName("complex256"), InvalidArgument);
  EXPECT_THROW(DType::FromName(""), InvalidArgument);
}

}  // namespace
}  // namespace tessera
