// .zattrs: parsing and writing (zarr_attributes.cpp).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tessera/core/errors.hpp"
#include "tessera/storage/zarr_metadata.hpp"

namespace tessera {
namespace {

using Json = nlohmann::json;

constexpr std::string_view kAttrsWhere = "/data/a.zarr/.zattrs";

TEST(ZarrAttributesTest, ParsesDimensionNamesAndKeepsTheRest) {
  ZarrAttributes attributes = ParseZarrAttributes(
      R"({"_ARRAY_DIMENSIONS": ["time", "lat"], "units": "K", "scale": 0.5,
          "nested": {"a": [1, 2, {"b": null}]}})",
      kAttrsWhere);
  EXPECT_EQ(attributes.dimension_names, (std::vector<std::string>{"time", "lat"}));
  EXPECT_EQ(Json::parse(attributes.other_json),
            Json::parse(R"({"units": "K", "scale": 0.5, "nested": {"a": [1, 2, {"b": null}]}})"));
  const std::string text = ZarrAttributesToJson(attributes);
  EXPECT_EQ(Json::parse(text)["_ARRAY_DIMENSIONS"], Json::parse(R"(["time", "lat"])"));
  EXPECT_EQ(ParseZarrAttributes(text, kAttrsWhere), attributes);
}

TEST(ZarrAttributesTest, EmptyAndDefault) {
  ZarrAttributes empty = ParseZarrAttributes("{}", kAttrsWhere);
  EXPECT_EQ(empty, ZarrAttributes{});
  EXPECT_EQ(ZarrAttributesToJson(ZarrAttributes{}), "{}");
  ZarrAttributes names_only{.dimension_names = {"x"}};
  EXPECT_EQ(ZarrAttributesToJson(names_only),
            "{\n    \"_ARRAY_DIMENSIONS\": [\n        \"x\"\n    ]\n}");
  EXPECT_EQ(ParseZarrAttributes(ZarrAttributesToJson(names_only), kAttrsWhere), names_only);
}

TEST(ZarrAttributesTest, EmptyDimensionListOfAZeroDimensionalArrayIsKept) {
  ZarrAttributes attributes = ParseZarrAttributes(R"({"_ARRAY_DIMENSIONS": []})", kAttrsWhere);
  EXPECT_TRUE(attributes.dimension_names.empty());
  EXPECT_EQ(Json::parse(ZarrAttributesToJson(attributes)),
            Json::parse(R"({"_ARRAY_DIMENSIONS": []})"));
  EXPECT_EQ(ParseZarrAttributes(ZarrAttributesToJson(attributes), kAttrsWhere), attributes);
}

TEST(ZarrAttributesTest, NonAsciiIsEscapedLikeZarrPython) {
  ZarrAttributes attributes;
  attributes.other_json = Json::parse(R"({"name": "caf\u00e9"})").dump();
  EXPECT_EQ(ZarrAttributesToJson(attributes), "{\n    \"name\": \"caf\\u00e9\"\n}");
}

TEST(ZarrAttributesTest, MalformedDocumentsAreFormatErrors) {
  struct Case {
    std::string json;
    std::string mention;
  };
  for (const Case& c :
       std::vector<Case>{{"", "invalid JSON"},
                         {"{\"a\": ", "invalid JSON"},
                         {"[]", "expected a JSON object"},
                         {"\"text\"", "expected a JSON object"},
                         {R"({"_ARRAY_DIMENSIONS": "x"})", "key \"_ARRAY_DIMENSIONS\""},
                         {R"({"_ARRAY_DIMENSIONS": ["x", 1]})", "key \"_ARRAY_DIMENSIONS\""},
                         {R"({"_ARRAY_DIMENSIONS": [null]})", "key \"_ARRAY_DIMENSIONS\""},
                         {R"({"_ARRAY_DIMENSIONS": {"x": 1}})", "key \"_ARRAY_DIMENSIONS\""}}) {
    try {
      ParseZarrAttributes(c.json, kAttrsWhere);
      ADD_FAILURE() << "accepted " << c.json;
    } catch (const FormatError& error) {
      const std::string message = error.what();
      EXPECT_TRUE(message.starts_with(kAttrsWhere)) << message;
      EXPECT_NE(message.find(c.mention), std::string::npos) << message;
    }
  }
}

TEST(ZarrAttributesTest, WritingRejectsOtherJsonThatIsNotAnObject) {
  EXPECT_THROW(ZarrAttributesToJson({.dimension_names = {}, .other_json = "[1]"}), InvalidArgument);
  EXPECT_THROW(ZarrAttributesToJson({.dimension_names = {}, .other_json = "{"}), InvalidArgument);
  EXPECT_THROW(ZarrAttributesToJson({.dimension_names = {"\xff"}}), InvalidArgument);
}

}  // namespace
}  // namespace tessera
