# Whether the training build's profiles (PTXFORGE_PGO) are named for this
# build's objects: GCC looks for <PROFILE_DIR>/<object path below
# BUILD_DIR, '/' as '#', .o as .gcda> and, with -Wno-missing-profile,
# compiles an object it finds none for as without profile feedback, saying
# nothing. Objects the training's ptx-dump did not link have none; a
# profile that names no object of this build means the two builds name them
# apart. Run with cmake -P:
#   -DOBJECTS=<absolute object paths, separated by |> -DBUILD_DIR=<dir>
#   -DPROFILE_DIR=<dir> [-DFILTER=<regex>: only profiles whose names match]
# Fails when there is no profile or one names no object.
cmake_policy(VERSION 3.20)
foreach(var OBJECTS BUILD_DIR PROFILE_DIR)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "pgo_check.cmake: ${var} is not set")
  endif()
endforeach()
string(REPLACE "|" ";" objects "${OBJECTS}")
set(expected "")
foreach(object IN LISTS objects)
  file(RELATIVE_PATH relative "${BUILD_DIR}" "${object}")
  string(REPLACE "/" "#" name "${relative}")
  string(REGEX REPLACE "\\.o$" ".gcda" name "${name}")
  list(APPEND expected "${name}")
endforeach()
file(GLOB profiles RELATIVE "${PROFILE_DIR}" "${PROFILE_DIR}/*.gcda")
if(DEFINED FILTER)
  list(FILTER profiles INCLUDE REGEX "${FILTER}")
endif()
if(NOT profiles)
  message(FATAL_ERROR "pgo_check.cmake: no profile in ${PROFILE_DIR}")
endif()
set(strays "")
foreach(profile IN LISTS profiles)
  if(NOT profile IN_LIST expected)
    list(APPEND strays "${profile}")
  endif()
endforeach()
if(strays)
  list(LENGTH strays count)
  list(GET strays 0 first)
  message(FATAL_ERROR "pgo_check.cmake: ${count} profile(s) in ${PROFILE_DIR} name no object of ${BUILD_DIR}, such as ${first}")
endif()
list(LENGTH profiles used)
list(LENGTH expected all)
message(STATUS "pgo_check.cmake: ${used} of the library's ${all} objects have a profile")
