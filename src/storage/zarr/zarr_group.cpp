#include "tessera/storage/zarr_group.hpp"

#include <string>

namespace tessera {
namespace {

constexpr std::string_view kArrayKey = ".zarray";
constexpr std::string_view kGroupKey = ".zgroup";

// Adds the members below `folder` (a path from the store's root), named from `relative`
// (the same folder, relative to the listed group).
void Collect(const Store& store, const std::string& folder, const std::string& relative,
             ZarrGroupMembers& members) {
  for (const std::string& name : store.ListFolder(folder)) {
    // Metadata, temporaries and hidden files; a backslash is no key ("a\\b" is not "a/b").
    if (name.starts_with('.') || name.find('\\') != std::string::npos) continue;
    const std::string member = JoinKey(folder, name);
    const std::string member_name = JoinKey(relative, name);
    if (store.Contains(JoinKey(member, kArrayKey))) {
      members.arrays.push_back(member_name);
    } else if (store.Contains(JoinKey(member, kGroupKey))) {
      members.groups.push_back(member_name);
      Collect(store, member, member_name, members);
    }
  }
}

}  // namespace

ZarrGroupMembers ListZarrGroup(const Store& store, std::string_view path) {
  if (!path.empty()) ValidateKey(path);
  ZarrGroupMembers members;
  Collect(store, std::string(path), "", members);
  return members;
}

}  // namespace tessera
