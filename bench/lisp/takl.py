# SPDX-License-Identifier: Apache-2.0
# TAKL (Gabriel): the same program as takl.lisp. A list is a chain of cons cells, each a
# tuple (car, cdr); None is the empty list.
def listn(n):
    if n != 0:
        return (n, listn(n - 1))
    return None


def shorterp(x, y):
    return y is not None and (x is None or shorterp(x[1], y[1]))


def mas(x, y, z):
    if not shorterp(y, x):
        return z
    return mas(mas(x[1], y, z), mas(y[1], z, x), mas(z[1], x, y))


def length(l):
    n = 0
    while l is not None:
        n += 1
        l = l[1]
    return n


def main(iterations):
    l18, l12, l6 = listn(18), listn(12), listn(6)
    total = 0
    for _ in range(iterations):
        total += length(mas(l18, l12, l6))
    print(total)


main(25)
