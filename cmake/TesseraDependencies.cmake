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
# libcurl (libcurl4-openssl-dev) for the S3 store (storage/s3_store.hpp): HTTP, TLS and
# AWS Signature V4 (CURLOPT_AWS_SIGV4; libcurl 7.87 and later sign the headers Tessera
# sets, x-amz-content-sha256 included).
find_package(CURL 7.87 REQUIRED)

# MPI (libopenmpi-dev + openmpi-bin, or any MPI) for the "mpi" executor (src/exec/mpi):
# AUTO builds it when MPI is found; without MPI the library and its tests build and run
# without it, and choosing executor "mpi" says how to get it.
set(TESSERA_WITH_MPI AUTO CACHE STRING "Build the mpi executor: AUTO (when MPI is found), ON or OFF")
set_property(CACHE TESSERA_WITH_MPI PROPERTY STRINGS AUTO ON OFF)
set(TESSERA_MPI_FOUND OFF)
if(NOT TESSERA_WITH_MPI STREQUAL "OFF")
  # MPI's C API (libmpi alone, not the deprecated C++ bindings): FindMPI's C component
  # needs the C language.
  enable_language(C)
  if(TESSERA_WITH_MPI STREQUAL "ON")
    find_package(MPI REQUIRED COMPONENTS C)
  else()
    find_package(MPI QUIET COMPONENTS C)
  endif()
  if(MPI_C_FOUND)
    set(TESSERA_MPI_FOUND ON)
    message(STATUS "Tessera: MPI found (${MPI_C_LIBRARIES}): the mpi executor is built")
  else()
    message(STATUS "Tessera: MPI not found: the mpi executor is not built")
  endif()
endif()

# One interface target carrying the private third-party dependencies.
add_library(tessera_third_party INTERFACE)
target_link_libraries(tessera_third_party INTERFACE
  PkgConfig::BLOSC PkgConfig::ZSTD PkgConfig::LZ4 PkgConfig::OPENBLAS PkgConfig::SLEEF ZLIB::ZLIB
  nlohmann_json::nlohmann_json CURL::libcurl
  Threads::Threads)
