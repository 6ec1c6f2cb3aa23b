# SPDX-License-Identifier: Apache-2.0
# examples/aot as its comments say to use it: tlisp compile, cc, run. Variables: TLISP, CC,
# EXAMPLE (examples/aot), WORK, FLAGS.
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
separate_arguments(flags UNIX_COMMAND "${FLAGS}")
foreach(step
    "${TLISP};compile;${EXAMPLE}/rings.lisp;--entry;classify;--shapes;1x2;-o;${WORK}/rings"
    "${CC};-std=c11;-Wall;-Wextra;-Werror;-I${WORK};${flags};${EXAMPLE}/main.c;${WORK}/rings.o;-lm;-o;${WORK}/rings"
    "${WORK}/rings;0.1;0.2;1.5;-0.3;0;-2;-0.5;0.4")
  execute_process(COMMAND ${step} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message(STATUS "${out}${err}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${step}")
  endif()
endforeach()
if(NOT out MATCHES "\\(0.1, 0.2\\): inside.*\\(1.5, -0.3\\): ring.*\\(0, -2\\): ring.*\\(-0.5, 0.4\\): inside")
  message(FATAL_ERROR "the compiled classifier got a point wrong:\n${out}")
endif()
