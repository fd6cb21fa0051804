#include "tessera/core/byte_size.hpp"

#include <gtest/gtest.h>

#include <limits>

#include "tessera/core/errors.hpp"

namespace tessera {
namespace {

TEST(ParseBytes, PlainIntegersAreBytes) {
  EXPECT_EQ(parse_bytes("0"), 0);
  EXPECT_EQ(parse_bytes("100"), 100);
  EXPECT_EQ(parse_bytes("  100  "), 100);
  EXPECT_EQ(parse_bytes("100B"), 100);
  EXPECT_EQ(parse_bytes("100 b"), 100);
}

TEST(ParseBytes, SiUnitsArePowersOf1000) {
  EXPECT_EQ(parse_bytes("1kB"), 1000);
  EXPECT_EQ(parse_bytes("1KB"), 1000);
  EXPECT_EQ(parse_bytes("400MB"), 400'000'000);
  EXPECT_EQ(parse_bytes("400 mb"), 400'000'000);
  EXPECT_EQ(parse_bytes("2GB"), 2'000'000'000);
  EXPECT_EQ(parse_bytes("3TB"), 3'000'000'000'000);
  EXPECT_EQ(parse_bytes("1PB"), 1'000'000'000'000'000);
}

TEST(ParseBytes, IecUnitsArePowersOf1024) {
  EXPECT_EQ(parse_bytes("1KiB"), 1024);
  EXPECT_EQ(parse_bytes("2GiB"), 2LL * 1024 * 1024 * 1024);
  EXPECT_EQ(parse_bytes("1.5 MiB"), 1024 * 1024 * 3 / 2);
  EXPECT_EQ(parse_bytes("1TiB"), 1LL << 40);
}

TEST(ParseBytes, DecimalsAreExact) {
  EXPECT_EQ(parse_bytes("1.5 GB"), 1'500'000'000);
  EXPECT_EQ(parse_bytes("2.5GB"), 2'500'000'000);
  EXPECT_EQ(parse_bytes("0.001MB"), 1000);
  EXPECT_EQ(parse_bytes("1."), 1);
  EXPECT_EQ(parse_bytes(".5kB"), 500);
}

TEST(ParseBytes, RejectsBadInputWithClearMessage) {
  for (const char* text : {"", "   ", "-1MB", "-5", "10XB", "MB", "abc", "1.2.3MB", "1,5GB", "1e3",
                           "1.5B", "0.0001kB", "1 M B"}) {
    SCOPED_TRACE(text);
    EXPECT_THROW(parse_bytes(text), InvalidArgument);
  }
  try {
    parse_bytes("10XB");
    FAIL();
  } catch (const InvalidArgument& error) {
    EXPECT_NE(std::string(error.what()).find("unknown unit \"xb\""), std::string::npos)
        << error.what();
    EXPECT_NE(std::string(error.what()).find("10XB"), std::string::npos);
  }
  try {
    parse_bytes("-1MB");
    FAIL();
  } catch (const InvalidArgument& error) {
    EXPECT_NE(std::string(error.what()).find("negative"), std::string::npos) << error.what();
  }
}

TEST(ParseBytes, RejectsOverflow) {
  EXPECT_EQ(parse_bytes("9223372036854775807"), std::numeric_limits<std::int64_t>::max());
  EXPECT_THROW(parse_bytes("9223372036854775808"), InvalidArgument);
  EXPECT_THROW(parse_bytes("10000PB"), InvalidArgument);
  EXPECT_THROW(parse_bytes("99999999999999999999999999999999"), InvalidArgument);
  // Mantissa times unit overflows even 128 bits: must be an error, never a wrapped value.
  EXPECT_THROW(parse_bytes("302231454903657293676544PiB"), InvalidArgument);
  EXPECT_THROW(parse_bytes("302231454903657293676549PiB"), InvalidArgument);
  EXPECT_THROW(parse_bytes("9223372036854775807.9KiB"), InvalidArgument);
  EXPECT_THROW(parse_bytes("8EB"), InvalidArgument);  // EB is not a unit
}

TEST(FormatBytes, UsesSiUnitsWithOneDecimal) {
  EXPECT_EQ(format_bytes(0), "0 B");
  EXPECT_EQ(format_bytes(100), "100 B");
  EXPECT_EQ(format_bytes(999), "999 B");
  EXPECT_EQ(format_bytes(1000), "1.0 kB");
  EXPECT_EQ(format_bytes(400'000'000), "400.0 MB");
  EXPECT_EQ(format_bytes(1'500'000'000), "1.5 GB");
  EXPECT_EQ(format_bytes(-2'000'000), "-2.0 MB");
  EXPECT_EQ(format_bytes(999'949), "999.9 kB");
  EXPECT_EQ(format_bytes(999'950), "1.0 MB");  // not "1000.0 kB"
  EXPECT_EQ(format_bytes(999'999'999), "1.0 GB");
  EXPECT_EQ(format_bytes(std::numeric_limits<std::int64_t>::min()), "-9223.4 PB");
}

TEST(FormatBytes, IecVariant) {
  EXPECT_EQ(format_bytes_iec(2LL * 1024 * 1024 * 1024), "2.0 GiB");
  EXPECT_EQ(format_bytes_iec(1536), "1.5 KiB");
}

TEST(FormatBytes, RoundTripsThroughParse) {
  for (std::int64_t value : {1000LL, 400'000'000LL, 1'500'000'000LL, 7'000'000'000'000LL}) {
    EXPECT_EQ(parse_bytes(format_bytes(value)), value);
  }
}

}  // namespace
}  // namespace tessera
