# Profile feedback (PTXFORGE_PGO, top CMakeLists.txt).

# CMake wraps a script's error message at spaces: a regex for `text` that
# takes a space or a line break (and the indent after it) between words;
# @PATH@ in `text` stands for a path (no space).
function(ptxforge_wrapped_regex out text)
  string(REPLACE " " "[ \n]+" regex "${text}")
  string(REPLACE "@PATH@" "[^ \n]*" regex "${regex}")
  set(${out} "${regex}" PARENT_SCOPE)
endfunction()

# The training build's profiles of the library's objects are named for this
# build's objects (-fprofile-prefix-path). Were they named apart, GCC would
# compile the library as without profile feedback and say nothing
# (-Wno-missing-profile).
if(PTXFORGE_PGO_USE_FLAGS)
  set(_pgo_objects "")
  foreach(lib ptxforge_ir ptxforge_builder ptxforge_passes ptxforge_emit ptxforge_kernels ptxforge_runtime)
    list(APPEND _pgo_objects "$<TARGET_OBJECTS:${lib}>")
  endforeach()
  add_test(NAME "pgo:the profiles name the library's objects"
           COMMAND ${CMAKE_COMMAND} "-DOBJECTS=$<JOIN:${_pgo_objects},|>" -DBUILD_DIR=${PROJECT_BINARY_DIR}
                   -DPROFILE_DIR=${PROJECT_BINARY_DIR}/pgo/profile
                   "-DFILTER=CMakeFiles#ptxforge_(ir|builder|passes|emit|kernels|runtime)[.]dir#"
                   -P ${PROJECT_SOURCE_DIR}/cmake/pgo_check.cmake)
  ptxforge_wrapped_regex(_pgo_ok "pgo_check.cmake: [0-9]+ of the library's [0-9]+ objects have a profile")
  set_tests_properties("pgo:the profiles name the library's objects" PROPERTIES PASS_REGULAR_EXPRESSION "${_pgo_ok}"
                       FAIL_REGULAR_EXPRESSION "CMake Error")
endif()

# The scripts' errors name what is wrong (they stop the build).
set(_pgo_scratch ${PROJECT_BINARY_DIR}/pgo-test)
add_test(NAME "pgo:the training run refuses a missing ptx-dump"
         COMMAND ${CMAKE_COMMAND} -DPTX_DUMP=${_pgo_scratch}/no-such-ptx-dump -DPROFILE_DIR=${_pgo_scratch}/profile
                 -DSTAMP=${_pgo_scratch}/stamp -DTARGETS=sm_80 -DWORK_DIR=${_pgo_scratch}
                 -P ${PROJECT_SOURCE_DIR}/cmake/pgo_train.cmake)
ptxforge_wrapped_regex(_pgo_missing "pgo_train.cmake: the instrumented ptx-dump @PATH@/pgo-test/no-such-ptx-dump does not exist")
set_tests_properties("pgo:the training run refuses a missing ptx-dump" PROPERTIES PASS_REGULAR_EXPRESSION "${_pgo_missing}")
if(TARGET ptx-dump)
  # This build's ptx-dump is not instrumented: it runs every kernel and
  # writes no profile.
  add_test(NAME "pgo:the training run refuses a ptx-dump that writes no profile"
           COMMAND ${CMAKE_COMMAND} -DPTX_DUMP=$<TARGET_FILE:ptx-dump> -DPROFILE_DIR=${_pgo_scratch}/profile
                   -DSTAMP=${_pgo_scratch}/stamp -DTARGETS=sm_80 -DWORK_DIR=${_pgo_scratch}
                   -P ${PROJECT_SOURCE_DIR}/cmake/pgo_train.cmake)
  ptxforge_wrapped_regex(_pgo_none
    "pgo_train.cmake: [0-9]+ runs of ptx-dump wrote no profile to @PATH@/pgo-test/profile \\(was it built with -fprofile-generate\\?\\)")
  set_tests_properties("pgo:the training run refuses a ptx-dump that writes no profile" PROPERTIES
                       PASS_REGULAR_EXPRESSION "${_pgo_none}")
endif()
add_test(NAME "pgo:the profile check refuses profiles named for no object"
         COMMAND ${CMAKE_COMMAND} -DOBJECTS=${_pgo_scratch}/ir/verify.cc.o -DBUILD_DIR=${_pgo_scratch}
                 -DPROFILE_DIR=${PROJECT_SOURCE_DIR}/test/testdata/pgo -P ${PROJECT_SOURCE_DIR}/cmake/pgo_check.cmake)
ptxforge_wrapped_regex(_pgo_stray
  "pgo_check.cmake: 1 profile\\(s\\) in @PATH@/test/testdata/pgo name no object of @PATH@/pgo-test, such as #abs#ir#verify.cc.gcda")
set_tests_properties("pgo:the profile check refuses profiles named for no object" PROPERTIES
                     PASS_REGULAR_EXPRESSION "${_pgo_stray}")
