// SPDX-License-Identifier: Apache-2.0
// Device selection for an interpreter (see devices.cpp).
#pragma once

#include <memory>
#include <string>

#include "eval/interp.h"

#include "runtime/jit.h"


namespace tl::api {

// Makes `name` the device that realizes tensors: "ref" for the reference executor, else a
// backend loaded from `library` ("builtin" for the CPU). Throws ConditionError
// (device-error) when the backend cannot be loaded. `spec`: its runtime file's limits and
// search space, and whether to tune kernels over it.
void use_device(eval::Interp& in, const std::string& name, const std::string& library, const std::string& options,
                runtime::DeviceSpec spec = {});

void register_device_builtins(eval::Interp& in);

// (jit f): %make-capture and %capture-call (capture.cpp).
void register_capture_builtins(eval::Interp& in);

// tlisp compile's builtin, %compile-function (aot.cpp).
void register_aot_builtins(eval::Interp& in);

// The current JIT device, or null when tensors are realized by the reference executor.
std::shared_ptr<runtime::JitDevice> current_jit(eval::Interp& in);

}  // namespace tl::api
