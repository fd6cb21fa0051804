#include "zstd_codec.hpp"

#define ZSTD_STATIC_LINKING_ONLY  // ZSTD_estimate*: the exact size of a context
#include <zstd.h>
#include <zstd_errors.h>

#include <limits>
#include <memory>
#include <new>
#include <string>

#include "tessera/core/errors.hpp"

namespace tessera::codecs {
namespace {

struct DCtxDeleter {
  void operator()(ZSTD_DCtx* context) const { ZSTD_freeDCtx(context); }
};

struct CCtxDeleter {
  void operator()(ZSTD_CCtx* context) const { ZSTD_freeCCtx(context); }
};

// Contexts live for one call. A context kept per thread would hold the workspace of the
// highest level it ever ran (zstd shrinks an oversized one only after many calls) while
// its thread runs tasks that never counted it; creating one costs far less than
// compressing a chunk.
std::unique_ptr<ZSTD_CCtx, CCtxDeleter> NewCompressionContext() {
  std::unique_ptr<ZSTD_CCtx, CCtxDeleter> context(ZSTD_createCCtx());
  if (context == nullptr) throw std::bad_alloc();
  return context;
}

std::unique_ptr<ZSTD_DCtx, DCtxDeleter> NewDecompressionContext() {
  std::unique_ptr<ZSTD_DCtx, DCtxDeleter> context(ZSTD_createDCtx());
  if (context == nullptr) throw std::bad_alloc();
  return context;
}

}  // namespace

ZstdCodec::ZstdCodec(const CodecConfig& config) : config_(config) {
  if (config.level < ZSTD_minCLevel() || config.level > ZSTD_maxCLevel()) {
    throw InvalidArgument("zstd level must be " + std::to_string(ZSTD_minCLevel()) + ".." +
                          std::to_string(ZSTD_maxCLevel()) + ", got " +
                          std::to_string(config.level));
  }
}

void ZstdCodec::EncodeInto(std::span<const std::byte> raw, std::int64_t /*itemsize*/,
                           Buffer& encoded) const {
  encoded.ResizeUninitialized(MaxEncodedSize(static_cast<std::int64_t>(raw.size())));
  const std::unique_ptr<ZSTD_CCtx, CCtxDeleter> context = NewCompressionContext();
  std::size_t written = 0;
  if (config_.checksum) {
    // ZSTD_compress2 with the same level (and the content size it records by default)
    // writes the frame ZSTD_compressCCtx would, plus the 4-byte XXH64 checksum.
    ZSTD_CCtx_setParameter(context.get(), ZSTD_c_compressionLevel, config_.level);
    ZSTD_CCtx_setParameter(context.get(), ZSTD_c_checksumFlag, 1);
    written = ZSTD_compress2(context.get(), encoded.data(), static_cast<std::size_t>(encoded.size()),
                             raw.data(), raw.size());
  } else {
    written = ZSTD_compressCCtx(context.get(), encoded.data(),
                                static_cast<std::size_t>(encoded.size()), raw.data(), raw.size(),
                                config_.level);
  }
  if (ZSTD_isError(written) != 0) {
    throw Error("zstd compression of " + std::to_string(raw.size()) +
                " bytes failed: " + ZSTD_getErrorName(written));
  }
  encoded.Truncate(static_cast<std::int64_t>(written));
}

void ZstdCodec::Decode(std::span<const std::byte> encoded, std::span<std::byte> out) const {
  if (encoded.empty()) throw FormatError("zstd chunk is empty; expected a zstd frame");
  const unsigned long long content_size = ZSTD_getFrameContentSize(encoded.data(), encoded.size());
  if (content_size == ZSTD_CONTENTSIZE_ERROR) {
    throw FormatError("zstd chunk of " + std::to_string(encoded.size()) +
                      " bytes does not start with a valid zstd frame header");
  }
  if (content_size != ZSTD_CONTENTSIZE_UNKNOWN && content_size != out.size()) {
    throw FormatError("zstd frame header claims " + std::to_string(content_size) +
                      " decoded bytes, expected " + std::to_string(out.size()) +
                      " (the chunk's size)");
  }
  // Single pass into `out`: zstd stops with dstSize_tooSmall rather than write past it,
  // which also covers frames that carry no content size.
  const std::size_t decoded = ZSTD_decompressDCtx(NewDecompressionContext().get(), out.data(),
                                                  out.size(), encoded.data(), encoded.size());
  if (ZSTD_isError(decoded) != 0) {
    const std::string reason = ZSTD_getErrorName(decoded);
    if (ZSTD_getErrorCode(decoded) == ZSTD_error_dstSize_tooSmall) {
      throw FormatError("zstd frame decodes to more than the expected " +
                        std::to_string(out.size()) + " bytes");
    }
    throw FormatError("zstd chunk of " + std::to_string(encoded.size()) +
                      " bytes is truncated or corrupt: " + reason);
  }
  if (decoded != out.size()) {
    throw FormatError("zstd frame decodes to " + std::to_string(decoded) + " bytes, expected " +
                      std::to_string(out.size()) + " (the chunk's size)");
  }
}

std::optional<std::int64_t> ZstdCodec::DecodedSize(std::span<const std::byte> encoded) const {
  if (encoded.empty()) return std::nullopt;
  const unsigned long long content_size = ZSTD_getFrameContentSize(encoded.data(), encoded.size());
  if (content_size == ZSTD_CONTENTSIZE_ERROR || content_size == ZSTD_CONTENTSIZE_UNKNOWN ||
      content_size > static_cast<unsigned long long>(std::numeric_limits<std::int64_t>::max())) {
    return std::nullopt;
  }
  return static_cast<std::int64_t>(content_size);
}

std::int64_t ZstdCodec::MaxEncodedSizeOf(std::int64_t raw_size) const {
  return static_cast<std::int64_t>(ZSTD_compressBound(static_cast<std::size_t>(raw_size)));
}

}  // namespace tessera::codecs

namespace tessera::codecs {

// The estimates count what zstd asks for; malloc rounds each block up a little (1,146
// bytes more measured for a level 19 context of a 4 MiB chunk).
constexpr std::int64_t kAllocatorSlackBytes = 16 << 10;

std::int64_t ZstdWorkingBytes(int level, std::int64_t raw_size) {
  // ZSTD_compressCCtx picks its parameters with ZSTD_getParams(level, srcSize, 0) (the
  // window shrinks to the chunk), and the estimate of those parameters is the exact
  // workspace ZSTD_compressCCtx allocates; ZSTD_getCParams gives the same parameters.
  const ZSTD_compressionParameters params =
      ZSTD_getCParams(level, static_cast<unsigned long long>(raw_size), 0);
  return static_cast<std::int64_t>(ZSTD_estimateCCtxSize_usingCParams(params)) +
         kAllocatorSlackBytes;
}

std::int64_t ZstdDecodeWorkingBytes() {
  // Single-pass decoding into the caller's buffer needs no window of its own.
  return static_cast<std::int64_t>(ZSTD_estimateDCtxSize()) + kAllocatorSlackBytes;
}

std::int64_t ZstdCodec::EncodeWorkingBytesOf(std::int64_t raw_size,
                                             std::int64_t /*itemsize*/) const {
  return ZstdWorkingBytes(config_.level, raw_size);
}

std::int64_t ZstdCodec::DecodeWorkingBytesOf(std::int64_t /*raw_size*/,
                                             std::int64_t /*itemsize*/) const {
  return ZstdDecodeWorkingBytes();
}

}  // namespace tessera::codecs
