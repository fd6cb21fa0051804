# Every dependency is a Debian package found on the system; nothing is downloaded.
set(THREADS_PREFER_PTHREAD_FLAG ON)
find_package(Threads REQUIRED)
find_package(nlohmann_json 3 REQUIRED)
find_package(PkgConfig REQUIRED)
pkg_check_modules(BLOSC REQUIRED IMPORTED_TARGET blosc)
pkg_check_modules(ZSTD REQUIRED IMPORTED_TARGET libzstd)
pkg_check_modules(LZ4 REQUIRED IMPORTED_TARGET liblz4)
find_package(ZLIB REQUIRED)
# OpenBLAS (libopenblas-dev) for matmul's float GEMMs.
pkg_check_modules(OPENBLAS REQUIRED IMPORTED_TARGET openblas)
# SLEEF (libsleef-dev) for the vector math kernels (src/plan/kernels/vector_math.hpp).
pkg_check_modules(SLEEF REQUIRED IMPORTED_TARGET sleef)
# SQLite (libsqlite3-dev) for the history database (memory/history.hpp).
find_package(SQLite3 REQUIRED)

# One interface target carrying the private third-party dependencies.
add_library(tessera_third_party INTERFACE)
target_link_libraries(tessera_third_party INTERFACE
  PkgConfig::BLOSC PkgConfig::ZSTD PkgConfig::LZ4 PkgConfig::OPENBLAS PkgConfig::SLEEF ZLIB::ZLIB
  nlohmann_json::nlohmann_json
  Threads::Threads)
