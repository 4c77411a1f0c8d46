# Writes OUT (generated/core/version.h) from IN at every build, so the commit it records is the
# one the binary is built from (not the one the build tree was configured at). configure_file
# leaves OUT untouched when nothing changed, so an unchanged commit recompiles nothing.
#   cmake -DSRC=<source dir> -DIN=<version.h.in> -DOUT=<version.h> -DPROJECT_VERSION=<x.y.z> -P write_version.cmake
execute_process(COMMAND git rev-parse --short=12 HEAD WORKING_DIRECTORY ${SRC}
                OUTPUT_VARIABLE ATTNLAB_GIT_COMMIT OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT ATTNLAB_GIT_COMMIT)
  set(ATTNLAB_GIT_COMMIT "unknown")
else()
  # Uncommitted changes to tracked files: the binary is not exactly that commit.
  execute_process(COMMAND git diff --quiet HEAD -- WORKING_DIRECTORY ${SRC} RESULT_VARIABLE dirty ERROR_QUIET)
  if(dirty EQUAL 1)
    string(APPEND ATTNLAB_GIT_COMMIT "-dirty")
  endif()
endif()
configure_file(${IN} ${OUT} @ONLY)
