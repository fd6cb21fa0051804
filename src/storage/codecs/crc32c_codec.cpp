#include "crc32c_codec.hpp"

#include <array>
#include <cstdio>
#include <cstring>
#include <string>

#include "little_endian.hpp"
#include "tessera/core/errors.hpp"

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace tessera::codecs {
namespace {

// The reflected Castagnoli polynomial.
constexpr std::uint32_t kPolynomial = 0x82F63B78u;

// Slicing-by-8 tables: kTables[k][b] is the CRC of byte b followed by k zero bytes.
constexpr std::array<std::array<std::uint32_t, 256>, 8> MakeTables() {
  std::array<std::array<std::uint32_t, 256>, 8> tables{};
  for (std::uint32_t byte = 0; byte < 256; ++byte) {
    std::uint32_t crc = byte;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ ((crc & 1u) != 0 ? kPolynomial : 0u);
    tables[0][byte] = crc;
  }
  for (std::size_t k = 1; k < 8; ++k) {
    for (std::size_t byte = 0; byte < 256; ++byte) {
      const std::uint32_t previous = tables[k - 1][byte];
      tables[k][byte] = (previous >> 8) ^ tables[0][previous & 0xFFu];
    }
  }
  return tables;
}

constexpr std::array<std::array<std::uint32_t, 256>, 8> kTables = MakeTables();

std::uint32_t Crc32cPortable(const unsigned char* data, std::size_t size, std::uint32_t crc) {
  while (size >= 8) {
    std::uint64_t word = 0;
    std::memcpy(&word, data, 8);  // Tessera's hosts are little-endian (chunk_layout.hpp)
    word ^= crc;
    crc = kTables[7][word & 0xFF] ^ kTables[6][(word >> 8) & 0xFF] ^
          kTables[5][(word >> 16) & 0xFF] ^ kTables[4][(word >> 24) & 0xFF] ^
          kTables[3][(word >> 32) & 0xFF] ^ kTables[2][(word >> 40) & 0xFF] ^
          kTables[1][(word >> 48) & 0xFF] ^ kTables[0][word >> 56];
    data += 8;
    size -= 8;
  }
  while (size-- > 0) crc = (crc >> 8) ^ kTables[0][(crc ^ *data++) & 0xFFu];
  return crc;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) std::uint32_t Crc32cSse42(const unsigned char* data,
                                                            std::size_t size, std::uint32_t crc) {
  std::uint64_t wide = crc;
  while (size >= 8) {
    std::uint64_t word = 0;
    std::memcpy(&word, data, 8);
    wide = _mm_crc32_u64(wide, word);
    data += 8;
    size -= 8;
  }
  auto narrow = static_cast<std::uint32_t>(wide);
  while (size-- > 0) narrow = _mm_crc32_u8(narrow, *data++);
  return narrow;
}

bool HasSse42() {
  static const bool has = __builtin_cpu_supports("sse4.2") != 0;
  return has;
}
#endif

}  // namespace

std::uint32_t Crc32c(std::span<const std::byte> bytes, std::uint32_t crc) {
  const auto* data = reinterpret_cast<const unsigned char*>(bytes.data());
  crc = ~crc;
#if defined(__x86_64__)
  if (HasSse42()) return ~Crc32cSse42(data, bytes.size(), crc);
#endif
  return ~Crc32cPortable(data, bytes.size(), crc);
}

void Crc32cCodec::EncodeInto(std::span<const std::byte> raw, std::int64_t /*itemsize*/,
                             Buffer& out) const {
  const auto size = static_cast<std::int64_t>(raw.size());
  out.ResizeUninitialized(size + kCrc32cBytes);
  if (!raw.empty()) std::memcpy(out.data(), raw.data(), raw.size());
  StoreLittleEndian32(Crc32c(raw), out.data() + raw.size());
}

std::optional<std::int64_t> Crc32cCodec::DecodedSize(std::span<const std::byte> encoded) const {
  if (static_cast<std::int64_t>(encoded.size()) < kCrc32cBytes) return std::nullopt;
  return static_cast<std::int64_t>(encoded.size()) - kCrc32cBytes;
}

std::optional<std::span<const std::byte>> Crc32cCodec::DecodedView(
    std::span<const std::byte> encoded) const {
  if (encoded.size() < static_cast<std::size_t>(kCrc32cBytes)) {
    throw FormatError("crc32c: " + std::to_string(encoded.size()) +
                      " bytes hold no 4-byte checksum (truncated)");
  }
  const std::span<const std::byte> data = encoded.first(encoded.size() - kCrc32cBytes);
  const std::uint32_t stored = LoadLittleEndian32(encoded.data() + data.size());
  const std::uint32_t computed = Crc32c(data);
  if (stored != computed) {
    char text[64];
    std::snprintf(text, sizeof text, "stored 0x%08x, computed 0x%08x", stored, computed);
    throw FormatError(std::string("crc32c checksum mismatch (") + text + " over " +
                      std::to_string(data.size()) + " bytes): the data is corrupt");
  }
  return data;
}

void Crc32cCodec::Decode(std::span<const std::byte> encoded, std::span<std::byte> out) const {
  if (encoded.size() != out.size() + kCrc32cBytes) {
    throw FormatError("crc32c: " + std::to_string(encoded.size()) + " bytes hold " +
                      (encoded.size() < kCrc32cBytes
                           ? std::string("no 4-byte checksum")
                           : std::to_string(encoded.size() - kCrc32cBytes) + " bytes of data") +
                      ", expected " + std::to_string(out.size()) +
                      " bytes of data and the checksum (truncated or padded)");
  }
  const std::span<const std::byte> data = *DecodedView(encoded);
  if (!out.empty()) std::memcpy(out.data(), data.data(), out.size());
}

}  // namespace tessera::codecs

namespace tessera {

std::uint32_t Crc32cOf(std::span<const std::byte> bytes) { return codecs::Crc32c(bytes); }

}  // namespace tessera
