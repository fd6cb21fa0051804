#include "float16.hpp"

#include <bit>
#include <cstring>

namespace tessera::zarr_detail {

float HalfBitsToFloat(std::uint16_t bits) {
  const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000u) << 16;
  const std::uint32_t exponent = (bits >> 10) & 0x1Fu;
  std::uint32_t mantissa = bits & 0x3FFu;
  if (exponent == 0x1F) {  // infinity or NaN: the payload moves up with the mantissa
    return std::bit_cast<float>(sign | 0x7F800000u | (mantissa << 13));
  }
  if (exponent == 0) {
    if (mantissa == 0) return std::bit_cast<float>(sign);
    // A subnormal half: mantissa * 2^-24, a normal float.
    const float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
    return sign != 0 ? -magnitude : magnitude;
  }
  return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

std::uint16_t FloatToHalfBits(float value) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
  const auto sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000u);
  const std::uint32_t exponent = (bits >> 23) & 0xFFu;
  const std::uint32_t mantissa = bits & 0x7FFFFFu;
  if (exponent == 0xFF) {
    if (mantissa == 0) return static_cast<std::uint16_t>(sign | 0x7C00u);
    // NaN: keep the payload's top bits, and keep it a NaN (quiet bit set).
    return static_cast<std::uint16_t>(sign | 0x7E00u | (mantissa >> 13));
  }
  // The value's magnitude in units of 2^-24 (the smallest half subnormal), rounded to
  // nearest even at the precision the half can hold.
  const int unbiased = static_cast<int>(exponent) - 127;
  if (unbiased > 15) return static_cast<std::uint16_t>(sign | 0x7C00u);  // overflow
  if (unbiased >= -14) {
    // Normal half: 10 mantissa bits; round the 13 dropped bits.
    std::uint32_t half = (static_cast<std::uint32_t>(unbiased + 15) << 10) | (mantissa >> 13);
    const std::uint32_t dropped = mantissa & 0x1FFFu;
    if (dropped > 0x1000u || (dropped == 0x1000u && (half & 1u) != 0)) ++half;  // may carry
    return static_cast<std::uint16_t>(sign | half);  // a carry into 0x7C00 is infinity
  }
  if (unbiased < -25) return sign;  // below half the smallest subnormal: zero
  // Subnormal half: the significand (with its implicit bit) shifted right.
  const std::uint32_t significand = mantissa | 0x800000u;
  const int shift = -unbiased - 1;  // 14..24: 2^unbiased / 2^-24 = significand >> (shift)
  std::uint32_t half = significand >> shift;
  const std::uint32_t dropped = significand & ((1u << shift) - 1u);
  const std::uint32_t halfway = 1u << (shift - 1);
  if (dropped > halfway || (dropped == halfway && (half & 1u) != 0)) ++half;
  return static_cast<std::uint16_t>(sign | half);
}

void HalfToFloat(std::span<const std::byte> half, bool byteswap, std::span<std::byte> out) {
  const std::size_t count = half.size() / 2;
  for (std::size_t element = 0; element < count; ++element) {
    std::uint16_t bits = 0;
    std::memcpy(&bits, half.data() + 2 * element, 2);
    if (byteswap) bits = __builtin_bswap16(bits);
    const float value = HalfBitsToFloat(bits);
    std::memcpy(out.data() + 4 * element, &value, 4);
  }
}

void FloatToHalf(std::span<const std::byte> floats, bool byteswap, std::span<std::byte> out) {
  const std::size_t count = out.size() / 2;
  for (std::size_t element = 0; element < count; ++element) {
    float value = 0;
    std::memcpy(&value, floats.data() + 4 * element, 4);
    std::uint16_t bits = FloatToHalfBits(value);
    if (byteswap) bits = __builtin_bswap16(bits);
    std::memcpy(out.data() + 2 * element, &bits, 2);
  }
}

}  // namespace tessera::zarr_detail
