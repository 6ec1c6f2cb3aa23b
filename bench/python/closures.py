# SPDX-License-Identifier: Apache-2.0
# A closure-heavy loop, the same program as bench/closures.lisp.
def make_adder(n):
    return lambda x: x + n
total = 0
for i in range(1000000):
    add = make_adder(i)
    total = add(total)
print(total)
print(len(list(map(lambda x: x * 2, range(1000000)))))
