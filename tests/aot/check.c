/* SPDX-License-Identifier: Apache-2.0
 * Runs the programs tlisp compile made of tests/aot/model.lisp and compares their results
 * with what the interpreter computed (reference.lisp's .npy files, in the folder given as the
 * first argument). Exits 0 when every check passes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "embed.h"
#include "f64.h"
#include "int.h"
#include "linreg.h"
#include "linreg_w.h"
#include "mlp.h"
#include "mlp_generic.h"
#include "more.h"

static const char* dir;
static int failures = 0;

/* The data of DIR/NAME.npy (version 1 or 2 header skipped), checked to be BYTES long. */
static void* load(const char* name, size_t bytes) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s.npy", dir, name);
  FILE* f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "cannot open %s\n", path);
    exit(2);
  }
  unsigned char magic[12];
  if (fread(magic, 1, 12, f) != 12 || memcmp(magic, "\x93NUMPY", 6) != 0) {
    fprintf(stderr, "%s is not an .npy file\n", path);
    exit(2);
  }
  long header = magic[6] == 1 ? 10 + (magic[8] | magic[9] << 8)
                              : 12 + (magic[8] | magic[9] << 8 | magic[10] << 16 | (long)magic[11] << 24);
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  if (size - header != (long)bytes) {
    fprintf(stderr, "%s holds %ld bytes of data, expected %zu\n", path, size - header, bytes);
    exit(2);
  }
  void* data = malloc(bytes);
  fseek(f, header, SEEK_SET);
  if (fread(data, 1, bytes, f) != bytes) exit(2);
  fclose(f);
  return data;
}

static void* load_file(const char* path, size_t bytes) {
  FILE* f = fopen(path, "rb");
  void* data = malloc(bytes);
  if (!f || fread(data, 1, bytes, f) != bytes) {
    fprintf(stderr, "cannot read %zu bytes of %s\n", bytes, path);
    exit(2);
  }
  fclose(f);
  return data;
}

static void expect_close(const char* what, const float* got, const float* want, size_t n, float tol) {
  float worst = 0;
  for (size_t i = 0; i < n; ++i) {
    float e = fabsf(got[i] - want[i]) / (1.0f + fabsf(want[i]));
    if (!(e <= worst)) worst = e;
  }
  printf("%-28s %zu values, largest error %.3g %s\n", what, n, worst, worst <= tol ? "ok" : "FAILED");
  if (!(worst <= tol)) ++failures;
}

static void expect_rc(const char* what, int rc, int want) {
  printf("%-28s returned %d %s\n", what, rc, rc == want ? "ok" : "FAILED");
  if (rc != want) ++failures;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: check REFERENCE-DIR BUILD-DIR\n");
    return 2;
  }
  dir = argv[1];
  /* The MLP, with a workspace of the caller's and with none (allocated inside). */
  float* x = load("mlp.x", sizeof(float) * MLP_FORWARD_IN0_ELEMENTS);
  float* want = load("mlp.y", sizeof(float) * MLP_FORWARD_OUT0_ELEMENTS);
  float y[MLP_FORWARD_OUT0_ELEMENTS];
  void* ws = aligned_alloc(64, (MLP_FORWARD_WORKSPACE_BYTES + 63) / 64 * 64);
  expect_rc("mlp_forward", mlp_forward(x, y, ws), 0);
  expect_close("mlp_forward (workspace)", y, want, MLP_FORWARD_OUT0_ELEMENTS, 1e-5f);
  memset(y, 0, sizeof y);
  expect_rc("mlp_forward", mlp_forward(x, y, NULL), 0);
  expect_close("mlp_forward (NULL)", y, want, MLP_FORWARD_OUT0_ELEMENTS, 1e-5f);
  /* Compiled for any x86-64 (SSE2 only): the same results. */
  expect_rc("mlp_generic", mlp_generic(x, y, NULL), 0);
  expect_close("mlp_generic (x86-64)", y, want, MLP_GENERIC_OUT0_ELEMENTS, 1e-5f);
  free(ws);
  free(want);

  /* Three results: computed, the argument itself and a weight. */
  float logits[LOGITS_AND_MORE_OUT0_ELEMENTS], same[LOGITS_AND_MORE_OUT1_ELEMENTS], b2[LOGITS_AND_MORE_OUT2_ELEMENTS];
  expect_rc("logits_and_more", logits_and_more(x, logits, same, b2, NULL), 0);
  want = load("more.y0", sizeof logits);
  expect_close("logits_and_more 0", logits, want, LOGITS_AND_MORE_OUT0_ELEMENTS, 1e-5f);
  free(want);
  expect_close("logits_and_more 1 (x)", same, x, LOGITS_AND_MORE_OUT1_ELEMENTS, 0);
  want = load("more.y2", sizeof b2);
  expect_close("logits_and_more 2 (*b2*)", b2, want, LOGITS_AND_MORE_OUT2_ELEMENTS, 0);
  free(want);
  free(x);

  /* Two SGD steps that update *w* inside the object: the losses match the interpreter's. */
  float* lx = load("linreg.x", sizeof(float) * LINREG_STEP_IN0_ELEMENTS);
  float* ly = load("linreg.y", sizeof(float) * LINREG_STEP_IN1_ELEMENTS);
  float* loss1 = load("linreg.loss1", sizeof(float));
  float* loss2 = load("linreg.loss2", sizeof(float));
  float loss;
  expect_rc("linreg_step", linreg_step(lx, ly, &loss, NULL), 0);
  expect_close("linreg_step loss 1", &loss, loss1, 1, 1e-5f);
  expect_rc("linreg_step", linreg_step(lx, ly, &loss, NULL), 0);
  expect_close("linreg_step loss 2", &loss, loss2, 1, 1e-5f);

  /* The same with the weights as arguments, read from the weights file. */
  char path[1024];
  snprintf(path, sizeof path, "%s/linreg_w.weights", argv[2]);
  char* weights = load_file(path, LINREG_W_WEIGHTS_BYTES);
  float* w = (float*)(weights + LINREG_W_WEIGHT0_OFFSET);
  float* w0 = load("linreg.w0", sizeof(float) * LINREG_W_WEIGHT0_ELEMENTS);
  expect_close("linreg_w weights file", w, w0, LINREG_W_WEIGHT0_ELEMENTS, 0);
  expect_rc("linreg_w", linreg_w(lx, ly, w, &loss, NULL), 0);
  expect_close("linreg_w loss 1", &loss, loss1, 1, 1e-5f);
  expect_rc("linreg_w", linreg_w(lx, ly, w, &loss, NULL), 0);
  expect_close("linreg_w loss 2", &loss, loss2, 1, 1e-5f);
  float* w2 = load("linreg.w2", sizeof(float) * LINREG_W_WEIGHT0_ELEMENTS);
  expect_close("linreg_w weights after", w, w2, LINREG_W_WEIGHT0_ELEMENTS, 1e-5f);
  free(weights), free(w0), free(w2), free(lx), free(ly), free(loss1), free(loss2);

  /* The embedding lookup's guard: an index out of range is an error code and a message. */
  int32_t* ids = load("embed.ids", sizeof(int32_t) * EMBED_SUM_IN0_ELEMENTS);
  float* ewant = load("embed.y", sizeof(float) * EMBED_SUM_OUT0_ELEMENTS);
  float e[EMBED_SUM_OUT0_ELEMENTS];
  expect_rc("embed_sum", embed_sum(ids, e, NULL), 0);
  expect_close("embed_sum", e, ewant, EMBED_SUM_OUT0_ELEMENTS, 1e-6f);
  ids[1] = 16;
  int rc = embed_sum(ids, e, NULL);
  const char* message = embed_sum_error(rc);
  printf("%-28s returned %d: %s %s\n", "embed_sum (index 16)", rc, message,
         rc > 0 && strstr(message, "out of range") ? "ok" : "FAILED");
  if (!(rc > 0 && strstr(message, "out of range"))) ++failures;
  free(ids), free(ewant);

  /* Other dtypes. */
  double* dx = load("f64.x", sizeof(double) * F64_POLY_IN0_ELEMENTS);
  double* dwant = load("f64.y", sizeof(double) * F64_POLY_OUT0_ELEMENTS);
  double dy[F64_POLY_OUT0_ELEMENTS];
  expect_rc("f64_poly", f64_poly(dx, dy, NULL), 0);
  int same_f64 = memcmp(dy, dwant, sizeof dy) == 0;
  printf("%-28s %s\n", "f64_poly values", same_f64 ? "ok" : "FAILED");
  failures += !same_f64;
  int32_t* ia = load("int.a", sizeof(int32_t) * INT_OPS_IN0_ELEMENTS);
  int32_t* iwant = load("int.y", sizeof(int32_t) * INT_OPS_OUT0_ELEMENTS);
  int32_t iy[INT_OPS_OUT0_ELEMENTS];
  expect_rc("int_ops", int_ops(ia, iy, NULL), 0);
  int same_int = memcmp(iy, iwant, sizeof iy) == 0;
  printf("%-28s %s\n", "int_ops values", same_int ? "ok" : "FAILED");
  failures += !same_int;
  free(dx), free(dwant), free(ia), free(iwant);

  printf("%s\n", failures == 0 ? "all compiled programs match the interpreter" : "some checks FAILED");
  return failures == 0 ? 0 : 1;
}
