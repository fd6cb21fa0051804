// Zarr type strings <-> dtypes and byte orders (zarr_dtype.cpp).
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "tessera/core/errors.hpp"
#include "tessera/storage/zarr_metadata.hpp"

namespace tessera {
namespace {

TEST(ZarrTypestrTest, RoundTripsEverySupportedType) {
  const std::vector<std::pair<std::string, DType>> expected = {
      {"|b1", bool_},   {"|i1", int8},      {"<i2", int16},      {"<i4", int32},  {"<i8", int64},
      {"|u1", uint8},   {"<u2", uint16},    {"<u4", uint32},     {"<u8", uint64}, {"<f4", float32},
      {"<f8", float64}, {"<c8", complex64}, {"<c16", complex128}};
  for (const auto& [typestr, dtype] : expected) {
    EXPECT_EQ(ZarrTypestr(dtype, ByteOrder::kLittle), typestr);
    EXPECT_EQ(ParseZarrTypestr(typestr), std::make_pair(dtype, ByteOrder::kLittle));
    std::string big = typestr;
    if (dtype.itemsize() > 1) {
      big[0] = '>';
      EXPECT_EQ(ZarrTypestr(dtype, ByteOrder::kBig), big);
      EXPECT_EQ(ParseZarrTypestr(big), std::make_pair(dtype, ByteOrder::kBig));
    } else {
      EXPECT_EQ(ZarrTypestr(dtype, ByteOrder::kBig), typestr);
    }
  }
}

TEST(ZarrTypestrTest, UnsupportedTypesNameThemselvesAndTheSupportedOnes) {
  for (const char* typestr : {"<c32", "<c4", "|c8", "<M8[ns]", "<m8[s]", "|S10", "<U4", "|O", "<f2",
                              "|i2", "|f8", "f8", "<f16", "", "<", "<i3", "=f8"}) {
    try {
      ParseZarrTypestr(typestr);
      ADD_FAILURE() << "accepted " << typestr;
    } catch (const InvalidArgument& error) {
      const std::string message = error.what();
      EXPECT_NE(message.find("\"" + std::string(typestr) + "\""), std::string::npos) << message;
      EXPECT_NE(message.find("|b1"), std::string::npos) << message;
      EXPECT_NE(message.find(">f8"), std::string::npos) << message;
    }
  }
}

}  // namespace
}  // namespace tessera
