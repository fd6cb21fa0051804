// IEEE 754 binary16 ("float16", numpy's "<f2") as a storage type: Tessera holds such
// arrays as float32 in memory, and converts whole chunks on the way in and out.
//
//   HalfToFloat(stored, /*byteswap=*/false, decoded);   // 2 bytes in -> 4 bytes out each
//   FloatToHalf(decoded, /*byteswap=*/true, stored);    // round to nearest, ties to even
//
// Widening is exact. Narrowing rounds to nearest (ties to even), as numpy's astype does:
// values beyond float16's range become infinities, tiny ones subnormals or zeros, NaN
// stays NaN (its sign and the top 10 bits of its payload kept, quiet). `byteswap` says
// the stored halves are big-endian.
//
// Internal to src/storage/zarr. Pure functions on caller memory: thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace tessera::zarr_detail {

float HalfBitsToFloat(std::uint16_t bits);
std::uint16_t FloatToHalfBits(float value);

// REQUIRES: out.size() == 2 * half.size() (both whole elements).
void HalfToFloat(std::span<const std::byte> half, bool byteswap, std::span<std::byte> out);
// REQUIRES: out.size() * 2 == floats.size() (both whole elements).
void FloatToHalf(std::span<const std::byte> floats, bool byteswap, std::span<std::byte> out);

}  // namespace tessera::zarr_detail
