# ptxforge_add_library(NAME SOURCES... DEPS ...): one layer of ptxforge as a static library.
# Headers are included as "ir/types.h" from the source tree and
# <ptxforge/ir/types.h>-relative ("ir/types.h" under include/ptxforge) once installed.
function(ptxforge_add_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/ptxforge>)
  target_compile_features(${name} PUBLIC cxx_std_20)
  target_compile_options(${name} PRIVATE ${PTXFORGE_WARNINGS})
  target_link_libraries(${name} PUBLIC ${ARG_DEPS})
  # Profile feedback (PTXFORGE_PGO in the top CMakeLists.txt): after the
  # training run, and compiled again whenever it made a new profile.
  if(PTXFORGE_PGO_USE_FLAGS)
    target_compile_options(${name} PRIVATE ${PTXFORGE_PGO_USE_FLAGS})
    add_dependencies(${name} ptxforge_pgo_training)
    set_property(SOURCE ${ARG_SOURCES} APPEND PROPERTY OBJECT_DEPENDS ${PTXFORGE_PGO_STAMP})
  endif()
endfunction()
