// A program outside the Tessera tree, built against the installed package: writes a
// small Zarr array (at argv[1], left in place for the caller to inspect), reads it back,
// checks every value and a size string, computes a small lazy plan over it; prints OK.
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <span>
#include <string>
#include <tessera/tessera.hpp>
#include <vector>

namespace {

int Fail(const std::string& what) {
  std::cerr << "consumer: FAILED: " << what << '\n';
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::filesystem::path root =
      argc > 1 ? std::filesystem::path(argv[1])
               : std::filesystem::temp_directory_path() / "tessera_consumer.zarr";
  try {
    std::filesystem::remove_all(root);
    std::vector<double> values(7 * 5);
    for (std::size_t element = 0; element < values.size(); ++element) {
      values[element] = static_cast<double>(element) * 0.5 - 3.0;
    }
    const tessera::NDArray data =
        tessera::NDArray::FromValues<double>({7, 5}, std::span<const double>(values));

    tessera::ZarrMetadata metadata;
    metadata.shape = {7, 5};
    metadata.chunks = {3, 2};
    metadata.dtype = tessera::float64;
    metadata.compressor = tessera::ParseCodecSpec("blosc:lz4");
    auto store = tessera::DirectoryStore::Open(root);
    tessera::ZarrArray::Create(store, "", metadata).Write(data);

    const tessera::NDArray back = tessera::ZarrArray::Open(store).Read();
    if (back.shape() != tessera::Shape{7, 5}) return Fail("shape");
    const std::span<const double> read = back.data<double>();
    for (std::size_t element = 0; element < values.size(); ++element) {
      if (read[element] != values[element]) return Fail("value " + std::to_string(element));
    }
    // A small lazy plan over the stored array: mean(ones + x) = 1 + mean(x), where
    // mean(x) = 0.5 * (0 + ... + 34) / 35 - 3 = 5.5; and sum(arange(100)) = 4950.
    tessera::Spec spec;
    spec.allowed_mem = 16 << 20;
    spec.max_workers = 2;
    const tessera::Array x = tessera::from_zarr(root.string(), spec);
    const tessera::Array shifted = tessera::ones({7, 5}, tessera::float64, {3, 2}, spec) + x;
    const tessera::NDArray mean = tessera::mean(shifted).compute();
    if (mean.size() != 1 || mean.GetAsDouble(0) != 6.5) {
      return Fail("mean(ones + x) = " + std::to_string(mean.GetAsDouble(0)) + ", expected 6.5");
    }
    const tessera::NDArray total = tessera::sum(tessera::arange(100, 10, spec)).compute();
    if (total.size() != 1 || total.GetAsDouble(0) != 4950) {
      return Fail("sum(arange(100)) = " + std::to_string(total.GetAsDouble(0)));
    }
    // A user kernel (map_blocks, BlockFunction) and the plan's public face (OpInfo).
    const tessera::Array doubled = tessera::map_blocks(
        [](std::span<const tessera::NDArray> in, const tessera::BlockInfo&) {
          tessera::NDArray out(in[0].shape(), tessera::float64);
          const std::span<const double> from = in[0].data<double>();
          const std::span<double> to = out.mutable_data<double>();
          for (std::size_t i = 0; i < from.size(); ++i) to[i] = 2 * from[i];
          return out;
        },
        {x}, tessera::float64);
    const tessera::FinalizedPlan plan = tessera::plan({tessera::sum(doubled)});
    if (plan.ops().empty() || tessera::OpKindName(plan.ops().front().kind) != "map_blocks") {
      return Fail("the plan of sum(map_blocks(...)) does not start with a map_blocks op");
    }
    const tessera::NDArray twice = tessera::sum(doubled).compute();
    if (twice.GetAsDouble(0) != 2 * 35 * 5.5) {
      return Fail("sum(2 x) = " + std::to_string(twice.GetAsDouble(0)));
    }
    if (tessera::parse_bytes("2GiB") != std::int64_t{2} * 1024 * 1024 * 1024) {
      return Fail("parse_bytes(\"2GiB\")");
    }
  } catch (const tessera::Error& error) {
    return Fail(error.what());
  }
  std::cout << "OK (tessera " << tessera::version() << ")\n";
  return 0;
}
