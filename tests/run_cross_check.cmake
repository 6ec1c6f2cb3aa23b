# SPDX-License-Identifier: Apache-2.0
# Code generation for the GPUs this machine lacks: runs the tensor test scripts on the CPU
# with TENSORLISP_CROSS_TARGETS set, so each kernel the suite makes is also lowered for a GPU
# and compiled to PTX (sm_80) and to an AMDGPU code object (gfx90a); then
#  - every PTX file must pass ptxas (the CUDA toolkit's assembler; skipped, saying so, when it
#    is not installed),
#  - every code object must be an AMDGPU ELF shared object (llvm-readelf) for gfx90a that
#    defines its kernel and the kernel's descriptor,
#  - no kernel may have failed to compile for either target.
# Arguments: TLISP, SCRIPTS_DIR, SCRIPTS (a glob in it), WORK, and SCRIPT_ARGS (a list passed
# to each script; may be empty).
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
file(GLOB scripts ${SCRIPTS_DIR}/${SCRIPTS})
list(SORT scripts)
foreach(script ${scripts})
  execute_process(COMMAND ${CMAKE_COMMAND} -E env TENSORLISP_CROSS_TARGETS=nvptx:sm_80,amdgcn:gfx90a
                          TENSORLISP_CROSS_DIR=${WORK} TENSORLISP_CACHE=${WORK}/cache ${TLISP} ${script} ${SCRIPT_ARGS}
                  WORKING_DIRECTORY ${SCRIPTS_DIR} RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${script} failed while cross-compiling:\n${err}")
  endif()
  if(err MATCHES "cross-compiling")
    message(FATAL_ERROR "${script}: a kernel could not be lowered for a GPU:\n${err}")
  endif()
endforeach()

set(failures "")
file(GLOB errors ${WORK}/*/*.error)
foreach(e ${errors})
  file(READ ${e} text)
  string(APPEND failures "${e}:\n${text}\n")
endforeach()

# PTX
file(GLOB ptx_files ${WORK}/nvptx64/*.ptx)
list(LENGTH ptx_files ptx_count)
find_program(PTXAS ptxas HINTS $ENV{TENSORLISP_PTXAS_DIR} $ENV{CUDA_HOME}/bin /usr/local/cuda/bin)
if(PTXAS)
  # One file a run: ptxas given several files at once sometimes crashes or never ends
  # (CUDA 13), where each file alone assembles.
  foreach(f ${ptx_files})
    execute_process(COMMAND ${PTXAS} -arch=sm_80 ${f} -o ${WORK}/out.cubin RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_QUIET)
    if(NOT rc EQUAL 0)
      string(APPEND failures "ptxas rejects ${f}:\n${err}\n")
    endif()
  endforeach()
  set(ptx_note "${ptx_count} PTX kernels pass ptxas -arch=sm_80")
else()
  set(ptx_note "${ptx_count} PTX kernels emitted; ptxas not found (install the CUDA toolkit), not assembled")
endif()

# AMDGPU code objects
file(GLOB hsaco_files ${WORK}/amdgcn/*.hsaco)
list(LENGTH hsaco_files hsaco_count)
find_program(READELF NAMES llvm-readelf llvm-readelf-14 HINTS /usr/lib/llvm-14/bin)
if(NOT READELF)
  message(FATAL_ERROR "llvm-readelf not found (apt install llvm-14)")
endif()
# llvm-readelf reads a hundred files a run (each start costs 25 ms); its output has a part
# for each, from "File: PATH".
function(check_code_objects files)
  execute_process(COMMAND ${READELF} -h -s ${files} OUTPUT_VARIABLE out RESULT_VARIABLE rc ERROR_VARIABLE err)
  set(found "")
  foreach(f ${files})
    get_filename_component(name ${f} NAME_WE)
    string(FIND "${out}" "File: ${f}\n" start)
    set(part "")
    if(NOT start EQUAL -1)
      string(SUBSTRING "${out}" ${start} -1 part)
      string(FIND "${part}" "\nFile: " next)
      if(NOT next EQUAL -1)
        string(SUBSTRING "${part}" 0 ${next} part)
      endif()
    endif()
    if(NOT part MATCHES "Type: +DYN" OR NOT part MATCHES "Machine: +EM_AMDGPU"
       OR NOT part MATCHES "Flags: +0x[0-9A-Fa-f]*3[Ff]\n" OR NOT part MATCHES "FUNC +GLOBAL +[A-Z]+ +[0-9]+ ${name}\n"
       OR NOT part MATCHES "OBJECT +GLOBAL +[A-Z]+ +[0-9]+ ${name}\\.kd\n")
      string(APPEND found "${f} is not a gfx90a code object defining ${name}:\n${part}${err}\n")
    endif()
  endforeach()
  set(failures "${failures}${found}" PARENT_SCOPE)
endfunction()
set(batch "")
foreach(f ${hsaco_files} "")
  if(NOT f STREQUAL "")
    list(APPEND batch ${f})
  endif()
  list(LENGTH batch n)
  if(n EQUAL 100 OR (f STREQUAL "" AND n GREATER 0))
    check_code_objects("${batch}")
    set(batch "")
  endif()
endforeach()

if(ptx_count EQUAL 0 OR hsaco_count EQUAL 0)
  string(APPEND failures "no kernels were cross-compiled (${ptx_count} PTX, ${hsaco_count} code objects)\n")
endif()
if(NOT failures STREQUAL "")
  message(FATAL_ERROR "${failures}")
endif()
message("${ptx_note}; ${hsaco_count} AMDGPU code objects for gfx90a are valid")
