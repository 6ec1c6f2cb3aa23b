/* SPDX-License-Identifier: Apache-2.0
 * Classifies points with the model rings.lisp trained, compiled by tlisp compile into
 * rings.o and rings.h: no TensorLisp library, no interpreter, only the C library and libm.
 *
 *   build/tlisp compile examples/aot/rings.lisp --entry classify --shapes 1x2 -o /tmp/rings
 *   cc -I/tmp examples/aot/main.c /tmp/rings.o -lm -o /tmp/rings
 *   /tmp/rings 0.1 0.2  1.5 -0.3
 */
#include <stdio.h>
#include <stdlib.h>

#include "rings.h"

int main(int argc, char** argv) {
  if (argc < 3 || argc % 2 != 1) {
    fprintf(stderr, "usage: %s X Y [X Y ...]\n", argv[0]);
    return 2;
  }
  /* The workspace once, for every call (NULL would allocate it at each call). */
  static unsigned char workspace[CLASSIFY_WORKSPACE_BYTES + 1] __attribute__((aligned(64)));
  for (int i = 1; i + 1 < argc; i += 2) {
    float point[CLASSIFY_IN0_ELEMENTS] = {strtof(argv[i], NULL), strtof(argv[i + 1], NULL)};
    float p[CLASSIFY_OUT0_ELEMENTS];
    int rc = classify(point, p, workspace);
    if (rc != 0) {
      fprintf(stderr, "classify: %s\n", classify_error(rc));
      return 1;
    }
    printf("(%g, %g): %s (p = %.3f)\n", point[0], point[1], p[0] > p[1] ? "inside" : "ring", p[0] > p[1] ? p[0] : p[1]);
  }
  return 0;
}
