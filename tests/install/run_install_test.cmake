# SPDX-License-Identifier: Apache-2.0
# Installs the build into a scratch prefix, then configures, builds and runs tests/install
# against it with find_package(TensorLisp).
set(prefix ${WORK}/prefix)
file(REMOVE_RECURSE ${WORK})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD} --prefix ${prefix}
                RESULT_VARIABLE rc OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install failed (${rc})")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SRC} -B ${WORK}/host -G Ninja
                        -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_C_COMPILER=${CC}
                        -DCMAKE_CXX_FLAGS=${FLAGS} -DCMAKE_C_FLAGS=${FLAGS} -DCMAKE_EXE_LINKER_FLAGS=${FLAGS}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configuring the host project failed:\n${out}\n${err}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK}/host RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "building the host project failed:\n${out}\n${err}")
endif()
execute_process(COMMAND ${WORK}/host/host RESULT_VARIABLE rc OUTPUT_VARIABLE out)
if(NOT rc EQUAL 0 OR NOT out MATCHES "installed tensorlisp says 55")
  message(FATAL_ERROR "the host program failed (${rc}): ${out}")
endif()
execute_process(COMMAND ${WORK}/host/host_c RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "installed tensorlisp says 385 from C")
  message(FATAL_ERROR "the C host program failed (${rc}): ${out}${err}")
endif()
# The installed Python package, when the build has one (PYTHON and PYTHON_DIR are set).
if(PYTHON)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env PYTHONPATH=${prefix}/${PYTHON_DIR}
                          ${PYTHON} -c "import tensorlisp; print('installed python module at', tensorlisp.__file__, 'says', tensorlisp.Interpreter().eval('(* 6 7)'))"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR NOT out MATCHES "installed python module at ${prefix}.* says 42")
    message(FATAL_ERROR "the installed Python module failed (${rc}): ${out}${err}")
  endif()
endif()
