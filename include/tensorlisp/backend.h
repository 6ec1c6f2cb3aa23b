/* SPDX-License-Identifier: Apache-2.0 */
/* The backend C ABI. A backend is a shared library exporting
 *
 *   const tl_backend_api* tl_backend_entry(uint32_t abi_version);
 *
 * which returns its function table for that ABI version (NULL when it does not support it).
 * The JIT compiles kernels to code for the backend's target (an object file for the CPU, PTX
 * for CUDA, a code object for HIP) and drives the device only through this table. Every
 * function that can fail returns 0 on success and otherwise writes a message of at most
 * `err_size` bytes (NUL-terminated) into `err`. */
#ifndef TENSORLISP_BACKEND_H
#define TENSORLISP_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "tensorlisp/dtype.h" /* TL_DTYPE_*: element types, as external kernels are told them */

#ifdef __cplusplus
extern "C" {
#endif

#define TL_BACKEND_ABI_VERSION 1u

/* What launch returns when it stopped early because the host's cancel function (set_cancel)
 * said so: not a failure, but its outputs are partly written and must not be used. */
#define TL_STATUS_CANCELLED 2

/* What launch returns when an external kernel found its input unfit for it (a singular matrix
 * for a solve, one that is not positive definite for a Cholesky factorization): the message
 * in err names the operation and the reason, and the host signals a value-error with it
 * rather than a device-error. */
#define TL_STATUS_VALUE_ERROR 3

typedef struct tl_device_info {
  char name[128];          /* e.g. "AMD EPYC 9R45 (2 threads)" or "NVIDIA H100" */
  uint64_t memory_bytes;   /* device memory (host memory for the CPU) */
  int32_t compute_units;   /* cores or multiprocessors */
  int32_t host_memory;     /* 1 when device pointers are host pointers (no copies needed) */
  /* The code the JIT compiles for it: "" or "host" for the host CPU (an object file),
   * "nvptx:sm_XX" for PTX of that compute capability, "amdgcn:gfxNNN" for an AMDGPU code
   * object. Added in ABI 1 at the end: a caller zeroes the struct before asking. */
  char target[64];
} tl_device_info;

/* How a kernel runs: `count` iterations of its parallel loop, each doing about `work`
 * element operations (a hint for splitting the iterations across threads or blocks). A GPU
 * kernel's iterations are its threads when `group` is 0: the backend launches at least
 * `count` of them, in blocks of a size it picks. When `group` is not 0, each iteration is one
 * block of exactly `group` threads that work on it together (they share memory and meet at
 * barriers): the backend launches `count` such blocks. A GPU entry point takes its arguments
 * as kernel parameters, in order: one pointer per buffer, one int64 per var, then begin (0)
 * and end (count) as int64; it runs iterations begin + the block's first iteration onward.
 * `group` was added in ABI 1 at the end; CPU kernels always have 0. `block`, added after it,
 * asks for blocks of that many threads for a kernel without groups (the JIT's tuner tries
 * the runtime file's :search sizes); 0 leaves the size to the backend. */
typedef struct tl_launch {
  int64_t count;
  int64_t work;
  int64_t group;
  int64_t block;
} tl_launch;

typedef struct tl_backend_api {
  uint32_t abi_version;    /* TL_BACKEND_ABI_VERSION */
  uint32_t struct_size;    /* sizeof(tl_backend_api) */
  const char* name;        /* "cpu", "cuda", ... */

  /* A device context. `options` is a string of key=value pairs separated by spaces
   * (e.g. "threads=4"), possibly empty. */
  void* (*create)(const char* options, char* err, size_t err_size);
  void (*destroy)(void* ctx);
  int (*device_info)(void* ctx, tl_device_info* out, char* err, size_t err_size);

  /* Device memory. alloc returns NULL (with a message) when out of memory. */
  void* (*alloc)(void* ctx, size_t bytes, char* err, size_t err_size);
  void (*free)(void* ctx, void* ptr);
  int (*copy_in)(void* ctx, void* dst, const void* host_src, size_t bytes, char* err, size_t err_size);
  int (*copy_out)(void* ctx, void* host_dst, const void* src, size_t bytes, char* err, size_t err_size);

  /* Loads compiled code and returns a kernel handle for its function `entry`, or NULL. */
  void* (*compile)(void* ctx, const void* code, size_t code_size, const char* entry, char* err, size_t err_size);
  void (*release_kernel)(void* ctx, void* kernel);

  /* Runs a kernel on buffers (device pointers) and symbolic sizes. */
  int (*launch)(void* ctx, void* kernel, void* const* buffers, size_t buffer_count, const int64_t* vars,
                size_t var_count, const tl_launch* launch, char* err, size_t err_size);
  int (*synchronize)(void* ctx, char* err, size_t err_size);
  /* An external kernel by name (e.g. "sgemm"), run by launch like a compiled one, or NULL
   * with a message when the backend has none. Its buffers are the output then the sources,
   * each contiguous; its vars describe them in the same order: for each, its dtype (a
   * TL_DTYPE_* code), its rank, then its sizes. launch fails with a message when they are not
   * what the kernel computes. Added in ABI 1 at the end of the table: a caller checks
   * struct_size before using it, and a backend may leave it NULL. */
  void* (*find_extern)(void* ctx, const char* name, char* err, size_t err_size);

  /* Device time. record_event marks the point in the device's queue of work after
   * everything launched so far (a CUDA or HIP event) and returns a handle, or NULL with a
   * message; event_seconds waits until the work before `end` is done and writes the seconds
   * the device took from `start` to `end`; release_event frees a handle. Added in ABI 1 at
   * the end of the table: a caller checks struct_size, and a backend may leave them NULL
   * (the JIT then times on the host, up to a synchronize). */
  void* (*record_event)(void* ctx, char* err, size_t err_size);
  int (*event_seconds)(void* ctx, void* start, void* end, double* seconds, char* err, size_t err_size);
  void (*release_event)(void* ctx, void* event);

  /* Cancellation (Ctrl-C inside a long kernel). set_cancel gives the backend a function that
   * returns nonzero once the host wants the running launch stopped; the backend may call it
   * with `user`, from any of its threads, while a launch runs, and when it says so stop
   * handing out work, wait for what is running and return TL_STATUS_CANCELLED from launch.
   * A NULL `cancelled` turns it off. The host calls it when no launch runs. Added in ABI 1 at
   * the end of the table: a caller checks struct_size, and a backend may leave it NULL (its
   * launches then run to their end, and the host stops between them). */
  void (*set_cancel)(void* ctx, int (*cancelled)(void* user), void* user);
} tl_backend_api;

typedef const tl_backend_api* (*tl_backend_entry_fn)(uint32_t abi_version);

#ifdef __cplusplus
}
#endif

#endif /* TENSORLISP_BACKEND_H */
