/* SPDX-License-Identifier: Apache-2.0 */
/* A minimal C program built against the installed library's C API. */
#include <stdio.h>

#include <tensorlisp/tensorlisp.h>

int main(void) {
  tl_interp_t* lisp = tl_interp_init(NULL);
  tl_value_t* v = NULL;
  int64_t sum = 0;
  if (lisp == NULL || tl_interp_eval(lisp, "(loop for i from 1 to 10 sum (* i i))", "host.c", &v) != TL_OK ||
      tl_value_to_int(v, &sum) != TL_OK) {
    fprintf(stderr, "%s\n", tl_error_report());
    return 1;
  }
  printf("installed tensorlisp says %lld from C\n", (long long)sum);
  tl_value_free(v);
  tl_interp_free(lisp);
  return sum == 385 ? 0 : 1;
}
