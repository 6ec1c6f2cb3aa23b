# SPDX-License-Identifier: Apache-2.0
# tlisp compile, end to end: compiles the functions of model.lisp ahead of time, computes the
# same functions in the interpreter (reference.lisp), links the objects into check.c with the
# C compiler alone (no TensorLisp library) and runs it. Variables: TLISP, CC, SRC (this
# folder), WORK (a scratch folder), FLAGS (extra C compiler and linker flags).
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
function(run)
  execute_process(COMMAND ${ARGN} WORKING_DIRECTORY ${WORK} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " cmd "${ARGN}")
    message(FATAL_ERROR "${cmd} failed (${rc}):\n${out}${err}")
  endif()
  message(STATUS "${out}${err}")
endfunction()
# PREFIX ENTRY SHAPES [more tlisp compile arguments]
function(compile prefix entry shapes)
  run(${TLISP} compile ${SRC}/model.lisp --entry ${entry} --shapes ${shapes} -o ${WORK}/${prefix} ${ARGN})
endfunction()
compile(mlp mlp-forward 4x784)
compile(mlp_generic mlp-forward 4x784 --cpu x86-64 --name mlp_generic)
compile(more logits-and-more 4x784)
compile(linreg linreg-step 32x8,32x1)
compile(linreg_w linreg-step 32x8,32x1 --weights arguments --name linreg_w)
compile(embed embed-sum 5:i32)
compile(f64 f64-poly 3x3:f64)
compile(int int-ops 6:i32)
run(${TLISP} ${SRC}/reference.lisp ${WORK} ${SRC}/model.lisp)
separate_arguments(flags UNIX_COMMAND "${FLAGS}")
file(GLOB objects ${WORK}/*.o)
run(${CC} -std=c11 -Wall -Wextra -Werror -I${WORK} ${flags} ${SRC}/check.c ${objects} -lm -o ${WORK}/check)
run(${WORK}/check ${WORK} ${WORK})
