# SPDX-License-Identifier: Apache-2.0
# Drives the tlisp command: the REPL through a pipe (multi-line input, an error that leaves the
# session alive, definitions kept), -e, --version and a script's exit status.
set(input "(defun sq (x)\n  (* x x))\n(sq 7)\n(car 5)\n(sq 8)\n\"still alive\"\n")
execute_process(COMMAND ${TLISP} INPUT_FILE /dev/null OUTPUT_VARIABLE ignore)
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/repl_input.txt "${input}")
execute_process(COMMAND ${TLISP} INPUT_FILE ${CMAKE_CURRENT_BINARY_DIR}/repl_input.txt
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
set(expected_out "sq\n49\n64\n\"still alive\"\n")
if(NOT out STREQUAL expected_out)
  message(FATAL_ERROR "REPL output:\n${out}\nexpected:\n${expected_out}\nstderr:\n${err}")
endif()
string(FIND "${err}" "<repl>:4:1: eval error: car: argument 1 must be a list, got 5 (integer)" pos)
if(pos EQUAL -1)
  message(FATAL_ERROR "REPL error report missing or wrong:\n${err}")
endif()

# Every value is printed, nil too (issue 25).
execute_process(COMMAND ${TLISP} -e "(+ 1 2)" -e "(list 'a \"b\")" -e "(car nil)" OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT out STREQUAL "3\n(a \"b\")\nnil\n")
  message(FATAL_ERROR "tlisp -e printed:\n${out}(rc ${rc})")
endif()

execute_process(COMMAND ${TLISP} --version OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT out MATCHES "^tlisp [0-9]+\\.[0-9]+\\.[0-9]+")
  message(FATAL_ERROR "tlisp --version printed: ${out}")
endif()

execute_process(COMMAND ${TLISP} -e "(exit 3)" RESULT_VARIABLE rc)
if(NOT rc EQUAL 3)
  message(FATAL_ERROR "(exit 3) gave status ${rc}")
endif()

execute_process(COMMAND ${TLISP} -e "(car 1)" ERROR_VARIABLE err RESULT_VARIABLE rc)
if(rc EQUAL 0)
  message(FATAL_ERROR "an error in -e must give a non-zero status")
endif()
