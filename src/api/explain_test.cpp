// FinalizedPlan::explain() in golden form: the plan after every pass for the dew point
// and for the seed's rechunk (the ERA5 case of rechunker's docs). Node names carry a
// process-wide counter; they are numbered in order of appearance before comparing.
// To accept a change on purpose: TESSERA_UPDATE_GOLDEN=1 rewrites the golden files.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>

#include "era5_case.hpp"
#include "scoped_environment.hpp"
#include "tessera/api/array.hpp"
#include "tessera/api/creation.hpp"
#include "tessera/api/elementwise.hpp"
#include "tessera/storage/memory_store.hpp"
#include "tessera/storage/zarr_array.hpp"

namespace tessera {
namespace {

// "add-17" -> "add-1": each distinct number after a name, in order of appearance.
std::string NumberNames(const std::string& text) {
  static const std::regex name(R"(([A-Za-z_]+)-([0-9]+))");
  std::map<std::string, int> numbers;
  std::string out;
  auto last = text.cbegin();
  for (std::sregex_iterator it(text.begin(), text.end(), name), end; it != end; ++it) {
    const std::smatch& match = *it;
    out.append(last, match[0].first);
    const auto [entry, added] =
        numbers.emplace(match[2].str(), static_cast<int>(numbers.size()) + 1);
    out += match[1].str() + "-" + std::to_string(entry->second);
    last = match[0].second;
  }
  out.append(last, text.cend());
  return out;
}

// The golden file `name` beside this test (src/api/golden), found from the source path
// or, where that is relative to somewhere else, from the working directory up.
std::filesystem::path GoldenPath(const std::string& name) {
  const std::filesystem::path beside = std::filesystem::path(__FILE__).parent_path() / "golden";
  if (std::filesystem::exists(beside / name)) return beside / name;
  for (std::filesystem::path dir = std::filesystem::current_path(); !dir.empty();
       dir = dir.parent_path()) {
    if (std::filesystem::exists(dir / "src/api/golden" / name))
      return dir / "src/api/golden" / name;
    if (dir == dir.parent_path()) break;
  }
  return beside / name;
}

// The plan's explain() with every pass on and the spec's own workers, whatever
// configuration the suite reruns under.
std::string ExplainAllPasses(const Array& array) {
  const testing::ScopedEnvironment passes("TESSERA_DISABLE_PASSES", std::nullopt);
  const testing::ScopedEnvironment workers("TESSERA_FORCE_WORKERS", std::nullopt);
  return NumberNames(array.plan().explain());
}

void ExpectGolden(const std::string& name, const std::string& actual) {
  const std::filesystem::path path = GoldenPath(name);
  if (const char* update = std::getenv("TESSERA_UPDATE_GOLDEN");
      update && std::string(update) == "1") {
    std::ofstream(path) << actual;
    return;
  }
  std::ifstream file(path);
  ASSERT_TRUE(file) << "no golden file " << path << "; the text is:\n" << actual;
  std::stringstream expected;
  expected << file.rdbuf();
  EXPECT_EQ(actual, expected.str())
      << "golden file " << path << " (TESSERA_UPDATE_GOLDEN=1 rewrites it)";
}

// A stored float32 array, uncompressed (projections then do not depend on a codec's
// ratio), whose element i is value(i).
template <typename Value>
Array StoredFloat32(const Shape& shape, const Shape& chunks, const Spec& spec, Value value) {
  auto store = std::make_shared<MemoryStore>();
  ZarrMetadata metadata;
  metadata.shape = shape;
  metadata.chunks = chunks;
  metadata.dtype = float32;
  metadata.compressor = std::nullopt;
  const ZarrArray array = ZarrArray::Create(store, "", metadata);
  NDArray values(shape, float32);
  auto data = values.mutable_data<float>();
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = value(i);
  array.Write(values, 1);
  return from_zarr(store, "", spec);
}

// As memory_sizing_test.cpp's dew point (K) from 2 m temperature (K) and humidity (%).
TEST(ExplainTest, DewPointPlanAfterEveryPass) {
  Spec spec = Spec::from({{"allowed_mem", "4MB"}, {"total_mem", "2GiB"}, {"max_workers", "2"}});
  const Array t2 = StoredFloat32({6, 45, 90}, {2, 45, 90}, spec, [](std::size_t i) {
    return 250.0f + static_cast<float>(i % 600) * 0.1f;
  });
  const Array rh = StoredFloat32({6, 45, 90}, {2, 45, 90}, spec, [](std::size_t i) {
    return 5.0f + static_cast<float>((i * 7) % 950) * 0.1f;
  });
  const Array td =
      pow((1.0 / 273) -
              0.0001844 * log(0.611 * exp(5423 * ((1.0 / 273) - (1.0 / t2))) * rh / 100 / 0.611),
          -1);
  ExpectGolden("explain_dew_point.txt", ExplainAllPasses(td));
}

// As rechunk_test.cpp's ERA5 case (era5_case.hpp): to chunks (350640, 10, 10), planned
// only.
TEST(ExplainTest, SeedRechunkPlanAfterEveryPass) {
  ExpectGolden("explain_seed_rechunk.txt",
               ExplainAllPasses(testing::Era5Temperature().rechunk({350640, 10, 10})));
}

}  // namespace
}  // namespace tessera
