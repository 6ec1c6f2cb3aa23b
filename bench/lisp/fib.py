# SPDX-License-Identifier: Apache-2.0
# FIB: doubly recursive Fibonacci, fib(25) repeated; the same program as fib.lisp.
def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)


def main(iterations):
    total = 0
    for _ in range(iterations):
        total += fib(25)
    print(total)


main(80)
