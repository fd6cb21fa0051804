#include "tessera/storage/zarr_group.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "temp_dir.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/storage/directory_store.hpp"
#include "tessera/storage/memory_store.hpp"
#include "tessera/storage/zarr_array.hpp"

namespace tessera {
namespace {

namespace fs = std::filesystem;
using Names = std::vector<std::string>;

void MakeArray(const std::shared_ptr<Store>& store, const std::string& path) {
  ZarrMetadata metadata;
  metadata.shape = {4};
  metadata.chunks = {2};
  ZarrArray::Create(store, path, metadata);
  store->Set(JoinKey(path, "0"), std::string_view("chunk"));  // a chunk, never listed
}

// A dataset.zarr as xarray writes one, plus a nested group.
void MakeDataset(const std::shared_ptr<Store>& store) {
  CreateZarrGroup(*store, "");
  MakeArray(store, "t2m");
  MakeArray(store, "lat");
  CreateZarrGroup(*store, "extra");
  MakeArray(store, "extra/mask");
  CreateZarrGroup(*store, "extra/deeper");
  MakeArray(store, "extra/deeper/z");
  store->Set("notes.txt", std::string_view("not a member"));
  store->Set("plain/file", std::string_view("a folder that is neither array nor group"));
}

// A store that records the folders it is asked to list.
class ListingStore final : public Store {
 public:
  explicit ListingStore(std::shared_ptr<Store> inner) : inner_(std::move(inner)) {}
  std::optional<Buffer> Get(std::string_view key) const override { return inner_->Get(key); }
  using Store::Set;
  void Set(std::string_view key, std::span<const std::byte> value) override {
    inner_->Set(key, value);
  }
  bool Erase(std::string_view key) override { return inner_->Erase(key); }
  std::vector<std::string> List(std::string_view prefix) const override {
    return inner_->List(prefix);
  }
  std::vector<std::string> ListFolder(std::string_view folder) const override {
    listed.emplace_back(folder);
    return inner_->ListFolder(folder);
  }
  std::optional<std::int64_t> SizeOf(std::string_view key) const override {
    return inner_->SizeOf(key);
  }
  std::string Describe() const override { return "listing store"; }

  mutable Names listed;

 private:
  std::shared_ptr<Store> inner_;
};

TEST(ZarrGroupTest, ListsArraysAndNestedGroupsDepthFirst) {
  const std::shared_ptr<Store> store = MemoryStore::Create();
  MakeDataset(store);
  const ZarrGroupMembers members = ListZarrGroup(*store);
  EXPECT_EQ(members.arrays, (Names{"extra/deeper/z", "extra/mask", "lat", "t2m"}));
  EXPECT_EQ(members.groups, (Names{"extra", "extra/deeper"}));
}

TEST(ZarrGroupTest, NamesAreRelativeToTheListedGroup) {
  const std::shared_ptr<Store> store = MemoryStore::Create();
  MakeDataset(store);
  const ZarrGroupMembers members = ListZarrGroup(*store, "extra");
  EXPECT_EQ(members.arrays, (Names{"deeper/z", "mask"}));
  EXPECT_EQ(members.groups, (Names{"deeper"}));
  EXPECT_NO_THROW(ZarrArray::Open(store, JoinKey("extra", members.arrays[0])));
}

TEST(ZarrGroupTest, ArraysAreNeverLookedInto) {
  auto store = std::make_shared<ListingStore>(MemoryStore::Create());
  MakeDataset(store);
  ListZarrGroup(*store);
  EXPECT_EQ(store->listed, (Names{"", "extra", "extra/deeper"}));
}

TEST(ZarrGroupTest, EmptyGroupAndMissingPathHaveNoMembers) {
  const std::shared_ptr<Store> store = MemoryStore::Create();
  CreateZarrGroup(*store, "");
  EXPECT_TRUE(ListZarrGroup(*store).arrays.empty());
  EXPECT_TRUE(ListZarrGroup(*store, "nothing/here").groups.empty());
  EXPECT_THROW(ListZarrGroup(*store, "../up"), InvalidArgument);
}

TEST(ZarrGroupTest, DirectoryStoreGivesTheSameMembers) {
  testing::TempDir directory;
  const std::shared_ptr<Store> store = DirectoryStore::Open(directory.path() / "dataset.zarr");
  MakeDataset(store);
  const ZarrGroupMembers members = ListZarrGroup(*store);
  EXPECT_EQ(members.arrays, (Names{"extra/deeper/z", "extra/mask", "lat", "t2m"}));
  EXPECT_EQ(members.groups, (Names{"extra", "extra/deeper"}));
}

TEST(ZarrGroupTest, LinkedMembersAreListedAndLinkCyclesEnd) {
  testing::TempDir directory;
  const fs::path root = directory.path() / "g.zarr";
  const std::shared_ptr<DirectoryStore> store = DirectoryStore::Open(root);
  CreateZarrGroup(*store, "");
  MakeArray(store, "a");
  CreateZarrGroup(*store, "sub");
  fs::create_directory_symlink(root, root / "sub" / "loop");          // back to the root
  fs::create_directory_symlink(root / "sub", root / "sub" / "self");  // to itself
  const std::shared_ptr<DirectoryStore> elsewhere = DirectoryStore::Open(directory.path() / "b");
  MakeArray(elsewhere, "");
  fs::create_directory_symlink(directory.path() / "b", root / "sub" / "b");  // an array
  const ZarrGroupMembers members = ListZarrGroup(*store);
  EXPECT_EQ(members.arrays, (Names{"a", "sub/b"}));
  EXPECT_EQ(members.groups, (Names{"sub"}));
}

}  // namespace
}  // namespace tessera
