/* SPDX-License-Identifier: Apache-2.0 */
/* The C API (include/tensorlisp/tensorlisp.h) from C: every call, its errors, and the lifetimes
 * of handles, tensors over host memory and host functions. Compiled as C11; prints each failed
 * check and exits nonzero (issue 26). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tensorlisp/tensorlisp.h>

static int failures = 0;

#define CHECK(cond)                                                        \
  do {                                                                     \
    if (!(cond)) {                                                         \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                          \
    }                                                                      \
  } while (0)

/* Evaluates `source` and returns the printed result (freed by the caller), or NULL. */
static char* eval_repr(tl_interp_t* lisp, const char* source) {
  tl_value_t* v = NULL;
  if (tl_interp_eval(lisp, source, "test.c", &v) != TL_OK) {
    fprintf(stderr, "eval failed: %s\n", tl_error_report());
    return NULL;
  }
  char* s = tl_value_repr(v);
  tl_value_free(v);
  return s;
}

static int repr_is(tl_interp_t* lisp, const char* source, const char* expected) {
  char* s = eval_repr(lisp, source);
  int ok = s != NULL && strcmp(s, expected) == 0;
  if (!ok) fprintf(stderr, "%s printed %s, expected %s\n", source, s ? s : "(failed)", expected);
  tl_free(s);
  return ok;
}

/* A host function: (host-axpy a x y) = a*x + y on numbers; errors on a non-number. */
static tl_status_t host_axpy(tl_interp_t* lisp, tl_value_t* const* args, size_t nargs, tl_value_t** result,
                             void* user_data) {
  double a, x, y;
  int* calls = (int*)user_data;
  ++*calls;
  if (nargs != 3) return tl_error_raise("program-error", "host-axpy: expected 3 arguments");
  if (tl_value_to_float(args[0], &a) != TL_OK || tl_value_to_float(args[1], &x) != TL_OK ||
      tl_value_to_float(args[2], &y) != TL_OK) {
    return tl_error_raise("type-error", "host-axpy: expected numbers");
  }
  *result = tl_value_float(lisp, a * x + y);
  return *result ? TL_OK : TL_ERROR_MEMORY;
}

/* A host function that evaluates Lisp itself, and passes a failure on. */
static tl_status_t host_eval(tl_interp_t* lisp, tl_value_t* const* args, size_t nargs, tl_value_t** result,
                             void* user_data) {
  char* source = NULL;
  tl_status_t st;
  (void)user_data;
  if (nargs != 1 || tl_value_to_string(args[0], &source, NULL) != TL_OK) {
    return tl_error_raise(NULL, "host-eval: expected a string");
  }
  st = tl_interp_eval(lisp, source, "host-eval", result);
  tl_free(source);
  return st;
}

static int freed_user_data = 0;
static void free_counter(void* p) {
  (void)p;
  ++freed_user_data;
}

static int released = 0;
static void release_array(void* context) {
  CHECK(context != NULL);
  ++released;
}

static char output[256];
static void capture_output(const char* text, size_t length, void* user_data) {
  size_t used = strlen(output);
  (void)user_data;
  if (used + length < sizeof output) memcpy(output + used, text, length), output[used + length] = 0;
}

static void test_values(tl_interp_t* lisp) {
  tl_value_t* v = NULL;
  int64_t i = 0;
  double d = 0;
  char* s = NULL;
  size_t n = 0;

  CHECK(tl_interp_eval(lisp, "(* 6 7)", NULL, &v) == TL_OK);
  CHECK(tl_value_kind(v) == TL_KIND_INT);
  CHECK(tl_value_to_int(v, &i) == TL_OK && i == 42);
  CHECK(tl_value_to_float(v, &d) == TL_OK && d == 42.0);
  /* Asking an integer for a string is a type error, and the message says what it got. */
  CHECK(tl_value_to_string(v, &s, NULL) == TL_ERROR_TYPE);
  CHECK(strcmp(tl_error_type(), "type-error") == 0);
  CHECK(strstr(tl_error_message(), "42") != NULL);
  tl_value_free(v);

  CHECK(tl_interp_eval(lisp, "\"héllo\"", NULL, &v) == TL_OK);
  CHECK(tl_value_kind(v) == TL_KIND_STRING);
  CHECK(tl_value_to_string(v, &s, &n) == TL_OK && strcmp(s, "héllo") == 0 && n == 6);
  tl_free(s);
  tl_value_free(v);

  {
    const char* sources[] = {"nil", "t", "2.5", "'foo", ":axis", "'(1 2)", "#'car", "(tensor '(1 2))", "#\\a"};
    tl_kind_t kinds[] = {TL_KIND_NIL,     TL_KIND_T,    TL_KIND_FLOAT,    TL_KIND_SYMBOL, TL_KIND_KEYWORD,
                         TL_KIND_CONS,    TL_KIND_FUNCTION, TL_KIND_TENSOR, TL_KIND_OTHER};
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; ++k) {
      CHECK(tl_interp_eval(lisp, sources[k], NULL, &v) == TL_OK);
      if (tl_value_kind(v) != kinds[k]) fprintf(stderr, "kind of %s: %d\n", sources[k], (int)tl_value_kind(v));
      CHECK(tl_value_kind(v) == kinds[k]);
      tl_value_free(v);
    }
  }

  /* Values made by the host, in a list, back through Lisp. */
  {
    tl_value_t* items[5];
    tl_value_t* list;
    tl_value_t* back[8];
    size_t length = 0;
    items[0] = tl_value_int(lisp, -3);
    items[1] = tl_value_float(lisp, 0.5);
    items[2] = tl_value_string(lisp, "a\0b", 3);
    items[3] = tl_value_symbol(lisp, "sym");
    items[4] = tl_value_keyword(lisp, "key");
    list = tl_value_list(lisp, items, 5);
    for (int k = 0; k < 5; ++k) tl_value_free(items[k]);
    s = tl_value_repr(list);
    CHECK(s != NULL && strstr(s, "(-3 0.5 \"a") == s);
    tl_free(s);
    CHECK(tl_interp_set_global(lisp, "*from-c*", list) == TL_OK);
    CHECK(repr_is(lisp, "(length *from-c*)", "5"));
    CHECK(repr_is(lisp, "(fifth *from-c*)", ":key"));
    CHECK(tl_value_to_list(list, NULL, 0, &length) == TL_OK && length == 5);
    CHECK(tl_value_to_list(list, back, 2, &length) == TL_OK && length == 5);
    CHECK(tl_value_to_int(back[0], &i) == TL_OK && i == -3);
    CHECK(tl_value_to_float(back[1], &d) == TL_OK && d == 0.5);
    tl_value_free(back[0]);
    tl_value_free(back[1]);
    CHECK(tl_value_to_list(list, back, 8, &length) == TL_OK && length == 5);
    CHECK(tl_value_to_string(back[2], &s, &n) == TL_OK && n == 3 && memcmp(s, "a\0b", 4) == 0);
    tl_free(s);
    CHECK(tl_value_to_string(back[3], &s, NULL) == TL_OK && strcmp(s, "sym") == 0);
    tl_free(s);
    CHECK(tl_value_kind(back[4]) == TL_KIND_KEYWORD);
    for (int k = 0; k < 5; ++k) tl_value_free(back[k]);
    s = tl_value_type_name(list);
    CHECK(s != NULL && strcmp(s, "cons") == 0);
    tl_free(s);
    v = tl_value_copy(list);
    tl_value_free(list);
    CHECK(tl_value_kind(v) == TL_KIND_CONS); /* the copy keeps the list alive */
    tl_value_free(v);
    v = tl_value_nil(lisp);
    CHECK(tl_value_to_list(v, NULL, 0, &length) == TL_OK && length == 0);
    tl_value_free(v);
  }
  v = tl_value_bool(lisp, 1);
  CHECK(tl_value_kind(v) == TL_KIND_T);
  tl_value_free(v);
}

static void test_calls(tl_interp_t* lisp) {
  tl_value_t* args[4];
  tl_value_t* f = NULL;
  tl_value_t* r = NULL;
  int64_t i = 0;
  double d = 0;
  int calls = 0;

  CHECK(tl_interp_eval(lisp, "(defun sq (x) (* x x)) (defun kw (&key (a 1) (b 2)) (list a b))", NULL, NULL) == TL_OK);
  args[0] = tl_value_int(lisp, 9);
  CHECK(tl_interp_call(lisp, "sq", args, 1, &r) == TL_OK && tl_value_to_int(r, &i) == TL_OK && i == 81);
  tl_value_free(r);
  tl_value_free(args[0]);

  args[0] = tl_value_keyword(lisp, "b");
  args[1] = tl_value_int(lisp, 5);
  CHECK(tl_interp_call(lisp, "kw", args, 2, &r) == TL_OK);
  {
    char* s = tl_value_repr(r);
    CHECK(s != NULL && strcmp(s, "(1 5)") == 0);
    tl_free(s);
  }
  tl_value_free(r);
  tl_value_free(args[0]);
  tl_value_free(args[1]);

  /* A function value, applied. */
  CHECK(tl_interp_eval(lisp, "(lambda (a b) (- a b))", NULL, &f) == TL_OK);
  args[0] = tl_value_int(lisp, 10);
  args[1] = tl_value_int(lisp, 4);
  CHECK(tl_interp_apply(lisp, f, args, 2, &r) == TL_OK && tl_value_to_int(r, &i) == TL_OK && i == 6);
  tl_value_free(r);
  tl_value_free(f);
  tl_value_free(args[0]);
  tl_value_free(args[1]);

  /* A host function called from Lisp, its error caught by handler-case, its data freed when
   * redefined... at the latest with the interpreter. */
  CHECK(tl_interp_define(lisp, "host-axpy", host_axpy, &calls, free_counter, "(host-axpy A X Y) is A*X+Y.") == TL_OK);
  CHECK(tl_interp_eval(lisp, "(host-axpy 2 3.5 1)", NULL, &r) == TL_OK && tl_value_to_float(r, &d) == TL_OK && d == 8.0);
  tl_value_free(r);
  CHECK(calls == 1);
  CHECK(repr_is(lisp, "(handler-case (host-axpy 1 \"x\" 2) (type-error (e) (format nil \"caught: ~a\" e)))",
                "\"caught: host-axpy: expected numbers\""));
  CHECK(tl_interp_eval(lisp, "(host-axpy 1 2)", "axpy.lisp", NULL) == TL_ERROR_LISP);
  CHECK(strcmp(tl_error_type(), "program-error") == 0);
  CHECK(strstr(tl_error_message(), "expected 3 arguments") != NULL);
  CHECK(tl_interp_define(lisp, "host-eval", host_eval, NULL, NULL, NULL) == TL_OK);
  CHECK(repr_is(lisp, "(host-eval \"(+ 1 2)\")", "3"));
  CHECK(tl_interp_eval(lisp, "(host-eval \"(car 5)\")", NULL, NULL) == TL_ERROR_LISP);
  CHECK(strcmp(tl_error_type(), "type-error") == 0);

  /* Globals. */
  CHECK(tl_interp_global(lisp, "*from-c*", &r) == TL_OK);
  tl_value_free(r);
  CHECK(tl_interp_global(lisp, "no-such-global", &r) == TL_ERROR_LISP);
  CHECK(strcmp(tl_error_type(), "unbound-variable") == 0);

  /* Errors: message, type, location, report. */
  CHECK(tl_interp_eval(lisp, "(+ 1\n   (car 5))", "bad.lisp", NULL) == TL_ERROR_LISP);
  {
    const char* file = NULL;
    int line = 0, column = 0;
    tl_error_location(&file, &line, &column);
    CHECK(strcmp(file, "bad.lisp") == 0 && line == 2 && column == 4);
    CHECK(strstr(tl_error_report(), "bad.lisp:2:4: eval error:") == tl_error_report());
    CHECK(strcmp(tl_error_type(), "type-error") == 0);
  }
  CHECK(tl_interp_eval(lisp, "(+ 1", "open.lisp", NULL) == TL_ERROR_LISP);
  CHECK(strstr(tl_error_report(), "read error") != NULL);
  CHECK(tl_interp_call(lisp, "no-such-function", NULL, 0, NULL) == TL_ERROR_LISP);
  CHECK(tl_interp_load(lisp, "/no/such/file.lisp", NULL) == TL_ERROR_LISP);

  /* Bad arguments from the host are errors, not crashes. */
  CHECK(tl_interp_eval(NULL, "1", NULL, NULL) == TL_ERROR_ARGUMENT);
  CHECK(tl_interp_eval(lisp, NULL, NULL, NULL) == TL_ERROR_ARGUMENT);
  CHECK(tl_interp_call(lisp, "sq", NULL, 1, NULL) == TL_ERROR_ARGUMENT);
  CHECK(tl_value_int(NULL, 1) == NULL);
  CHECK(tl_value_kind(NULL) == TL_KIND_OTHER);
  tl_value_free(NULL);
  tl_interp_free(NULL);

  /* Output goes where the host says. */
  tl_interp_set_output(lisp, capture_output, NULL);
  CHECK(tl_interp_eval(lisp, "(format t \"out ~a~%\" 7)", NULL, NULL) == TL_OK);
  CHECK(strcmp(output, "out 7\n") == 0);
  tl_interp_set_output(lisp, NULL, NULL);

  /* An interrupt asked for while a host function runs stops the loop around it. */
  CHECK(tl_interp_eval(lisp, "(defun spin () (loop (host-axpy 0 0 0)))", NULL, NULL) == TL_OK);
}

static tl_status_t interrupting(tl_interp_t* lisp, tl_value_t* const* args, size_t nargs, tl_value_t** result,
                                void* user_data) {
  (void)args, (void)nargs, (void)result, (void)user_data;
  tl_interp_interrupt(lisp);
  return TL_OK;
}

static void test_interrupt(tl_interp_t* lisp) {
  tl_value_t* r = NULL;
  CHECK(tl_interp_define(lisp, "interrupting", interrupting, NULL, NULL, NULL) == TL_OK);
  CHECK(tl_interp_eval(lisp, "(loop (interrupting))", "spin.lisp", NULL) == TL_ERROR_INTERRUPTED);
  CHECK(strcmp(tl_error_type(), "interrupt") == 0);
  /* The interpreter goes on afterwards. */
  CHECK(tl_interp_eval(lisp, "(+ 1 1)", NULL, &r) == TL_OK);
  tl_value_free(r);
}

static void test_tensors(tl_interp_t* lisp) {
  float x[6] = {1, -2, 3, -4, 5, -6};
  int64_t shape[2] = {2, 3};
  tl_value_t* t = NULL;
  tl_value_t* r = NULL;
  tl_value_t* args[3];
  tl_dtype_t dtype;
  int64_t got[4] = {0};
  int ndim = 0;
  const void* data = NULL;
  size_t bytes = 0;
  float out[6];

  CHECK(tl_tensor_new(lisp, TL_DTYPE_F32, shape, 2, x, sizeof x, &t) == TL_OK);
  CHECK(tl_tensor_dtype(t, &dtype) == TL_OK && dtype == TL_DTYPE_F32);
  CHECK(tl_tensor_shape(t, got, 4, &ndim) == TL_OK && ndim == 2 && got[0] == 2 && got[1] == 3);
  CHECK(tl_interp_call(lisp, "relu", &t, 1, &r) == TL_OK);
  CHECK(tl_tensor_data(r, &data, &bytes) == TL_OK && bytes == sizeof out);
  CHECK(((const float*)data)[0] == 1 && ((const float*)data)[1] == 0 && ((const float*)data)[4] == 5);
  CHECK(tl_tensor_copy_to(r, out, sizeof out) == TL_OK && out[2] == 3 && out[5] == 0);
  CHECK(tl_tensor_copy_to(r, out, 4) == TL_ERROR_LISP); /* the size must match */
  CHECK(strstr(tl_error_message(), "24 bytes") != NULL);
  tl_value_free(r);

  /* Keyword arguments: (sum t :axis 1). */
  args[0] = t;
  args[1] = tl_value_keyword(lisp, "axis");
  args[2] = tl_value_int(lisp, 1);
  CHECK(tl_interp_call(lisp, "sum", args, 3, &r) == TL_OK);
  CHECK(tl_tensor_shape(r, got, 4, &ndim) == TL_OK && ndim == 1 && got[0] == 2);
  CHECK(tl_tensor_copy_to(r, out, 2 * sizeof(float)) == TL_OK && out[0] == 2 && out[1] == -5);
  tl_value_free(r);
  tl_value_free(args[1]);
  tl_value_free(args[2]);
  tl_value_free(t);

  /* Shape and size mismatches. */
  CHECK(tl_tensor_new(lisp, TL_DTYPE_F32, shape, 2, x, sizeof x - 4, &t) == TL_ERROR_ARGUMENT);
  CHECK(strstr(tl_error_message(), "(2 3)") != NULL);
  shape[0] = -1;
  CHECK(tl_tensor_new(lisp, TL_DTYPE_F32, shape, 2, x, sizeof x, &t) == TL_ERROR_ARGUMENT);
  shape[0] = 2;
  CHECK(tl_tensor_new(lisp, (tl_dtype_t)99, shape, 2, x, sizeof x, &t) == TL_ERROR_ARGUMENT);
  CHECK(tl_dtype_size(TL_DTYPE_BF16) == 2 && tl_dtype_size((tl_dtype_t)99) == 0);
  CHECK(strcmp(tl_dtype_name(TL_DTYPE_I64), "i64") == 0 && tl_dtype_name((tl_dtype_t)-1) == NULL);
  {
    tl_value_t* num = tl_value_int(lisp, 3);
    CHECK(tl_tensor_dtype(num, &dtype) == TL_ERROR_TYPE);
    CHECK(strstr(tl_error_message(), "expected a tensor, got integer 3") != NULL);
    tl_value_free(num);
  }

  /* Zero copy: the tensor reads the host's array when computed, and releases it once. */
  {
    double* host = malloc(4 * sizeof(double));
    int64_t n[1] = {4};
    for (int k = 0; k < 4; ++k) host[k] = k + 1;
    released = 0;
    CHECK(tl_tensor_wrap(lisp, TL_DTYPE_F64, n, 1, host, release_array, host, &t) == TL_OK);
    host[3] = 40; /* not computed yet: seen */
    CHECK(tl_interp_set_global(lisp, "*w*", t) == TL_OK);
    CHECK(repr_is(lisp, "(item (sum *w*))", "46.0"));
    CHECK(released == 0);
    /* An in-place update copies first: the host's array is never written, and released then. */
    CHECK(repr_is(lisp, "(progn (realize (prim:assign (slice *w* '(0 2)) (tensor '(9.0 9.0) :dtype 'f64)))"
                  " (item (sum *w*)))",
                  "61.0"));
    CHECK(host[0] == 1 && host[1] == 2);
    CHECK(released == 1);
    tl_value_free(t);
    /* Otherwise the array is released when the last use of the tensor goes. */
    released = 0;
    CHECK(tl_tensor_wrap(lisp, TL_DTYPE_F64, n, 1, host, release_array, host, &t) == TL_OK);
    CHECK(tl_interp_set_global(lisp, "*w*", t) == TL_OK);
    CHECK(repr_is(lisp, "(to-list (* *w* 2))", "(2.0 4.0 6.0 80.0)"));
    tl_value_free(t);
    CHECK(released == 0);
    CHECK(tl_interp_eval(lisp, "(setq *w* nil) (gc)", NULL, NULL) == TL_OK);
    CHECK(released == 1);
    free(host);
    /* A misaligned pointer is refused, and released at once. */
    {
      char raw[sizeof(float) * 3];
      int64_t m[1] = {2};
      released = 0;
      CHECK(tl_tensor_wrap(lisp, TL_DTYPE_F32, m, 1, raw + 1, release_array, raw, &t) == TL_ERROR_ARGUMENT);
      CHECK(strstr(tl_error_message(), "not aligned") != NULL);
      CHECK(released == 1);
    }
  }

  /* A symbolic shape: a shape error until realized with a binding. */
  CHECK(tl_interp_eval(lisp, "(defvar *sym* (zeros '(batch 3)))", NULL, NULL) == TL_OK);
  CHECK(tl_interp_global(lisp, "*sym*", &t) == TL_OK);
  CHECK(tl_tensor_shape(t, got, 4, &ndim) == TL_ERROR_TYPE);
  CHECK(strcmp(tl_error_type(), "shape-error") == 0);
  {
    const char* names[1] = {"batch"};
    int64_t values[1] = {5};
    CHECK(tl_tensor_realize(t, names, values, 1) == TL_OK);
    CHECK(tl_tensor_shape(t, got, 4, &ndim) == TL_OK && ndim == 2 && got[0] == 5);
  }
  tl_value_free(t);
}

int main(void) {
  tl_options_t options;
  tl_interp_t* lisp;
  const char* argv[2] = {"one", "two"};
  tl_value_t* r = NULL;

  CHECK(strlen(tl_version()) > 0);
  tl_options_init(&options);
  options.argv = argv;
  options.argc = 2;
  options.device = "ref";
  lisp = tl_interp_init(&options);
  if (lisp == NULL) {
    fprintf(stderr, "tl_interp_init failed: %s\n", tl_error_report());
    return 1;
  }
  CHECK(repr_is(lisp, "*argv*", "(\"one\" \"two\")"));
  CHECK(repr_is(lisp, "(device)", "ref") || repr_is(lisp, "(device-name (device))", "\"ref\""));
  test_values(lisp);
  test_calls(lisp);
  test_interrupt(lisp);
  test_tensors(lisp);
  tl_interp_free(lisp);
  CHECK(freed_user_data == 1); /* host-axpy's data went with the interpreter */

  /* A second interpreter on the default device; a handle outliving its interpreter reads nil. */
  lisp = tl_interp_init(NULL);
  CHECK(lisp != NULL);
  CHECK(tl_interp_eval(lisp, "(list 1 2)", NULL, &r) == TL_OK);
  test_tensors(lisp);
  tl_interp_free(lisp);
  CHECK(tl_value_kind(r) == TL_KIND_NIL);
  tl_value_free(r);

  /* Bad options. */
  options.size = 4;
  CHECK(tl_interp_init(&options) == NULL && strstr(tl_error_message(), "tl_options_init") != NULL);
  options.size = sizeof options;
  options.device = "no-such-device";
  CHECK(tl_interp_init(&options) == NULL);
  CHECK(strlen(tl_error_message()) > 0);

  if (failures == 0) printf("c api: all checks passed\n");
  return failures == 0 ? 0 : 1;
}
