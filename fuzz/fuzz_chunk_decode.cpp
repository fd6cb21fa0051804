// Fuzzes the chunk codecs: decoding arbitrary frames, and encode -> decode round trips.
//
// Input layout (all a fuzzer needs to reach every codec and parameter):
//   byte 0      codec: (byte % 5) = blosc, zstd, lz4, zlib, gzip; bit 0x80 selects
//               round-trip mode instead of decode mode
//   byte 1      blosc cname index / zstd, zlib, gzip level / lz4 acceleration
//   byte 2      blosc clevel
//   byte 3      blosc shuffle (low 2 bits, -1..2) and the itemsize 1, 2, 4 or 8 (bits 2-3)
//   bytes 4..6  decoded size, little-endian, capped at kMaxDecodedSize
//   bytes 7..   decode mode: the encoded frame; round-trip mode: the raw data
// Decode mode: Decode either fills exactly the declared size or throws tessera::Error.
// Round-trip mode: Decode(Encode(raw)) must give back raw.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>
#include <string>

#include "tessera/core/buffer.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/storage/codec.hpp"

namespace {

// Decoded chunks up to 1 MiB exercise every code path of the codecs (blosc splits into
// blocks well below that) while keeping each run fast and far from the RSS limit.
constexpr std::size_t kMaxDecodedSize = std::size_t{1} << 20;
constexpr std::size_t kHeaderSize = 7;

tessera::CodecConfig ConfigFrom(const std::uint8_t* header) {
  static const char* const kCnames[] = {"lz4", "lz4hc", "zstd", "blosclz", "zlib"};
  tessera::CodecConfig config;
  switch (header[0] % 5) {
    case 0:
      config.id = "blosc";
      config.cname = kCnames[header[1] % 5];
      config.level = header[2] % 10;
      config.shuffle = (header[3] & 3) - 1;
      break;
    case 1:
      config.id = "zstd";
      config.level = header[1] % 26 - 3;  // -3..22: negative "fast" levels included
      break;
    case 2:
      config.id = "lz4";
      config.acceleration = header[1] + 1;
      break;
    case 3:
      config.id = "zlib";
      config.level = header[1] % 11 - 1;  // -1 = zlib's default
      break;
    default:
      config.id = "gzip";
      config.level = header[1] % 11 - 1;
      break;
  }
  return config;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < kHeaderSize) return 0;
  const tessera::CodecConfig config = ConfigFrom(data);
  const bool round_trip = (data[0] & 0x80) != 0;
  const std::int64_t itemsize = std::int64_t{1} << ((data[3] >> 2) & 3);
  std::size_t decoded_size = data[4] | (std::size_t{data[5]} << 8) | (std::size_t{data[6]} << 16);
  if (decoded_size > kMaxDecodedSize) decoded_size = kMaxDecodedSize;
  const std::span<const std::byte> payload(reinterpret_cast<const std::byte*>(data + kHeaderSize),
                                           size - kHeaderSize);

  std::unique_ptr<tessera::Codec> codec;
  try {
    codec = tessera::MakeCodec(config);
  } catch (const tessera::Error&) {
    return 0;  // e.g. a blosc compressor this libblosc was built without
  }

  if (!round_trip) {
    tessera::Buffer out(static_cast<std::int64_t>(decoded_size));
    try {
      codec->Decode(payload, out.span());
    } catch (const tessera::Error&) {
    }
    return 0;
  }

  // Round trip: Encode must accept any raw bytes, and Decode must restore them.
  const tessera::Buffer encoded = codec->Encode(payload, itemsize);
  if (encoded.size() > codec->MaxEncodedSize(static_cast<std::int64_t>(payload.size()))) {
    std::fprintf(
        stderr, "%s: encoded %zu bytes into %lld, above MaxEncodedSize %lld\n", config.id.c_str(),
        payload.size(), static_cast<long long>(encoded.size()),
        static_cast<long long>(codec->MaxEncodedSize(static_cast<std::int64_t>(payload.size()))));
    std::abort();
  }
  tessera::Buffer decoded(static_cast<std::int64_t>(payload.size()));
  codec->Decode(encoded.span(), decoded.span());
  if (!payload.empty() && std::memcmp(decoded.data(), payload.data(), payload.size()) != 0) {
    std::fprintf(stderr, "%s: decode(encode(x)) != x for %zu bytes\n", config.id.c_str(),
                 payload.size());
    std::abort();
  }
  return 0;
}
