// SPDX-License-Identifier: Apache-2.0
// The CPU backend as a loadable plugin (libtensorlisp-cpu.so): the same table the core links
// in, exported under the name every backend library exports. It shows, and the tests check,
// that a backend outside the core loads through use-backend like any other.
#include "tensorlisp/backend.h"

extern "C" const tl_backend_api* tl_cpu_backend_entry(uint32_t abi_version);

extern "C" __attribute__((visibility("default"))) const tl_backend_api* tl_backend_entry(uint32_t abi_version) {
  return tl_cpu_backend_entry(abi_version);
}
