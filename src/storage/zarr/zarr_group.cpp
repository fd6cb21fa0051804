// Groups: listing members (walked, or from consolidated metadata), creating groups,
// and writing consolidated metadata, for both formats.
#include "tessera/storage/zarr_group.hpp"

#include <algorithm>
#include <optional>
#include <string>

#include "json_fields.hpp"
#include "metadata_document.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/storage/zarr_array.hpp"

namespace tessera {
namespace {

using zarr_detail::Find;
using zarr_detail::Json;
using zarr_detail::kArrayDocument;
using zarr_detail::kAttributesDocument;
using zarr_detail::kConsolidatedDocument;
using zarr_detail::kGroupDocument;
using zarr_detail::kNodeDocument;

enum class NodeType { kNone, kArray, kGroup };

// The parsed document at `key`, or nullopt when absent.
std::optional<Json> ReadJson(const Store& store, const std::string& key) {
  const std::optional<std::string> text = zarr_detail::ReadMetadataDocument(store, key);
  if (!text) return std::nullopt;
  return zarr_detail::ParseDocument(*text, store.DescribeKey(key));
}

// What `path` holds: a v3 node (by its zarr.json's node_type), else a v2 array or group.
NodeType NodeAt(const Store& store, const std::string& path) {
  const std::string node_key = JoinKey(path, kNodeDocument);
  if (const std::optional<Json> node = ReadJson(store, node_key)) {
    const Json* type = Find(*node, "node_type");
    if (type != nullptr && *type == "array") return NodeType::kArray;
    if (type != nullptr && *type == "group") return NodeType::kGroup;
    zarr_detail::Fail(store.DescribeKey(node_key), "node_type", "\"array\" or \"group\"",
                      type == nullptr ? Json() : *type);
  }
  if (store.Contains(JoinKey(path, kArrayDocument))) return NodeType::kArray;
  if (store.Contains(JoinKey(path, kGroupDocument))) return NodeType::kGroup;
  return NodeType::kNone;
}

void Walk(const Store& store, const std::string& folder, const std::string& relative,
          ZarrGroupMembers& members) {
  for (const std::string& name : store.ListFolder(folder)) {
    // Metadata, temporaries and hidden files; a backslash is no key ("a\\b" is not "a/b").
    if (name.starts_with('.') || name.find('\\') != std::string::npos || name == kNodeDocument) {
      continue;
    }
    const std::string member = JoinKey(folder, name);
    const std::string member_name = JoinKey(relative, name);
    switch (NodeAt(store, member)) {
      case NodeType::kArray:
        members.arrays.push_back(member_name);
        break;
      case NodeType::kGroup:
        members.groups.push_back(member_name);
        Walk(store, member, member_name, members);
        break;
      case NodeType::kNone:
        break;
    }
  }
}

// The consolidated metadata of the group at `path`: v3's inline "metadata" object, keyed
// by member path, or v2's .zmetadata "metadata" object, keyed by document key.
struct Consolidated {
  int zarr_format = 0;
  Json metadata;
  std::string where;
};

std::optional<Consolidated> ReadConsolidated(const Store& store, const std::string& path) {
  const std::string node_key = JoinKey(path, kNodeDocument);
  if (const std::optional<Json> node = ReadJson(store, node_key)) {
    const Json* consolidated = Find(*node, "consolidated_metadata");
    if (consolidated == nullptr || consolidated->is_null()) return std::nullopt;
    const std::string where = store.DescribeKey(node_key);
    const Json* metadata = consolidated->is_object() ? Find(*consolidated, "metadata") : nullptr;
    if (metadata == nullptr || !metadata->is_object()) {
      zarr_detail::Fail(where, "consolidated_metadata.metadata", "an object of member documents",
                        metadata ? *metadata : *consolidated);
    }
    return Consolidated{3, *metadata, where};
  }
  const std::string key = JoinKey(path, kConsolidatedDocument);
  const std::optional<Json> document = ReadJson(store, key);
  if (!document) return std::nullopt;
  const Json* metadata = Find(*document, "metadata");
  if (metadata == nullptr || !metadata->is_object()) {
    zarr_detail::Fail(store.DescribeKey(key), "metadata", "an object of member documents",
                      metadata ? *metadata : Json());
  }
  return Consolidated{2, *metadata, store.DescribeKey(key)};
}

// A member path from consolidated metadata, checked as a store key would be.
bool UsableMemberPath(const std::string& name) {
  try {
    ValidateKey(name);
    return true;
  } catch (const InvalidArgument&) {
    return false;
  }
}

// Sorts member paths depth first, as a walk lists them: by their '/'-separated segments.
void SortDepthFirst(std::vector<std::string>& paths) {
  std::ranges::sort(paths, [](const std::string& a, const std::string& b) {
    std::string_view x = a;
    std::string_view y = b;
    while (!x.empty() && !y.empty()) {
      const std::string_view first_x = x.substr(0, x.find('/'));
      const std::string_view first_y = y.substr(0, y.find('/'));
      if (first_x != first_y) return first_x < first_y;
      x.remove_prefix(std::min(x.size(), first_x.size() + 1));
      y.remove_prefix(std::min(y.size(), first_y.size() + 1));
    }
    return x.empty() && !y.empty();
  });
}

ZarrGroupMembers MembersOf(const Consolidated& consolidated) {
  ZarrGroupMembers members;
  for (const auto& [name, document] : consolidated.metadata.items()) {
    if (consolidated.zarr_format == 3) {
      const Json* type = document.is_object() ? Find(document, "node_type") : nullptr;
      if (!UsableMemberPath(name) || type == nullptr) {
        zarr_detail::Fail(consolidated.where, "consolidated_metadata.metadata." + name,
                          "a member's zarr.json document", document);
      }
      if (*type == "array") members.arrays.push_back(name);
      if (*type == "group") members.groups.push_back(name);
      continue;
    }
    // v2: keys are document paths, "sub/a/.zarray".
    const std::size_t slash = name.rfind('/');
    const std::string folder = slash == std::string::npos ? "" : name.substr(0, slash);
    const std::string leaf = slash == std::string::npos ? name : name.substr(slash + 1);
    if (folder.empty() || !UsableMemberPath(folder)) continue;  // the group's own documents
    if (leaf == kArrayDocument) members.arrays.push_back(folder);
    if (leaf == kGroupDocument) members.groups.push_back(folder);
  }
  SortDepthFirst(members.arrays);
  SortDepthFirst(members.groups);
  return members;
}

}  // namespace

ZarrGroupMembers ListZarrGroup(const Store& store, std::string_view path) {
  if (!path.empty()) ValidateKey(path);
  if (const std::optional<Consolidated> consolidated = ReadConsolidated(store, std::string(path))) {
    return MembersOf(*consolidated);
  }
  ZarrGroupMembers members;
  Walk(store, std::string(path), "", members);
  return members;
}

bool HasConsolidatedMetadata(const Store& store, std::string_view path) {
  if (!path.empty()) ValidateKey(path);
  return ReadConsolidated(store, std::string(path)).has_value();
}

void ConsolidateZarrGroup(Store& store, std::string_view path) {
  if (!path.empty()) ValidateKey(path);
  const std::string group(path);
  const std::string node_key = JoinKey(group, kNodeDocument);
  std::optional<Json> node = ReadJson(store, node_key);
  const bool v3 = node.has_value() && Find(*node, "node_type") != nullptr &&
                  *Find(*node, "node_type") == "group";
  if (!v3 && !store.Contains(JoinKey(group, kGroupDocument))) {
    throw StorageError("cannot consolidate " +
                       (group.empty() ? store.Describe() : store.DescribeKey(group)) +
                       ": it is not a Zarr group");
  }
  // The members as they are on the store, not as older consolidated metadata says.
  ZarrGroupMembers members;
  Walk(store, group, "", members);
  Json metadata = Json::object();
  if (v3) {
    for (const auto* names : {&members.arrays, &members.groups}) {
      for (const std::string& name : *names) {
        std::optional<Json> document =
            ReadJson(store, JoinKey(JoinKey(group, name), kNodeDocument));
        if (!document) continue;  // a v2 member of a v3 group is not part of v3's metadata
        document->erase("consolidated_metadata");
        metadata[name] = std::move(*document);
      }
    }
    (*node)["consolidated_metadata"] = {
        {"kind", "inline"}, {"must_understand", false}, {"metadata", std::move(metadata)}};
    store.Set(node_key, std::string_view(zarr_detail::DumpOrThrow(*node, "zarr.json")));
    return;
  }
  auto add = [&](const std::string& folder, std::string_view document_name) {
    const std::string key = JoinKey(folder, document_name);
    if (std::optional<Json> document = ReadJson(store, JoinKey(group, key))) {
      metadata[key] = std::move(*document);
    }
  };
  add("", kGroupDocument);
  add("", kAttributesDocument);
  for (const std::string& name : members.arrays) {
    add(name, kArrayDocument);
    add(name, kAttributesDocument);
  }
  for (const std::string& name : members.groups) {
    add(name, kGroupDocument);
    add(name, kAttributesDocument);
  }
  const Json document = {{"metadata", std::move(metadata)}, {"zarr_consolidated_format", 1}};
  store.Set(JoinKey(group, kConsolidatedDocument),
            std::string_view(zarr_detail::DumpOrThrow(document, ".zmetadata")));
}

void CreateZarrGroup(Store& store, std::string_view path, int zarr_format) {
  if (!path.empty()) ValidateKey(path);
  if (zarr_format == 3) {
    store.Set(JoinKey(path, kNodeDocument),
              std::string_view("{\n    \"attributes\": {},\n    \"node_type\": \"group\",\n"
                               "    \"zarr_format\": 3\n}"));
    return;
  }
  if (zarr_format != 2) {
    throw InvalidArgument("zarr_format must be 2 or 3, got " + std::to_string(zarr_format));
  }
  store.Set(JoinKey(path, kGroupDocument), std::string_view("{\n    \"zarr_format\": 2\n}"));
}

bool IsZarrGroup(const Store& store, std::string_view path) {
  if (!path.empty()) ValidateKey(path);
  return NodeAt(store, std::string(path)) == NodeType::kGroup;
}

bool IsReadableZarrGroup(const Store& store, std::string_view path) {
  try {
    return IsZarrGroup(store, path);
  } catch (const FormatError&) {
    return false;
  }
}

}  // namespace tessera
