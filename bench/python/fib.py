# SPDX-License-Identifier: Apache-2.0
# Recursive Fibonacci, the same program as bench/fib.lisp.
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)
print(fib(30))
