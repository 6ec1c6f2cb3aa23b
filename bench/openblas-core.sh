# SPDX-License-Identifier: Apache-2.0
# Sourced by the benchmarks that run PyTorch or NumPy next to TensorLisp: chooses OpenBLAS's
# kernels so that the reference is as fast as the machine allows.
#
# Debian 12's OpenBLAS (0.3.21, DYNAMIC_ARCH) picks its kernels from the CPU's model number. A
# virtual CPU it does not know (e.g. "Intel(R) Xeon(R) Processor" on Sapphire Rapids) gets
# Prescott, its generic SSE3 kernels: fp32 matmul at 32 GFLOP/s on one thread where the
# SkylakeX kernels reach 200. When that happens this sets OPENBLAS_CORETYPE from the CPU's
# flags (AVX-512 F/BW/DQ/VL: SkylakeX; AVX2 and FMA: Haswell) and says so on stderr; a core
# OpenBLAS detected itself is kept. An OPENBLAS_CORETYPE from the environment is dropped first
# (set to Haswell, it would keep OpenBLAS off its AVX-512 kernels).
openblas_core() {
  local python="${1:-/usr/bin/python3}" detected flags core
  unset OPENBLAS_CORETYPE
  if ! [ -x "$python" ]; then return 0; fi
  detected=$(OPENBLAS_VERBOSE=2 "$python" -c 'import numpy; numpy.ones((8, 8)) @ numpy.ones((8, 8))' 2>&1 |
               sed -n 's/^Core: //p' | head -1)
  case "$detected" in
    Prescott | Core2 | Katmai | Coppermine | Northwood | Penryn | Dunnington | Nehalem | Atom | "") ;;
    *) return 0 ;;
  esac
  flags=$(grep -m1 '^flags' /proc/cpuinfo)
  core=""
  if [[ " $flags " == *" avx512f "* && " $flags " == *" avx512bw "* && " $flags " == *" avx512dq "* &&
        " $flags " == *" avx512vl "* ]]; then
    core=SkylakeX
  elif [[ " $flags " == *" avx2 "* && " $flags " == *" fma "* ]]; then
    core=Haswell
  fi
  if [ -n "$core" ]; then
    export OPENBLAS_CORETYPE=$core
    echo "reference BLAS: OpenBLAS detected ${detected:-no core} on this CPU; using its $core kernels (OPENBLAS_CORETYPE)" >&2
  fi
}
