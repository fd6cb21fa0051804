// float16 as a storage type: widening checked exhaustively against the IEEE 754 binary16
// formula, narrowing against a reference that rounds by searching the table of every half
// value (nearest, ties to the even bit pattern), and hand-picked values at every edge.
#include "float16.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "test_seed.hpp"

namespace tessera::zarr_detail {
namespace {

constexpr std::uint16_t kPositiveInfinity = 0x7C00;

bool IsHalfNan(std::uint16_t bits) { return (bits & 0x7C00u) == 0x7C00u && (bits & 0x3FFu) != 0; }

// The value of a half's bit pattern by the binary16 formula, in double.
double HalfValue(std::uint16_t bits) {
  const double sign = (bits & 0x8000u) != 0 ? -1.0 : 1.0;
  const int exponent = (bits >> 10) & 0x1F;
  const int mantissa = bits & 0x3FF;
  if (exponent == 0x1F) return sign * std::numeric_limits<double>::infinity();  // NaN aside
  if (exponent == 0) return sign * std::ldexp(mantissa, -24);
  return sign * std::ldexp(1024 + mantissa, exponent - 25);
}

// Every finite non-negative half value in increasing order (bit patterns 0..0x7BFF are
// increasing in value).
const std::vector<double>& PositiveHalves() {
  static const std::vector<double> values = [] {
    std::vector<double> out;
    for (std::uint32_t bits = 0; bits <= 0x7BFFu; ++bits) {
      out.push_back(HalfValue(static_cast<std::uint16_t>(bits)));
    }
    return out;
  }();
  return values;
}

// The reference narrowing of a non-NaN float: the nearest half, a tie going to the even
// bit pattern; beyond the largest half (65504) by half its spacing (65520) or more, an
// infinity.
std::uint16_t ReferenceNarrow(float value) {
  const auto sign = static_cast<std::uint16_t>(std::signbit(value) ? 0x8000u : 0u);
  const double magnitude = std::fabs(static_cast<double>(value));
  if (magnitude >= 65520.0) return static_cast<std::uint16_t>(sign | kPositiveInfinity);
  const std::vector<double>& halves = PositiveHalves();
  const auto upper = std::lower_bound(halves.begin(), halves.end(), magnitude);
  if (upper == halves.end()) return static_cast<std::uint16_t>(sign | 0x7BFFu);
  auto bits = static_cast<std::uint16_t>(upper - halves.begin());
  if (*upper != magnitude) {
    // Between halves bits - 1 and bits: the nearer, ties to the even pattern.
    const double below = halves[bits - 1u];
    const double above = *upper;
    const double to_below = magnitude - below;
    const double to_above = above - magnitude;
    if (to_below < to_above || (to_below == to_above && (bits & 1u) != 0)) --bits;
  }
  return static_cast<std::uint16_t>(sign | bits);
}

std::string Hex(std::uint32_t bits) {
  char text[16];
  std::snprintf(text, sizeof(text), "0x%X", bits);
  return text;
}

TEST(Float16, WideningIsExactForEveryBitPattern) {
  for (std::uint32_t pattern = 0; pattern <= 0xFFFFu; ++pattern) {
    const auto bits = static_cast<std::uint16_t>(pattern);
    const float widened = HalfBitsToFloat(bits);
    const std::uint32_t float_bits = std::bit_cast<std::uint32_t>(widened);
    ASSERT_EQ(std::signbit(widened), (bits & 0x8000u) != 0) << Hex(bits);
    if (IsHalfNan(bits)) {
      // numpy's widening: the sign, then the payload moved up by the 13 extra bits.
      ASSERT_TRUE(std::isnan(widened)) << Hex(bits);
      const std::uint32_t expected = ((bits & 0x8000u) << 16) | 0x7F800000u |
                                     (static_cast<std::uint32_t>(bits & 0x3FFu) << 13);
      ASSERT_EQ(float_bits, expected) << Hex(bits);
      continue;
    }
    ASSERT_EQ(static_cast<double>(widened), HalfValue(bits)) << Hex(bits);
  }
}

TEST(Float16, NarrowingTheWidenedValueGivesTheBitPatternBack) {
  for (std::uint32_t pattern = 0; pattern <= 0xFFFFu; ++pattern) {
    const auto bits = static_cast<std::uint16_t>(pattern);
    const std::uint16_t back = FloatToHalfBits(HalfBitsToFloat(bits));
    if (IsHalfNan(bits)) {
      // NaN stays NaN, sign and payload kept; a signalling NaN comes back quiet.
      ASSERT_TRUE(IsHalfNan(back)) << Hex(bits) << " -> " << Hex(back);
      ASSERT_EQ(back, bits | 0x0200u) << Hex(bits);
      continue;
    }
    ASSERT_EQ(back, bits) << Hex(bits);  // -0, subnormals and infinities included
  }
}

TEST(Float16, NarrowingRoundsToNearestEvenAtHandPickedValues) {
  struct Case {
    float value;
    std::uint16_t half;
  };
  const std::vector<Case> cases = {
      {1.0f, 0x3C00},
      {1.0f + 0x1p-11f, 0x3C00},             // halfway between 1 and 1 + 2^-10: to 1 (even)
      {1.0f + 3 * 0x1p-11f, 0x3C02},         // halfway between 1 + 2^-10 and 1 + 2^-9: up (even)
      {1.0f + 0x1p-11f + 0x1p-20f, 0x3C01},  // just above halfway: up
      {1.0f + 0x1p-11f - 0x1p-20f, 0x3C00},  // just below: down
      {-1.0f - 0x1p-11f, 0xBC00},
      {2048.0f + 1.0f, 0x6800},       // spacing 2 from 2048: a tie, to 2048 (even)
      {2048.0f + 3.0f, 0x6802},       // a tie between 2050 and 2052: to 2052 (even)
      {65504.0f, 0x7BFF},             // the largest half
      {65519.0f, 0x7BFF},             // below the overflow threshold
      {65520.0f, kPositiveInfinity},  // halfway to 65536: to infinity (even)
      {-65520.0f, 0xFC00},
      {1e10f, kPositiveInfinity},
      {std::numeric_limits<float>::max(), kPositiveInfinity},
      {std::numeric_limits<float>::infinity(), kPositiveInfinity},
      {-std::numeric_limits<float>::infinity(), 0xFC00},
      {0.0f, 0x0000},
      {-0.0f, 0x8000},
      {0x1p-14f, 0x0400},  // the smallest normal
      {0x1p-24f, 0x0001},  // the smallest subnormal
      {0x1p-25f, 0x0000},  // half of it: a tie, to 0 (even)
      {-0x1p-25f, 0x8000},
      {0x1p-25f + 0x1p-40f, 0x0001},  // just above half of it
      {3 * 0x1p-26f, 0x0001},         // 0.75 * 2^-24: up
      {3 * 0x1p-25f, 0x0002},         // 1.5 * 2^-24: a tie, to 2 (even)
      {5 * 0x1p-25f, 0x0002},         // 2.5 * 2^-24: a tie, to 2 (even)
      {0x1p-26f, 0x0000},             // a quarter of the smallest subnormal
      {std::numeric_limits<float>::denorm_min(), 0x0000},
      {1023 * 0x1p-24f, 0x03FF},      // the largest subnormal
      {1023.5f * 0x1p-24f, 0x0400},   // a tie between it and the smallest normal: up (even)
      {0x1p-14f - 0x1p-30f, 0x0400},  // rounds up into the normals
  };
  for (const Case& test : cases) {
    EXPECT_EQ(FloatToHalfBits(test.value), test.half)
        << test.value << " (" << Hex(std::bit_cast<std::uint32_t>(test.value)) << ")";
    EXPECT_EQ(ReferenceNarrow(test.value), test.half) << "the reference itself, " << test.value;
  }
}

TEST(Float16, NarrowingNanKeepsSignPayloadAndStaysNan) {
  const float quiet = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(FloatToHalfBits(quiet), 0x7E00);
  EXPECT_EQ(FloatToHalfBits(-quiet), 0xFE00);
  // A signalling float NaN whose payload lies below the bits a half keeps: still a NaN.
  EXPECT_TRUE(IsHalfNan(FloatToHalfBits(std::bit_cast<float>(0x7F800001u))));
  // The top 10 payload bits are kept.
  EXPECT_EQ(FloatToHalfBits(std::bit_cast<float>(0x7FC00000u | (0x155u << 13))), 0x7E00 | 0x155);
  EXPECT_EQ(FloatToHalfBits(std::bit_cast<float>(0xFF800000u | (0x001u << 13))), 0xFE01);
}

TEST(Float16, NarrowingAgreesWithTheReferenceAtEveryMidpointAndAtRandom) {
  // Around every midpoint between neighbouring halves (the ties, and one float either
  // side), where rounding decides.
  const std::vector<double>& halves = PositiveHalves();
  for (std::size_t index = 0; index + 1 < halves.size(); ++index) {
    const auto midpoint = static_cast<float>((halves[index] + halves[index + 1]) / 2);
    ASSERT_EQ(static_cast<double>(midpoint), (halves[index] + halves[index + 1]) / 2);
    for (const float value :
         {midpoint, std::nextafter(midpoint, 0.0f), std::nextafter(midpoint, 1e30f), -midpoint}) {
      ASSERT_EQ(FloatToHalfBits(value), ReferenceNarrow(value))
          << value << " (" << Hex(std::bit_cast<std::uint32_t>(value)) << ")";
    }
  }
  std::mt19937_64 rng(testing::TestSeed());
  for (int trial = 0; trial < 2'000'000; ++trial) {
    // Random bit patterns, exponents weighted towards the halves' range.
    std::uint32_t bits = static_cast<std::uint32_t>(rng());
    if (trial % 2 == 0) {
      const auto exponent = static_cast<std::uint32_t>(127 - 30 + static_cast<int>(rng() % 48));
      bits = (bits & 0x807FFFFFu) | (exponent << 23);
    }
    const float value = std::bit_cast<float>(bits);
    if (std::isnan(value)) continue;
    ASSERT_EQ(FloatToHalfBits(value), ReferenceNarrow(value)) << value << " (" << Hex(bits) << ")";
  }
}

TEST(Float16, ArraysConvertInBothByteOrders) {
  const std::vector<std::uint16_t> halves = {0x0000, 0x3C00, 0xC000, 0x7BFF,
                                             0x0001, 0xFC00, 0x7E00};
  for (const bool byteswap : {false, true}) {
    std::vector<std::byte> stored(2 * halves.size());
    for (std::size_t index = 0; index < halves.size(); ++index) {
      const std::uint16_t value = halves[index];
      const int high = byteswap ? 0 : 1;  // the byte holding the high bits
      stored[2 * index + static_cast<std::size_t>(high)] = static_cast<std::byte>(value >> 8);
      stored[2 * index + static_cast<std::size_t>(1 - high)] = static_cast<std::byte>(value & 0xFF);
    }
    std::vector<std::byte> floats(4 * halves.size());
    HalfToFloat(stored, byteswap, floats);
    for (std::size_t index = 0; index < halves.size(); ++index) {
      float value = 0;
      std::memcpy(&value, floats.data() + 4 * index, 4);
      EXPECT_EQ(std::bit_cast<std::uint32_t>(value),
                std::bit_cast<std::uint32_t>(HalfBitsToFloat(halves[index])))
          << "element " << index << " byteswap " << byteswap;
    }
    std::vector<std::byte> narrowed(stored.size(), std::byte{0x55});
    FloatToHalf(floats, byteswap, narrowed);
    EXPECT_EQ(narrowed, stored) << "byteswap " << byteswap;
  }
}

}  // namespace
}  // namespace tessera::zarr_detail
