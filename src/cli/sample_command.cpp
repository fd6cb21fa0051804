#include "sample_command.hpp"

#include <chrono>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <limits>
#include <numbers>
#include <optional>
#include <sstream>
#include <vector>

#include "tessera/api/storage.hpp"
#include "tessera/core/byte_size.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/core/parallel.hpp"

namespace tessera::cli {
namespace {

// Parses "8760,181,360" into extents >= min_extent; `what` names the option.
Shape ParseExtents(const std::string& text, const char* what, Index min_extent) {
  const Shape extents = ParseShape(text, what);
  if (extents.empty()) throw InvalidArgument(std::string(what) + " is empty");
  for (const Index extent : extents) {
    if (extent < min_extent) {
      throw InvalidArgument(std::string(what) + " \"" + text +
                            "\" must be comma-separated whole numbers >= " +
                            std::to_string(min_extent) + ", e.g. 8760,181,360");
    }
  }
  return extents;
}

std::vector<std::string> SplitNames(const std::string& text) {
  std::vector<std::string> names;
  std::stringstream stream(text);
  std::string part;
  while (std::getline(stream, part, ',')) names.push_back(part);
  return names;
}

// Default chunks: whole along the first dimension (a time series per chunk) and a
// square-ish tile of the other dimensions, about 8 MB per chunk — how a dataset meant
// for reading time series is chunked.
Shape DefaultChunks(const Shape& shape, Index itemsize) {
  constexpr double kTargetChunkBytes = 8'000'000;
  Shape chunks(shape.size(), 1);
  if (shape.empty()) return chunks;
  chunks[0] = std::max<Index>(shape[0], 1);
  if (shape.size() == 1) return chunks;
  const double cells = kTargetChunkBytes / static_cast<double>(chunks[0] * itemsize);
  const auto side = static_cast<Index>(
      std::max(1.0, std::floor(std::pow(cells, 1.0 / static_cast<double>(shape.size() - 1)))));
  for (std::size_t dim = 1; dim < shape.size(); ++dim) {
    chunks[dim] = std::clamp<Index>(side, 1, std::max<Index>(shape[dim], 1));
  }
  return chunks;
}

// The field: mean + one wave per dimension + seeded noise. A wave depends on one
// coordinate only, so each block tabulates its waves once per dimension.
constexpr double kMean = 280.0;        // about a surface temperature in kelvin
constexpr double kWaveAmplitude = 12;  // per dimension
constexpr double kNoiseAmplitude = 0.5;

// kWaveAmplitude * sin(2 pi (position / extent + 0.1 dim)) for the positions of `region`
// along `dim`.
std::vector<double> WaveTable(const Region& region, const Shape& shape, std::size_t dim) {
  std::vector<double> waves(static_cast<std::size_t>(region.shape[dim]));
  for (std::size_t offset = 0; offset < waves.size(); ++offset) {
    const double phase = static_cast<double>(region.start[dim] + static_cast<Index>(offset)) /
                         static_cast<double>(std::max<Index>(shape[dim], 1));
    waves[offset] =
        kWaveAmplitude * std::sin(2 * std::numbers::pi * (phase + 0.1 * static_cast<double>(dim)));
  }
  return waves;
}

// Uniform noise in [-0.5, 0.5) * kNoiseAmplitude: splitmix64 of (seed, flat index).
double Noise(std::uint64_t seed, Index linear) {
  std::uint64_t z = seed + 0x9e3779b97f4a7c15ULL * (static_cast<std::uint64_t>(linear) + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return kNoiseAmplitude * (static_cast<double>(z >> 11) * 0x1.0p-53 - 0.5);
}

// Fills one block with the field, converted to the block's dtype.
void FillBlock(NDArray& block, const Region& region, const Shape& shape, std::uint64_t seed) {
  const Shape array_strides = CStrides(shape);
  std::vector<std::vector<double>> waves;
  for (std::size_t dim = 0; dim < shape.size(); ++dim)
    waves.push_back(WaveTable(region, shape, dim));
  VisitDType(block.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    std::span<T> values = block.mutable_data<T>();
    Shape offset(shape.size(), 0);  // position within the region
    for (Index element = 0; element < block.size(); ++element) {
      double value = kMean;
      Index linear = 0;
      for (std::size_t dim = 0; dim < shape.size(); ++dim) {
        value += waves[dim][static_cast<std::size_t>(offset[dim])];
        linear += (region.start[dim] + offset[dim]) * array_strides[dim];
      }
      value += Noise(seed, linear);
      if constexpr (std::is_same_v<T, bool>) {
        values[static_cast<std::size_t>(element)] = value > kMean;
      } else if constexpr (std::is_integral_v<T>) {
        // Saturate: the field (about 244..316) does not fit every integer type, and an
        // out-of-range conversion would be undefined.
        const double low = static_cast<double>(std::numeric_limits<T>::lowest());
        const double high = static_cast<double>(std::numeric_limits<T>::max());
        values[static_cast<std::size_t>(element)] = static_cast<T>(std::clamp(value, low, high));
      } else if constexpr (kIsComplex<T>) {  // the field, and its noise as the imaginary part
        using R = typename T::value_type;
        values[static_cast<std::size_t>(element)] =
            T(static_cast<R>(value), static_cast<R>(value - kMean));
      } else {
        values[static_cast<std::size_t>(element)] = static_cast<T>(value);
      }
      // Advance `offset` in C order within the region.
      for (std::size_t dim = shape.size(); dim-- > 0;) {
        if (++offset[dim] < region.shape[dim]) break;
        offset[dim] = 0;
      }
    }
  });
}

}  // namespace

SampleCommand::SampleCommand(CLI::App& app)
    : command_(app.add_subcommand("sample", "Write a synthetic climate-like dataset as Zarr")) {
  command_->add_option("OUT", out_path_, "Directory of the Zarr store to write")->required();
  command_->add_option("--shape", shape_, "Array shape, comma-separated")->capture_default_str();
  command_->add_option("--chunks", chunks_,
                       "Chunk shape (default: whole first dimension, about 8 MB per chunk)");
  command_->add_option("--dtype", dtype_, "Element type (float32, float64, int16, ...)")
      ->capture_default_str();
  command_->add_option("--codec", codec_,
                       "Codec: blosc-lz4, blosc:zstd:3, zstd, gzip, lz4 and zlib (v2 only), none")
      ->capture_default_str();
  command_->add_option("--zarr-format", zarr_format_, "Zarr format: 3 (zarr.json) or 2 (.zarray)")
      ->capture_default_str()
      ->check(CLI::IsMember({2, 3}));
  command_->add_option("--shards", shards_,
                       "Shard shape (Zarr v3), comma-separated multiples of the chunks; each "
                       "shard is one file of inner chunks");
  command_->add_option("--dims", dims_,
                       "Dimension names, comma-separated (default: time,lat,lon "
                       "for 3-d, else dim_0,dim_1,...)");
  command_
      ->add_option("--variable", variable_,
                   "Name of the array inside the group OUT; empty writes the array at OUT")
      ->capture_default_str();
  command_->add_option("--seed", seed_, "Seed of the noise")->capture_default_str();
  command_->add_option("--threads", threads_, "Threads (0 = all cores)")->capture_default_str();
  command_->add_flag("--overwrite", overwrite_, "Replace an existing store at OUT");
}

void SampleCommand::Run(std::ostream& out) const {
  namespace fs = std::filesystem;
  ZarrMetadata metadata;
  const Shape shape = ParseExtents(shape_, "--shape", 0);
  const DType dtype = DType::FromName(dtype_);
  Shape chunks = chunks_.empty() ? DefaultChunks(shape, dtype.itemsize())
                                 : ParseExtents(chunks_, "--chunks", 1);
  std::optional<CodecConfig> codec;
  if (codec_ != "none") codec = ParseCodecSpec(codec_);
  if (zarr_format_ == 3) {
    std::optional<Shape> shards;
    if (!shards_.empty()) shards = ParseExtents(shards_, "--shards", 1);
    try {
      metadata = MakeV3Metadata(shape, std::move(chunks), dtype, codec, std::move(shards));
    } catch (const InvalidArgument& error) {
      throw InvalidArgument(std::string(error.what()) + " (--codec, --shards)");
    }
    metadata.fill_value = std::int64_t{0};
    if (dtype == bool_) metadata.fill_value = false;
  } else {
    if (!shards_.empty()) throw InvalidArgument("--shards writes Zarr v3; drop --zarr-format 2");
    metadata.shape = shape;
    metadata.dtype = dtype;
    metadata.chunks = std::move(chunks);
    metadata.compressor = codec;
  }
  if (dtype.kind() == DTypeKind::kFloat) metadata.fill_value = std::nan("");

  ZarrAttributes attributes;
  if (!dims_.empty()) {
    attributes.dimension_names = SplitNames(dims_);
  } else if (metadata.shape.size() == 3) {
    attributes.dimension_names = {"time", "lat", "lon"};
  } else {
    for (std::size_t dim = 0; dim < metadata.shape.size(); ++dim) {
      attributes.dimension_names.push_back("dim_" + std::to_string(dim));
    }
  }
  if (attributes.dimension_names.size() != metadata.shape.size()) {
    throw InvalidArgument("--dims names " + std::to_string(attributes.dimension_names.size()) +
                          " dimensions but --shape has " + std::to_string(metadata.shape.size()));
  }
  if (threads_ < 0) throw InvalidArgument("--threads must be >= 0");

  std::error_code error;
  if (fs::exists(out_path_, error) && !fs::is_empty(out_path_, error)) {
    if (!overwrite_) {
      throw StorageError(out_path_ +
                         " already exists and is not empty; choose another path or pass "
                         "--overwrite to replace it");
    }
    // --overwrite replaces Zarr stores only, never an unrelated folder or file.
    const fs::path root(out_path_);
    if (!fs::exists(root / ".zarray", error) && !fs::exists(root / ".zgroup", error) &&
        !fs::exists(root / "zarr.json", error)) {
      throw StorageError(out_path_ +
                         " is not a Zarr store (no zarr.json, .zarray or .zgroup); --overwrite only "
                         "replaces Zarr stores, so remove it yourself or choose another path");
    }
    fs::remove_all(out_path_, error);
    if (error) throw StorageError("cannot remove " + out_path_ + ": " + error.message());
  }

  auto store = DirectoryStore::Open(out_path_);
  if (!variable_.empty()) CreateZarrGroup(*store, "", zarr_format_);
  const ZarrArray array = ZarrArray::Create(store, variable_, metadata, attributes);
  const ChunkGrid& grid = array.grid();

  const auto start = std::chrono::steady_clock::now();
  ParallelFor(grid.num_blocks(), threads_ == 0 ? HardwareThreads() : threads_,
              [&](std::int64_t linear) {
                const Shape block_index = grid.BlockIndex(linear);
                const Region region = grid.BlockRegion(block_index);
                NDArray block(region.shape, metadata.dtype);
                FillBlock(block, region, metadata.shape, seed_);
                array.WriteBlock(block_index, block);
              });
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  const std::int64_t logical = CheckedMul(ShapeSize(metadata.shape), metadata.dtype.itemsize());
  const ZarrArray::StoredChunks stored = array.CountStoredChunks();
  const std::string where = variable_.empty() ? store->Describe() : store->DescribeKey(variable_);
  const std::optional<Shape> shards = ShardShape(metadata);
  out << "wrote " << where << " (Zarr v" << zarr_format_ << "): shape "
      << ShapeToString(metadata.shape) << ", " << metadata.dtype.name() << ", chunks "
      << ShapeToString(metadata.read_chunks())
      << (shards ? ", shards " + ShapeToString(*shards) : std::string()) << ", " << stored.count
      << (shards ? " shards, " : " chunks, ") << format_bytes(logical) << " logical, "
      << format_bytes(stored.bytes) << " stored, in " << std::fixed << std::setprecision(2)
      << seconds << " s\n";
}

}  // namespace tessera::cli
