// Fuzzes the S3 store's parsers of untrusted text (src/storage/stores/s3_response.hpp and
// s3_config.hpp): every input is tried as a ListObjectsV2 body, as an error body and as an
// AWS credentials/config file, so any S3 response or ini file is a seed as it is.
//
// Contracts checked:
//   list    ParseListObjectsV2 either succeeds or throws FormatError (anything else
//           escaping is a crash; so is a stack overflow, which kMaxXmlDepth prevents),
//           with a message of at most kMaxMessage bytes; a page it returns has non-empty
//           keys, non-negative sizes and a continuation token when truncated.
//   error   ParseErrorResponse never throws; a response it returns has a code, and then
//           the same body is no listing.
//   ini     ParseAwsIni either succeeds or throws FormatError naming a line of the text.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "s3_config.hpp"
#include "s3_response.hpp"
#include "tessera/core/errors.hpp"

namespace {

// Messages quote only cut pieces of the input (64 bytes of a value, 256 of an S3 message,
// each escaped to at most 4 bytes a byte), so they stay short whatever the input.
constexpr std::size_t kMaxMessage = 4096;

[[noreturn]] void Fail(const char* what, std::string_view detail) {
  std::fprintf(stderr, "fuzz_s3_response: %s\n%.*s\n", what, static_cast<int>(detail.size()),
               detail.data());
  std::abort();
}

void CheckListing(std::string_view text, bool is_error) {
  tessera::s3::ListPage page;
  try {
    page = tessera::s3::ParseListObjectsV2(text);
  } catch (const tessera::FormatError& error) {
    const std::string_view message = error.what();
    if (message.empty() || message.size() > kMaxMessage) Fail("bad message size", message);
    return;
  }
  if (is_error) Fail("an error document parsed as a listing", text);
  for (const tessera::s3::ListedObject& object : page.objects) {
    if (object.key.empty()) Fail("a listed object without a key", text);
    if (object.size < 0) Fail("a listed object with a negative size", object.key);
  }
  if (page.truncated && page.next_continuation_token.empty()) {
    Fail("a truncated page without a continuation token", text);
  }
}

void CheckIni(std::string_view text) {
  try {
    tessera::s3::ParseAwsIni(text);
  } catch (const tessera::FormatError& error) {
    const std::string_view message = error.what();
    if (!message.starts_with("line ")) Fail("an ini error without its line", message);
    const long line = std::strtol(error.what() + 5, nullptr, 10);
    std::size_t lines = 1;
    for (const char c : text) lines += c == '\n' ? 1 : 0;
    if (line < 1 || static_cast<std::size_t>(line) > lines) Fail("a line out of range", message);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::optional<tessera::s3::ErrorResponse> error = tessera::s3::ParseErrorResponse(text);
  if (error && error->code.empty()) Fail("an error response without a code", text);
  CheckListing(text, error.has_value());
  CheckIni(text);
  return 0;
}
