# The training run of PTXFORGE_PGO (CMakeLists.txt): an instrumented
# ptx-dump prints every registry kernel's PTX for each training target, and
# its counters go to PROFILE_DIR. Run with cmake -P:
#   -DPTX_DUMP=<instrumented ptx-dump> -DPROFILE_DIR=<dir> -DSTAMP=<file>
#   -DTARGETS=<sm_80,sm_90> -DWORK_DIR=<dir for the printed PTX>
# The profile is made again only when ptx-dump is newer than STAMP (it was
# relinked: a library source changed), so that a build with nothing changed
# does not recompile the library. STAMP is written last: a failed run leaves
# the old stamp, and the next build trains again.
cmake_policy(VERSION 3.20)
foreach(var PTX_DUMP PROFILE_DIR STAMP TARGETS WORK_DIR)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "pgo_train.cmake: ${var} is not set")
  endif()
endforeach()
if(NOT EXISTS "${PTX_DUMP}")
  message(FATAL_ERROR "pgo_train.cmake: the instrumented ptx-dump ${PTX_DUMP} does not exist")
endif()
if(EXISTS "${STAMP}" AND "${STAMP}" IS_NEWER_THAN "${PTX_DUMP}")
  return()
endif()

# Counters from an older ptx-dump would be merged into the new ones (and
# those of changed functions refused): start from none.
file(REMOVE_RECURSE "${PROFILE_DIR}")
file(MAKE_DIRECTORY "${PROFILE_DIR}" "${WORK_DIR}")
execute_process(COMMAND "${PTX_DUMP}" --list OUTPUT_VARIABLE listing RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "pgo_train.cmake: ${PTX_DUMP} --list failed (${rc})")
endif()
string(REGEX MATCHALL "(^|\n)[^\t\n]+" names "${listing}")
string(REPLACE "," ";" targets "${TARGETS}")
set(runs 0)
foreach(target IN LISTS targets)
  foreach(name IN LISTS names)
    string(STRIP "${name}" name)
    execute_process(COMMAND "${PTX_DUMP}" "${name}" "--target=${target}" -o "${WORK_DIR}/kernel.ptx"
                    RESULT_VARIABLE rc ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "pgo_train.cmake: ptx-dump ${name} --target=${target} failed (${rc}): ${err}")
    endif()
    math(EXPR runs "${runs} + 1")
  endforeach()
endforeach()
if(runs EQUAL 0)
  message(FATAL_ERROR "pgo_train.cmake: ptx-dump --list named no kernel to train on")
endif()
file(GLOB_RECURSE profiles "${PROFILE_DIR}/*.gcda")
if(NOT profiles)
  message(FATAL_ERROR "pgo_train.cmake: ${runs} runs of ptx-dump wrote no profile to ${PROFILE_DIR} "
                      "(was it built with -fprofile-generate?)")
endif()
list(LENGTH profiles count)
message(STATUS "ptxforge PGO: ${runs} ptx-dump runs, ${count} profiles in ${PROFILE_DIR}")
file(TOUCH "${STAMP}")
