# SPDX-License-Identifier: Apache-2.0
# NQUEENS: the same program as nqueens.lisp. A list is a chain of cons cells, each a tuple
# (car, cdr); None is the empty list; append copies its first list as Lisp's does.
def iota1(n):
    l = None
    for i in range(n, 0, -1):
        l = (i, l)
    return l


def append(x, y):
    if x is None:
        return y
    return (x[0], append(x[1], y))


def ok(row, dist, placed):
    return placed is None or (
        placed[0] != row + dist
        and placed[0] != row - dist
        and ok(row, dist + 1, placed[1]))


def try_queens(x, y, z):
    if x is None:
        return 1 if y is None else 0
    return ((try_queens(append(x[1], y), None, (x[0], z)) if ok(x[0], 1, z) else 0)
            + try_queens(x[1], (x[0], y), z))


def queens(n):
    return try_queens(iota1(n), None, None)


def main(iterations):
    total = 0
    for _ in range(iterations):
        total += queens(8)
    print(total)


main(200)
