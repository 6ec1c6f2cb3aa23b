/* SPDX-License-Identifier: Apache-2.0 */
/* The C API of TensorLisp: embed the interpreter in a program written in C, or in any language
 * with a C foreign-function interface (the Python module is built on it).
 *
 *   #include <tensorlisp/tensorlisp.h>
 *
 *   tl_interp_t* lisp = tl_interp_init(NULL);
 *   tl_value_t* r = NULL;
 *   if (tl_interp_eval(lisp, "(+ 1 2)", "example.c", &r) != TL_OK) {
 *     fprintf(stderr, "%s\n", tl_error_report());
 *   } else {
 *     int64_t three;
 *     tl_value_to_int(r, &three);
 *     tl_value_free(r);
 *   }
 *   tl_interp_free(lisp);
 *
 * Conventions:
 * - Every call that can fail returns a tl_status_t; TL_OK is 0. The failure's message, Lisp
 *   condition type and source location stay readable through tl_error_* until the next failing
 *   call on the same thread (like errno). A call that makes a value returns NULL on failure.
 * - A tl_value_t* is a handle the host owns: it keeps its Lisp object alive (a GC root) until
 *   tl_value_free. Results written through an out parameter are new handles; arguments are
 *   borrowed. A handle that outlives its interpreter reads as nil.
 * - Strings are UTF-8. Strings returned as char* are the caller's, freed with tl_free.
 * - An interpreter is not thread-safe: use each from one thread at a time (several may run in
 *   parallel on different threads). tl_interp_interrupt is the exception.
 * - No C++ exception crosses this interface, and the library never prints (program output goes
 *   to stdout or to the function given to tl_interp_set_output). */
#ifndef TENSORLISP_TENSORLISP_H
#define TENSORLISP_TENSORLISP_H

#include <stddef.h>
#include <stdint.h>

#include "tensorlisp/dtype.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The version of this interface. Calls are only added; a change to an existing one means a new
 * major version. */
#define TL_C_API_VERSION 1

typedef enum tl_status_t {
  TL_OK = 0,
  TL_ERROR_LISP = 1,               /* the program signalled an error (a Lisp condition) */
  TL_ERROR_TYPE = 2,               /* a value asked for as a type it is not (tl_value_to_int of a string) */
  TL_ERROR_ARGUMENT = 3,           /* a bad argument from the host: NULL, a negative extent, a size mismatch */
  TL_ERROR_INTERRUPTED = 4,        /* tl_interp_interrupt stopped the evaluation */
  TL_ERROR_MEMORY = 5,             /* memory ran out (the Lisp condition storage-error) */
  TL_ERROR_INTERNAL = 6,           /* a bug in TensorLisp: the message names the C++ file and line */
  TL_STATUS_MAX_ENUM_ = 0x7fffffff /* never a status: any value a host function returns is defined */
} tl_status_t;

/* What a value is, as far as a host tells values apart. */
typedef enum tl_kind_t {
  TL_KIND_NIL = 0, /* nil: false and the empty list */
  TL_KIND_T,       /* t */
  TL_KIND_INT,
  TL_KIND_FLOAT,
  TL_KIND_STRING,
  TL_KIND_SYMBOL,
  TL_KIND_KEYWORD,
  TL_KIND_CONS, /* a non-empty list */
  TL_KIND_TENSOR,
  TL_KIND_FUNCTION,
  TL_KIND_OTHER,                 /* characters, hash tables, structures, ...: see tl_value_repr */
  TL_KIND_MAX_ENUM_ = 0x7fffffff /* never a kind */
} tl_kind_t;

typedef struct tl_interp tl_interp_t;
typedef struct tl_value tl_value_t;

/* The library's version, e.g. "0.1.0". */
const char* tl_version(void);

/* ---- Errors (per thread, kept until the next failure) ---- */

/* The message alone, e.g. "car: expected a list, got 5" ("" when nothing failed). */
const char* tl_error_message(void);
/* The Lisp condition type, e.g. "type-error", "unbound-variable", "interrupt". */
const char* tl_error_type(void);
/* The whole report: "file:line:col: eval error: message", the source line with a caret, and the
 * Lisp backtrace. */
const char* tl_error_report(void);
/* Where the error happened: *file is "" and *line 0 when unknown. Any pointer may be NULL. */
void tl_error_location(const char** file, int* line, int* column);
/* For a native function (tl_native_fn): records an error of condition type `type` (NULL:
 * "simple-error") with `message`, and returns TL_ERROR_LISP for the function to return. Lisp
 * code sees it as that condition (handler-case catches it). */
tl_status_t tl_error_raise(const char* type, const char* message);

/* ---- Interpreters ---- */

typedef struct tl_options_t {
  size_t size;                    /* sizeof(tl_options_t): the struct may grow at its end */
  int load_prelude;               /* nonzero (the default): load the Lisp and tensor libraries */
  const char* const* search_path; /* extra directories for `require`, searched first */
  size_t search_path_count;
  const char* const* argv; /* the value of *argv* */
  size_t argc;
  const char* device; /* the default device ("cpu", "ref", "cuda", ...); NULL: TENSORLISP_DEVICE or cpu */
} tl_options_t;

/* Fills `options` with the defaults. */
void tl_options_init(tl_options_t* options);

/* A new interpreter (options NULL: the defaults), or NULL with the error recorded. */
tl_interp_t* tl_interp_init(const tl_options_t* options);
/* Frees the interpreter; its values' handles read as nil afterwards. NULL is ignored. */
void tl_interp_free(tl_interp_t* interp);

/* Reads and evaluates every form of `source` (NUL-terminated), the last value into *result
 * (NULL: discarded). `file_name` (NULL: "<c>") names the source in error locations. */
tl_status_t tl_interp_eval(tl_interp_t* interp, const char* source, const char* file_name, tl_value_t** result);
/* Loads a file, like Lisp's `load`. */
tl_status_t tl_interp_load(tl_interp_t* interp, const char* path, tl_value_t** result);
/* Calls the global function `name`. Keyword arguments are passed as keyword values
 * (tl_value_keyword) followed by their values, as in Lisp. */
tl_status_t tl_interp_call(tl_interp_t* interp, const char* name, tl_value_t* const* args, size_t nargs,
                           tl_value_t** result);
/* Calls a function value. */
tl_status_t tl_interp_apply(tl_interp_t* interp, const tl_value_t* function, tl_value_t* const* args, size_t nargs,
                            tl_value_t** result);
/* The global value of `name` (an unbound-variable error when it has none). */
tl_status_t tl_interp_global(tl_interp_t* interp, const char* name, tl_value_t** result);
tl_status_t tl_interp_set_global(tl_interp_t* interp, const char* name, const tl_value_t* value);

/* A function implemented by the host. `args` are borrowed for the call; the function stores a
 * new value in *result (leaving it NULL returns nil) and returns TL_OK, or returns what
 * tl_error_raise returned (or a failing call's status: its error then reaches Lisp). */
typedef tl_status_t (*tl_native_fn)(tl_interp_t* interp, tl_value_t* const* args, size_t nargs, tl_value_t** result,
                                    void* user_data);
/* Defines the global function `name`. `free_user_data` (may be NULL) is called on `user_data`
 * when the interpreter is freed or the name is defined again from the host. `doc` (may be NULL)
 * is what (describe 'name) shows. */
tl_status_t tl_interp_define(tl_interp_t* interp, const char* name, tl_native_fn fn, void* user_data,
                             void (*free_user_data)(void*), const char* doc);

/* Asks the running evaluation to stop with an `interrupt` error (TL_ERROR_INTERRUPTED) at its
 * next safe point. Safe from a signal handler or another thread. */
void tl_interp_interrupt(tl_interp_t* interp);

/* Sends program output (print, format t, ...) to `fn` instead of stdout; NULL restores stdout. */
typedef void (*tl_output_fn)(const char* text, size_t length, void* user_data);
void tl_interp_set_output(tl_interp_t* interp, tl_output_fn fn, void* user_data);

/* ---- Values ---- */

/* New values in `interp`; NULL when memory ran out or interp is NULL. */
tl_value_t* tl_value_nil(tl_interp_t* interp);
tl_value_t* tl_value_bool(tl_interp_t* interp, int truth); /* t or nil */
tl_value_t* tl_value_int(tl_interp_t* interp, int64_t i);
tl_value_t* tl_value_float(tl_interp_t* interp, double d);
tl_value_t* tl_value_string(tl_interp_t* interp, const char* utf8, size_t length);
tl_value_t* tl_value_symbol(tl_interp_t* interp, const char* name);
tl_value_t* tl_value_keyword(tl_interp_t* interp, const char* name); /* "axis" makes :axis */
tl_value_t* tl_value_list(tl_interp_t* interp, tl_value_t* const* items, size_t count);
/* Another handle to the same object. */
tl_value_t* tl_value_copy(const tl_value_t* value);
/* Releases the handle. NULL is ignored. */
void tl_value_free(tl_value_t* value);

tl_kind_t tl_value_kind(const tl_value_t* value);
tl_status_t tl_value_to_int(const tl_value_t* value, int64_t* out);
tl_status_t tl_value_to_float(const tl_value_t* value, double* out); /* integers convert */
/* A string's (or a symbol's name's) bytes, NUL-terminated, freed with tl_free; *length (may be
 * NULL) is their count without the NUL. */
tl_status_t tl_value_to_string(const tl_value_t* value, char** out, size_t* length);
/* A proper list's items: at most `capacity` new handles into `items` (which may be NULL when
 * capacity is 0), and the list's length into *length, as snprintf does. */
tl_status_t tl_value_to_list(const tl_value_t* value, tl_value_t** items, size_t capacity, size_t* length);
/* The printed representation, as prin1 prints it; freed with tl_free. NULL for a NULL value. */
char* tl_value_repr(const tl_value_t* value);
/* The type name, as type-of gives it ("integer", "tensor", ...); freed with tl_free. */
char* tl_value_type_name(const tl_value_t* value);

/* Frees a string this API returned. */
void tl_free(void* p);

/* ---- Tensors ---- */

/* A new tensor holding a copy of `bytes` bytes of row-major data; bytes must be the element
 * count of `shape` times the dtype's size. */
tl_status_t tl_tensor_new(tl_interp_t* interp, tl_dtype_t dtype, const int64_t* shape, int ndim, const void* data,
                          size_t bytes, tl_value_t** result);
/* A tensor over the host's memory, without a copy: `data` holds the row-major elements, aligned
 * to the element size, and must stay valid until `release(context)` is called (from whichever
 * thread frees the last use; release may be NULL). The tensor reads the memory when it is
 * computed, so changes the host makes before then are seen; TensorLisp never writes into it (an
 * in-place update copies the data first). Bool tensors are copied (their bytes are checked). */
tl_status_t tl_tensor_wrap(tl_interp_t* interp, tl_dtype_t dtype, const int64_t* shape, int ndim, void* data,
                           void (*release)(void* context), void* context, tl_value_t** result);
/* The element type. */
tl_status_t tl_tensor_dtype(const tl_value_t* tensor, tl_dtype_t* dtype);
/* The rank into *ndim and at most `capacity` extents into `shape`. A symbolic extent (a batch
 * variable) is a shape error until the tensor is realized with a value for it. */
tl_status_t tl_tensor_shape(const tl_value_t* tensor, int64_t* shape, int capacity, int* ndim);
/* Computes the tensor (a no-op when it is), with values for the variables of a symbolic shape
 * (`names`/`values`, `count` of them; NULL and 0 when there are none). */
tl_status_t tl_tensor_realize(tl_value_t* tensor, const char* const* names, const int64_t* values, size_t count);
/* Realizes the tensor and points *data at its row-major elements, *bytes long, read-only: valid
 * and unchanged while the handle lives, even past its interpreter (an assign to the tensor in
 * Lisp afterwards gives the tensor new memory; the pointer keeps the old values). */
tl_status_t tl_tensor_data(tl_value_t* tensor, const void** data, size_t* bytes);
/* Realizes the tensor and copies its elements to `dst`, which holds exactly `bytes`. */
tl_status_t tl_tensor_copy_to(tl_value_t* tensor, void* dst, size_t bytes);
/* Bytes per element of a dtype (bool: 1); 0 for a number that is no dtype. */
size_t tl_dtype_size(tl_dtype_t dtype);
/* "f32", "bool", ...; NULL for a number that is no dtype. */
const char* tl_dtype_name(tl_dtype_t dtype);

#ifdef __cplusplus
}
#endif

#endif /* TENSORLISP_TENSORLISP_H */
