// The names Tessera uses beside a directory target OUT of to_zarr (README "OUT and the
// files beside it"):
//   OUT.tessera-partial/        the run in progress: .tessera-owner (the marker naming the
//                               run, the source's fingerprint, the target's metadata and
//                               the task layout) and array/, the Zarr array being written;
//                               array/ becomes OUT when complete.
//   OUT.tessera-old/            during --overwrite: .tessera-owner and previous/, the array
//                               that was at OUT, removed once the new one is in place.
// Tessera writes into or removes such a folder only when it holds its marker, never
// follows a symbolic link there, and refuses when something else has the name.
//
// A target in a store (an object store's "s3://bucket/out.zarr") cannot be moved into
// place: its array's documents are written last, and until then OUT/.tessera-partial
// (the same marker's text) says the keys under OUT are Tessera's unfinished output.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "tessera/core/errors.hpp"
#include "tessera/plan/plan_options.hpp"
#include "tessera/storage/store.hpp"

namespace tessera {

// The marker object of an unfinished array in a store, at OUT/.tessera-partial.
inline constexpr const char* kStorePartialMarkerName = ".tessera-partial";

// The store and key path of a to_zarr target in an object store: "s3://b/ds.zarr/t2m" is
// "t2m" in the store at "s3://b/ds.zarr", so that the group it is written into is the
// store's root. Throws InvalidArgument for a URL naming a whole bucket, and what
// OpenStore throws.
struct StoreTargetLocation {
  std::shared_ptr<Store> store;
  std::string path;
};
StoreTargetLocation OpenStoreTarget(const std::string& url);

// What to_zarr found at a store target.
struct StoreTargetContents {
  enum Holds { kNothing, kArray, kPartialOutput };
  Holds holds = kNothing;
  std::string marker;  // the marker's text, for kPartialOutput
};

// What is at `path` of `store` for a to_zarr there: nothing, an array (which only
// options.overwrite lets it replace), or Tessera's own unfinished output (replaced, or
// continued with options.resume). Throws InvalidArgument naming the target and what to
// do for anything else: a Zarr group, objects that are not a Zarr array's, an array
// when not overwriting. One listing of the prefix (more for a group, to name it).
StoreTargetContents CheckStoreTarget(const Store& store, const std::string& path,
                                     const ZarrWriteOptions& options);

std::filesystem::path PartialOutputPath(const std::filesystem::path& target);
std::filesystem::path PreviousOutputPath(const std::filesystem::path& target);

// Whether an interrupted or failed run's partial output for `target` (with Tessera's
// marker) is kept.
bool HasPartialOutput(const std::filesystem::path& target);

// For messages after a failed run: "" when no partial output is kept, else "; the chunks
// written so far are kept in ...": where, that `how_to_resume` continues it, and how to
// start over. `target` is a directory, or an object store's URL (store targets).
std::string PartialOutputNote(const std::filesystem::path& target,
                              const std::string& how_to_resume);

// PartialOutputNote for the target at `path` of `store` (a store target): "" unless its
// .tessera-partial marker is there.
std::string StorePartialOutputNote(const Store& store, const std::string& path,
                                   const std::string& how_to_resume);

// Throws an error of `error`'s type whose message is `error`'s, with any partial output
// note it had replaced by PartialOutputNote(target, how_to_resume) (nothing when no
// partial output is kept). to_zarr adds the note for API callers; the CLI replaces it
// with its own (--resume).
[[noreturn]] void ThrowWithPartialOutputNote(const Error& error,
                                             const std::filesystem::path& target,
                                             const std::string& how_to_resume);
// The same for the target at `path` of `store`, with StorePartialOutputNote.
[[noreturn]] void ThrowWithStorePartialOutputNote(const Error& error, const Store& store,
                                                  const std::string& path,
                                                  const std::string& how_to_resume);

}  // namespace tessera
