// Deleting many objects of a bucket at once: DELETEs sent in parallel, up to
// kParallelDeletes in flight. Internal to src/storage/stores (S3Store's EraseAll and
// EraseKeys).
//
//   const std::int64_t removed = DeleteObjects(client, {"p/0.0", "p/0.1"});
//
// Thread-safe as S3Client is; each call runs its own threads and joins them all before it
// returns or throws.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "s3_client.hpp"

namespace tessera::s3 {

// DELETEs in flight at once: a work directory holds many thousand chunks, and each DELETE
// waits on one round trip; 16 keeps a server busy without crowding it (S3 takes 3500
// writes a second per prefix).
inline constexpr int kParallelDeletes = 16;

// DELETEs each of `object_keys` (keys in the bucket, sent as they are); returns how many
// the server answered with success. A 404 counts as already absent (S3 itself answers
// success for a missing key, so the count can include keys that were absent). The first
// failure (ThrowResponseError's StorageError, or the client's) stops handing out more
// keys; it is rethrown once every thread has stopped. Fewer threads than asked for are
// fine: when the system refuses one, the threads already running (the calling thread
// among them) do the rest.
std::int64_t DeleteObjects(const S3Client& client, std::span<const std::string> object_keys);

}  // namespace tessera::s3
