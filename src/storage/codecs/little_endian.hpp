// Little-endian 32-bit integers inside codec frames (blosc's header and block offsets,
// numcodecs LZ4's size header), read and written byte by byte so that neither the
// host's byte order nor the alignment of the frame matters.
//
//   StoreLittleEndian32(size, frame.data());          // 4 bytes at frame.data()
//   std::uint32_t size = LoadLittleEndian32(frame.data());
//
// REQUIRES: 4 readable (Load) or writable (Store) bytes at the pointer.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tessera::codecs {

// Bytes in one encoded value.
inline constexpr std::size_t kLittleEndian32Bytes = 4;

inline std::uint32_t LoadLittleEndian32(const std::byte* in) {
  std::uint32_t value = 0;
  for (std::size_t index = 0; index < kLittleEndian32Bytes; ++index) {
    value |= std::to_integer<std::uint32_t>(in[index]) << (8 * index);
  }
  return value;
}

inline void StoreLittleEndian32(std::uint32_t value, std::byte* out) {
  for (std::size_t index = 0; index < kLittleEndian32Bytes; ++index) {
    out[index] = static_cast<std::byte>((value >> (8 * index)) & 0xFFu);
  }
}

}  // namespace tessera::codecs
