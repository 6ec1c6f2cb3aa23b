# SPDX-License-Identifier: Apache-2.0
# Runs TLISP on SCRIPT and compares its standard output with SCRIPT's .expected file.
get_filename_component(dir ${SCRIPT} DIRECTORY)
get_filename_component(name ${SCRIPT} NAME_WE)
set(expected_file ${dir}/${name}.expected)
execute_process(COMMAND ${TLISP} ${SCRIPT} WORKING_DIRECTORY ${dir}
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${name}.lisp exited with ${rc}\nstdout:\n${out}\nstderr:\n${err}")
endif()
if(NOT EXISTS ${expected_file})
  message(FATAL_ERROR "missing ${expected_file}; the script printed:\n${out}")
endif()
file(READ ${expected_file} expected)
if(NOT out STREQUAL expected)
  file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/${name}.actual "${out}")
  message(FATAL_ERROR "${name}.lisp: output differs from ${name}.expected\n--- expected\n${expected}\n--- actual\n${out}")
endif()
