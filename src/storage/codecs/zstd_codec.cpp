#include "zstd_codec.hpp"

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

// One decompression context per thread: its size does not depend on the data (single-pass
// decoding into the caller's buffer needs no window buffer), so keeping it costs little and
// saves an allocation per chunk.
ZSTD_DCtx* ThreadDecompressionContext() {
  thread_local std::unique_ptr<ZSTD_DCtx, DCtxDeleter> context(ZSTD_createDCtx());
  if (context == nullptr) throw std::bad_alloc();
  return context.get();
}

struct CCtxDeleter {
  void operator()(ZSTD_CCtx* context) const { ZSTD_freeCCtx(context); }
};

// One compression context per thread, reused across chunks. Its workspace grows with the
// level used; zstd shrinks a workspace that stays oversized for a while, and
// ZSTD_compressCCtx resets the parameters on every call, so output does not depend on
// what the context compressed before.
ZSTD_CCtx* ThreadCompressionContext() {
  thread_local std::unique_ptr<ZSTD_CCtx, CCtxDeleter> context(ZSTD_createCCtx());
  if (context == nullptr) throw std::bad_alloc();
  return context.get();
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
  const std::size_t written = ZSTD_compressCCtx(ThreadCompressionContext(), encoded.data(),
                                                static_cast<std::size_t>(encoded.size()),
                                                raw.data(), raw.size(), config_.level);
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
  const std::size_t decoded = ZSTD_decompressDCtx(ThreadDecompressionContext(), out.data(),
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
