// The S3 bucket of the tests that need a real S3-compatible server: the one
// tests/s3/s3_server.py starts on loopback and names in TESSERA_TEST_S3_BUCKET (with
// AWS_ENDPOINT_URL and credentials in the environment). Without it those tests are
// skipped, unless TESSERA_TEST_S3_REQUIRED=1 (how ctest runs them), when they fail.
// Header-only.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <optional>
#include <string>

namespace tessera::testing {

// The test bucket's name, or nullopt (the caller skips) when no server was started.
inline std::optional<std::string> S3TestBucket() {
  const char* bucket = std::getenv("TESSERA_TEST_S3_BUCKET");
  if (bucket != nullptr && *bucket != '\0') return std::string(bucket);
  const char* required = std::getenv("TESSERA_TEST_S3_REQUIRED");
  if (required != nullptr && std::string(required) == "1") {
    ADD_FAILURE() << "TESSERA_TEST_S3_REQUIRED=1 but TESSERA_TEST_S3_BUCKET is not set: run "
                     "under tests/s3/s3_server.py";
  }
  return std::nullopt;
}

// A fresh "s3://BUCKET/PREFIX" URL for one test: unique in the process and among processes.
inline std::string FreshS3Url(const std::string& bucket, const std::string& name) {
  static std::atomic<int> counter{0};
  return "s3://" + bucket + "/" + name + "-" + std::to_string(::getpid()) + "-" +
         std::to_string(counter++);
}

}  // namespace tessera::testing
