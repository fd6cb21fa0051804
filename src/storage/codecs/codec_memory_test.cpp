// Codec working memory: what each codec states (EncodeWorkingBytes, DecodeWorkingBytes)
// against what one call really allocates: the peak of the bytes live in allocations the
// calling thread made during the call (malloc, calloc, realloc, posix_memalign and
// operator new, counted by malloc_usable_size), with the input and output buffers made
// beforehand. The counting wraps glibc's allocator in this test binary; under
// AddressSanitizer, whose allocator replaces glibc's, the sanitizer's malloc and free hooks
// count instead.
#include <blosc.h>
#include <gtest/gtest.h>
#include <malloc.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "blosc_shuffled_lz4.hpp"
#include "tessera/core/buffer.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/core/memory_account.hpp"
#include "tessera/storage/codec.hpp"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TESSERA_TEST_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define TESSERA_TEST_ASAN 1
#endif

namespace {

// Counting state of the calling thread; only a thread inside CountAllocations counts.
thread_local bool counting = false;
thread_local std::int64_t live_bytes = 0;
thread_local std::int64_t peak_bytes = 0;

void NoteAllocated(std::int64_t bytes) {
  if (!counting) return;
  live_bytes += bytes;
  peak_bytes = std::max(peak_bytes, live_bytes);
}

void NoteFreed(std::int64_t bytes) {
  if (counting) live_bytes -= bytes;
}

}  // namespace

#if defined(TESSERA_TEST_ASAN)
// The sanitizer runtime's allocator hooks (GCC ships no allocator_interface.h; the
// runtime of both compilers has them).
extern "C" {
int __sanitizer_install_malloc_and_free_hooks(void (*malloc_hook)(const volatile void*,
                                                                  std::size_t),
                                              void (*free_hook)(const volatile void*));
std::size_t __sanitizer_get_allocated_size(const volatile void* pointer);
}

namespace {

void OnMalloc(const volatile void* /*pointer*/, std::size_t size) {
  NoteAllocated(static_cast<std::int64_t>(size));
}
void OnFree(const volatile void* pointer) {
  if (pointer == nullptr) return;
  NoteFreed(static_cast<std::int64_t>(__sanitizer_get_allocated_size(pointer)));
}

void InstallCounter() {
  static const int installed = __sanitizer_install_malloc_and_free_hooks(OnMalloc, OnFree);
  (void)installed;
}

}  // namespace
#else
// glibc's own entry points, which the wrappers below forward to.
extern "C" {
void* __libc_malloc(std::size_t size);
void* __libc_calloc(std::size_t count, std::size_t size);
void* __libc_realloc(void* pointer, std::size_t size);
void* __libc_memalign(std::size_t alignment, std::size_t size);
void __libc_free(void* pointer);
}

namespace {

void* Counted(void* pointer) {
  if (pointer != nullptr) NoteAllocated(static_cast<std::int64_t>(malloc_usable_size(pointer)));
  return pointer;
}

void Uncount(void* pointer) {
  if (pointer != nullptr) NoteFreed(static_cast<std::int64_t>(malloc_usable_size(pointer)));
}

void InstallCounter() {}

}  // namespace

extern "C" {
void* malloc(std::size_t size) { return Counted(__libc_malloc(size)); }
void* calloc(std::size_t count, std::size_t size) { return Counted(__libc_calloc(count, size)); }
void* realloc(void* pointer, std::size_t size) {
  Uncount(pointer);
  void* moved = __libc_realloc(pointer, size);
  if (moved == nullptr && size != 0) {
    Counted(pointer);  // the old block stays
    return nullptr;
  }
  return Counted(moved);
}
void free(void* pointer) {
  Uncount(pointer);
  __libc_free(pointer);
}
void* memalign(std::size_t alignment, std::size_t size) {
  return Counted(__libc_memalign(alignment, size));
}
void* aligned_alloc(std::size_t alignment, std::size_t size) {
  return Counted(__libc_memalign(alignment, size));
}
int posix_memalign(void** out, std::size_t alignment, std::size_t size) {
  void* pointer = __libc_memalign(alignment, size);
  if (pointer == nullptr) return ENOMEM;
  *out = Counted(pointer);
  return 0;
}
}
#endif

namespace tessera {
namespace {

// The peak bytes `work` held in allocations of its own thread.
template <typename Work>
std::int64_t PeakAllocatedDuring(Work&& work) {
  InstallCounter();
  live_bytes = 0;
  peak_bytes = 0;
  // Buffers (charged to an account) may come from the buffer pool, which mallocs nothing.
  auto account = std::make_shared<MemoryAccount>();
  {
    ScopedMemoryAccount scope(account);
    counting = true;
    work();
    counting = false;
  }
  return std::max(peak_bytes, account->peak_bytes());
}

// Float32 values that compress somewhat, as climate fields do: a smooth signal plus noise.
std::vector<std::byte> SampleChunk(std::int64_t bytes) {
  std::vector<float> values(static_cast<std::size_t>(bytes) / sizeof(float));
  std::mt19937 random(7);
  std::normal_distribution<float> noise(0.0F, 0.5F);
  for (std::size_t index = 0; index < values.size(); ++index) {
    values[index] = 280.0F + static_cast<float>(index % 1000) * 0.01F + noise(random);
  }
  std::vector<std::byte> raw(static_cast<std::size_t>(bytes));
  std::memcpy(raw.data(), values.data(), raw.size());
  return raw;
}

struct Measured {
  std::int64_t encode = 0;
  std::int64_t decode = 0;
};

Measured MeasureCodec(const Codec& codec, std::span<const std::byte> raw, std::int64_t itemsize) {
  // The output buffers are allocated and touched here, so the measured threads touch only
  // what the codec allocates (and the stack it uses).
  Buffer encoded;
  codec.EncodeInto(raw, itemsize, encoded);
  std::vector<std::byte> decoded(raw.size(), std::byte{1});
  Measured measured;
  measured.encode = PeakAllocatedDuring([&] { codec.EncodeInto(raw, itemsize, encoded); });
  measured.decode = PeakAllocatedDuring([&] { codec.Decode(encoded.span(), decoded); });
  EXPECT_EQ(std::memcmp(decoded.data(), raw.data(), raw.size()), 0)
      << DescribeCodec(codec.config()) << " did not round-trip";
  return measured;
}

// stated >= measured, and no more than twice it plus 1 MiB.
void ExpectStatedBounds(const std::string& what, std::int64_t stated, std::int64_t measured) {
  EXPECT_GE(stated, measured) << what << ": stated " << stated << ", measured " << measured;
  EXPECT_LE(stated, 2 * measured + (std::int64_t{1} << 20))
      << what << ": stated " << stated << " is far above the measured " << measured;
}

class CodecWorkingMemory : public ::testing::TestWithParam<std::string> {};

TEST_P(CodecWorkingMemory, StatedFiguresBoundTheMeasuredAllocation) {
  const CodecConfig config = ParseCodecSpec(GetParam());
  const std::unique_ptr<Codec> codec = MakeCodec(config);
  for (const std::int64_t chunk_bytes : {std::int64_t{1} << 20, std::int64_t{4} << 20}) {
    const std::vector<std::byte> raw = SampleChunk(chunk_bytes);
    const Measured measured = MeasureCodec(*codec, raw, /*itemsize=*/4);
    const std::string what = GetParam() + " on " + std::to_string(chunk_bytes) + " bytes";
    ExpectStatedBounds(what + " (encode)", codec->EncodeWorkingBytes(chunk_bytes, 4),
                       measured.encode);
    ExpectStatedBounds(what + " (decode)", codec->DecodeWorkingBytes(chunk_bytes, 4),
                       measured.decode);
  }
}

INSTANTIATE_TEST_SUITE_P(EveryCodecAndLevel, CodecWorkingMemory,
                         ::testing::Values("blosc:zstd:1", "blosc:zstd:5", "blosc:zstd:9",
                                           "blosc:lz4:1", "blosc:lz4:5", "blosc:lz4:9",
                                           "blosc:lz4hc:5", "blosc:zlib:5", "blosc:blosclz:5",
                                           "blosc:zstd:0", "zstd:1", "zstd:3", "zstd:9", "zstd:19",
                                           "lz4", "zlib:1", "zlib:9", "gzip:5"),
                         [](const ::testing::TestParamInfo<std::string>& param) {
                           std::string name;
                           for (const char c : param.param) name += (c == ':' ? '_' : c);
                           return name;
                         });

// The block sizes libblosc chose for real frames are the ones the stated figures assume:
// 2 blocks plus small buffers plus the inner state, for every cname, level and typesize.
TEST(CodecWorkingMemory, BloscBlockSizesMatchTheFramesHeaders) {
  const std::vector<std::byte> raw = SampleChunk(std::int64_t{2} << 20);
  for (const char* cname : {"lz4", "lz4hc", "zstd", "blosclz", "zlib"}) {
    for (int level = 0; level <= 9; ++level) {
      for (const std::int64_t typesize : {1, 2, 4, 8}) {
        // zstd's block size does not depend on the typesize (and its level 22 is slow).
        if (std::string_view(cname) == "zstd" && typesize != 4) continue;
        CodecConfig config;
        config.id = "blosc";
        config.cname = cname;
        config.level = level;
        config.shuffle = 1;
        const std::unique_ptr<Codec> codec = MakeCodec(config);
        for (const std::int64_t bytes : {std::int64_t{100000}, std::int64_t{2} << 20}) {
          const Buffer frame =
              codec->Encode(std::span(raw).first(static_cast<std::size_t>(bytes)), typesize);
          std::size_t nbytes = 0;
          std::size_t cbytes = 0;
          std::size_t blocksize = 0;
          blosc_cbuffer_sizes(frame.data(), &nbytes, &cbytes, &blocksize);
          const auto block = static_cast<std::int64_t>(blocksize);
          const std::int64_t decode = codec->DecodeWorkingBytes(bytes, typesize);
          const std::string what = std::string(cname) + " level " + std::to_string(level) +
                                   " typesize " + std::to_string(typesize) + " on " +
                                   std::to_string(bytes) + " bytes, block " + std::to_string(block);
          const bool lz4_stream =
              std::string_view(cname) == "lz4" || std::string_view(cname) == "lz4hc";
          if (codecs::DecodesWithoutLibblosc(lz4_stream, true,
                                             static_cast<std::size_t>(typesize))) {
            // Tessera's own decoder of shuffled LZ4 frames: one block of scratch.
            EXPECT_GE(decode, block) << what;
            EXPECT_LE(decode, block + 64) << what;
          } else {
            // libblosc: two blocks and small buffers; the inner decompression state is at
            // most zstd's.
            EXPECT_GE(decode, 2 * block + 4 * typesize) << what;
            EXPECT_LE(decode, 2 * block + 4 * typesize + (std::int64_t{256} << 10)) << what;
          }
          EXPECT_GE(codec->EncodeWorkingBytes(bytes, typesize), 2 * block) << what;
        }
      }
    }
  }
}

// The figures grow with the level where the library's do: zstd 19 on a 4 MiB chunk needs
// tens of MB, zstd 1 well under one; zlib's are the documented formula.
TEST(CodecWorkingMemory, FiguresFollowTheLevel) {
  const std::int64_t chunk = std::int64_t{4} << 20;
  const std::int64_t zstd1 = MakeCodec(ParseCodecSpec("zstd:1"))->EncodeWorkingBytes(chunk, 4);
  const std::int64_t zstd19 = MakeCodec(ParseCodecSpec("zstd:19"))->EncodeWorkingBytes(chunk, 4);
  EXPECT_LT(zstd1, std::int64_t{2} << 20);
  EXPECT_GT(zstd19, std::int64_t{40} << 20);
  const std::int64_t blosc1 =
      MakeCodec(ParseCodecSpec("blosc:zstd:1"))->EncodeWorkingBytes(chunk, 4);
  const std::int64_t blosc9 =
      MakeCodec(ParseCodecSpec("blosc:zstd:9"))->EncodeWorkingBytes(chunk, 4);
  EXPECT_LT(blosc1, std::int64_t{1} << 20);
  EXPECT_GT(blosc9, std::int64_t{15} << 20);
  // zconf.h: (1 << (15 + 2)) + (1 << (8 + 9)) plus small objects; inflate 1 << 15 plus state.
  const std::int64_t deflate = MakeCodec(ParseCodecSpec("zlib:9"))->EncodeWorkingBytes(chunk, 4);
  EXPECT_EQ(deflate, (1 << 17) + (1 << 17) + (8 << 10));
  EXPECT_EQ(MakeCodec(ParseCodecSpec("gzip:1"))->DecodeWorkingBytes(chunk, 4),
            (1 << 15) + (8 << 10));
  EXPECT_THROW((void)MakeCodec(ParseCodecSpec("zstd"))->EncodeWorkingBytes(-1, 4), InvalidArgument);
}

}  // namespace
}  // namespace tessera
