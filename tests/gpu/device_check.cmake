# HEARTH_DEVICE_CHECK: the engine without the tokenizer (hearth_engine_core: models, KV cache,
# token ids in, logits out; no snapshots: they need xxhash, which the device machine lacks) and the gpu tests on top of it.
if(NOT HEARTH_HAVE_CUDA)
  message(FATAL_ERROR "HEARTH_DEVICE_CHECK needs the CUDA toolkit (nvcc)")
endif()
file(GLOB HEARTH_ENGINE_CORE_SOURCES CONFIGURE_DEPENDS
     "${PROJECT_SOURCE_DIR}/engine/model/*.cpp" "${PROJECT_SOURCE_DIR}/engine/kv/*.cpp"
     "${PROJECT_SOURCE_DIR}/engine/util/*.cpp")
# The disk cache of packed weights needs xxhash too, and a device backend never uses it.
list(FILTER HEARTH_ENGINE_CORE_SOURCES EXCLUDE REGEX "/engine/model/pack_cache\\.cpp$")
add_library(hearth_engine_core STATIC ${HEARTH_ENGINE_CORE_SOURCES})
target_link_libraries(hearth_engine_core PUBLIC hearth_kernels)
include(${PROJECT_SOURCE_DIR}/tests/gpu/gpu_targets.cmake)
hearth_add_gpu_tests(hearth_engine_core)
