# SPDX-License-Identifier: Apache-2.0
# examples/char-gpt.lisp in bounded form (issue 21): a tiny model for 40 steps on the first
# 100,000 characters of the fortunes corpus must lower its validation loss and write its
# checkpoint, its history and its SVG loss curve; --resume then goes on from step 40 to 50.
# Run with -DTLISP=... -DEXAMPLE=... -DOUT=...; exits 77 (skipped) without the corpus.
if(NOT EXISTS /usr/share/games/fortunes/cookie)
  message("skipped: the fortunes package is not installed (scripts/bootstrap.sh installs it)")
  cmake_language(EXIT 77)
endif()
file(REMOVE ${OUT}.safetensors ${OUT}.json ${OUT}.svg)
set(args --layers 1 --heads 2 --embed 32 --context 32 --batch 8 --limit 100000 --eval-every 20
         --eval-batches 2 --lr 3e-3 --sample 40 --out ${OUT})
execute_process(COMMAND ${TLISP} ${EXAMPLE} --steps 40 ${args}
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "char-gpt failed (status ${rc}):\n${out}\n${err}")
endif()
string(REGEX MATCHALL "step [0-9]+: validation loss [0-9.]+" vals "${out}")
list(LENGTH vals count)
if(count LESS 3)
  message(FATAL_ERROR "expected validation losses at steps 0, 20 and 40, got: ${vals}\n${out}")
endif()
list(GET vals 0 first)
list(GET vals -1 last)
string(REGEX REPLACE ".*loss " "" first "${first}")
string(REGEX REPLACE ".*loss " "" last "${last}")
# CMake's math is integer-only: compare the losses in thousandths.
string(REGEX REPLACE "^([0-9]+)\\.([0-9][0-9][0-9]).*" "\\1\\2" first_milli "${first}")
string(REGEX REPLACE "^([0-9]+)\\.([0-9][0-9][0-9]).*" "\\1\\2" last_milli "${last}")
math(EXPR drop "${first_milli} - ${last_milli}")
if(drop LESS 500)
  message(FATAL_ERROR "the validation loss fell from ${first} to ${last}, less than 0.5:\n${out}")
endif()
foreach(ext safetensors json svg)
  if(NOT EXISTS ${OUT}.${ext})
    message(FATAL_ERROR "char-gpt did not write ${OUT}.${ext}:\n${out}")
  endif()
endforeach()
file(READ ${OUT}.svg svg)
if(NOT svg MATCHES "<svg .*<polyline .*<polyline .*</svg>")
  message(FATAL_ERROR "${OUT}.svg has no train and validation curves:\n${svg}")
endif()
if(NOT out MATCHES "--- sample ---\n")
  message(FATAL_ERROR "no generated sample:\n${out}")
endif()
execute_process(COMMAND ${TLISP} ${EXAMPLE} --steps 50 --resume ${args}
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT out MATCHES "resumed from .* at step 40\n"
   OR NOT out MATCHES "trained 50 steps \\(10 this run\\)")
  message(FATAL_ERROR "char-gpt --resume (status ${rc}):\n${out}\n${err}")
endif()
message("validation loss ${first} -> ${last}; resumed to step 50")
