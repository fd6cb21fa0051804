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
#pragma once

#include <filesystem>
#include <string>

#include "tessera/core/errors.hpp"

namespace tessera {

std::filesystem::path PartialOutputPath(const std::filesystem::path& target);
std::filesystem::path PreviousOutputPath(const std::filesystem::path& target);

// Whether an interrupted or failed run's partial output for `target` (with Tessera's
// marker) is kept.
bool HasPartialOutput(const std::filesystem::path& target);

// For messages after a failed run: "" when no partial output is kept, else "; the chunks
// written so far are kept in ...": where, that `how_to_resume` continues it, and how to
// start over.
std::string PartialOutputNote(const std::filesystem::path& target,
                              const std::string& how_to_resume);

// Throws an error of `error`'s type whose message is `error`'s, with any partial output
// note it had replaced by PartialOutputNote(target, how_to_resume) (nothing when no
// partial output is kept). to_zarr adds the note for API callers; the CLI replaces it
// with its own (--resume).
[[noreturn]] void ThrowWithPartialOutputNote(const Error& error,
                                             const std::filesystem::path& target,
                                             const std::string& how_to_resume);

}  // namespace tessera
