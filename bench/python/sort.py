# SPDX-License-Identifier: Apache-2.0
# Sorting 1,000,000 pseudo-random integers, the same program as bench/sort.lisp.
def make_data(n):
    x, out = 12345, []
    for _ in range(n):
        x = (x * 1103515245 + 12345) % 2147483648
        out.append(x)
    return out
s = sorted(make_data(1000000))
print([s[0], s[-1], len(s)])
