# Layers the compiler enforces (../shared/DESIGN.md "Layers"): each layer's target sees
# the public headers of its own layer and of the layers below it, and nothing else, so an
# include that points up does not compile.
#
# The headers stay where users find them (include/tessera/<layer>/, installed as they
# are). Instead, each layer gets an include root in the build tree, made at configure
# time, whose tessera/ folder holds symbolic links to the visible part of include/tessera:
#
#   build/layer_include/plan/tessera/core    -> include/tessera/core
#   build/layer_include/plan/tessera/storage -> (a folder linking storage's headers)
#   build/layer_include/plan/tessera/memory  -> include/tessera/memory
#   build/layer_include/plan/tessera/plan    -> include/tessera/plan
#
# Storage's sub-layers share include/tessera/storage/, so their roots link its headers
# one by one. Every entry of include/tessera belongs to exactly one layer below: a new
# header of storage (or a new file directly in include/tessera) stops the configure until
# it is given one.
#
# Targets: tessera_<layer> is the OBJECT library of a layer; it links the layer just
# below it (usage requirements only: objects of OBJECT libraries are not passed on) and
# its PUBLIC include directory is its root. A layer's test binary compiles against the
# same root and links the shared library through $<LINK_ONLY:tessera> (its objects
# without its include directory), so a test of a layer uses only that layer and below.
# Front ends (cli/) and outside code see include/ whole, as installed; tests/check_layers.sh
# keeps them to api/ and the plan's public face.

# Bottom to top.
set(TESSERA_LAYERS core codecs stores sharding zarr memory plan exec api)
# What each layer adds to the one below it: folders or files of include/tessera.
set(TESSERA_LAYER_HEADERS_core core version.hpp)
set(TESSERA_LAYER_HEADERS_codecs storage/codec.hpp)
set(TESSERA_LAYER_HEADERS_stores storage/store.hpp storage/memory_store.hpp
    storage/s3_store.hpp storage/open_store.hpp
    storage/directory_store.hpp storage/file_ops.hpp)
set(TESSERA_LAYER_HEADERS_sharding storage/shard_index.hpp)
set(TESSERA_LAYER_HEADERS_zarr storage/zarr_array.hpp storage/zarr_metadata.hpp
    storage/zarr_group.hpp)
set(TESSERA_LAYER_HEADERS_memory memory)
set(TESSERA_LAYER_HEADERS_plan plan)
set(TESSERA_LAYER_HEADERS_exec exec)
set(TESSERA_LAYER_HEADERS_api api tessera.hpp)

# tessera_layer_root(LAYER OUT_VAR): the include root of LAYER.
function(tessera_layer_root layer out_var)
  set(${out_var} ${PROJECT_BINARY_DIR}/layer_include/${layer} PARENT_SCOPE)
endfunction()

# Makes every layer's root (called once, at configure time).
function(tessera_make_layer_roots)
  set(headers ${PROJECT_SOURCE_DIR}/include/tessera)
  # Every entry of include/tessera (and of include/tessera/storage) has one layer.
  file(GLOB entries CONFIGURE_DEPENDS RELATIVE ${headers} LIST_DIRECTORIES true
       ${headers}/* ${headers}/storage/*)
  list(REMOVE_ITEM entries storage)
  set(claimed)
  foreach(layer IN LISTS TESSERA_LAYERS)
    list(APPEND claimed ${TESSERA_LAYER_HEADERS_${layer}})
  endforeach()
  foreach(entry IN LISTS entries)
    if(NOT entry IN_LIST claimed)
      message(FATAL_ERROR "include/tessera/${entry} belongs to no layer: add it to one "
                          "TESSERA_LAYER_HEADERS_<layer> in cmake/TesseraLayers.cmake")
    endif()
  endforeach()

  set(visible)
  foreach(layer IN LISTS TESSERA_LAYERS)
    list(APPEND visible ${TESSERA_LAYER_HEADERS_${layer}})
    tessera_layer_root(${layer} root)
    # Links left by an earlier configure go first (a header may have changed layer).
    file(GLOB old LIST_DIRECTORIES true ${root}/tessera/* ${root}/tessera/storage/*)
    foreach(link IN LISTS old)
      if(IS_SYMLINK ${link})
        file(REMOVE ${link})
      endif()
    endforeach()
    file(MAKE_DIRECTORY ${root}/tessera/storage)
    foreach(entry IN LISTS visible)
      if(EXISTS ${headers}/${entry})  # a header a layer claims before it is written
        file(CREATE_LINK ${headers}/${entry} ${root}/tessera/${entry} SYMBOLIC)
      endif()
    endforeach()
  endforeach()
endfunction()

# tessera_layer_target(TARGET LAYER): TARGET (an OBJECT library) is LAYER: it sees LAYER's
# root and links the layer below.
function(tessera_layer_target target layer)
  tessera_layer_root(${layer} root)
  target_include_directories(${target} PUBLIC ${root})
  list(FIND TESSERA_LAYERS ${layer} index)
  if(index GREATER 0)
    math(EXPR below "${index} - 1")
    list(GET TESSERA_LAYERS ${below} below_layer)
    target_link_libraries(${target} PRIVATE tessera_${below_layer})
  endif()
endfunction()

# tessera_layer_test_target(TARGET LAYER): the test binary TARGET of LAYER compiles
# against LAYER's root only (it links tessera with $<LINK_ONLY:tessera>).
# A no-op when TARGET does not exist (TESSERA_BUILD_TESTS=OFF).
function(tessera_layer_test_target target layer)
  if(NOT TARGET ${target})
    return()
  endif()
  tessera_layer_root(${layer} root)
  target_include_directories(${target} PRIVATE ${root})
endfunction()

tessera_make_layer_roots()
