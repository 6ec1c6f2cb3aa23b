# SPDX-License-Identifier: Apache-2.0
# Runs TLISP on SCRIPT, which must fail. Each line of the script's header of the form
#   ;; expect: TEXT
# must appear in its standard error (locations are written as they print: name.lisp:LINE:COL).
get_filename_component(dir ${SCRIPT} DIRECTORY)
get_filename_component(name ${SCRIPT} NAME)
execute_process(COMMAND ${TLISP} ${name} WORKING_DIRECTORY ${dir}
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(rc EQUAL 0)
  message(FATAL_ERROR "${name} was expected to fail but exited 0\nstdout:\n${out}")
endif()
file(STRINGS ${SCRIPT} expectations REGEX "^;; expect: ")
if(NOT expectations)
  message(FATAL_ERROR "${name} has no ';; expect:' lines")
endif()
foreach(line ${expectations})
  string(REGEX REPLACE "^;; expect: " "" text "${line}")
  string(FIND "${err}" "${text}" pos)
  if(pos EQUAL -1)
    message(FATAL_ERROR "${name}: stderr lacks \"${text}\"\nstderr:\n${err}")
  endif()
endforeach()
