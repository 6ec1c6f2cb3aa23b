#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs what building and testing TensorLisp needs on Debian 12, if it is missing.
set -euo pipefail
packages=(cmake ninja-build g++ catch2 libedit-dev pkg-config llvm-14-dev zlib1g-dev libopenblas0-pthread dataset-fashion-mnist
          lld-14 liblld-14-dev  # link AMDGPU code objects: in process (the library), or by running ld.lld
          fortunes  # examples/char-gpt.lisp trains on its text (/usr/share/games/fortunes)
          clang libclang-rt-14-dev  # clang + libFuzzer: the sanitizer build and tests/fuzz
          clang-format-14  # scripts/format.sh and the format test (tests/format/check.sh)
          nlohmann-json3-dev  # json-read and tokenizer.json (src/text/), header-only
          libicu-dev  # tokenizers: Unicode letter/number classes and pre-tokenizer regexes
          python3  # tests/layering/check.py, tests/models/make_fixtures.py
          graphviz  # graph->svg runs its dot
          libfftw3-single3 libfftw3-double3  # fft, rfft ...: FFTW's kernels on the host (dlopen'ed, src/support/fftw.cpp)
          chromium  # tests/docs/check_manual.py loads the generated manual in headless Chromium
          python3-dev python3-numpy pybind11-dev python3-pytest  # the Python module (src/python/) and its tests
          python3-torch  # the PyTorch references: tests/python/test_against_torch.py, tests/models, bench/
          lua5.4 guile-3.0)  # bench/lisp/run.sh: the Gabriel benchmarks beside CPython, Lua and Guile
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "bootstrap: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
