# SPDX-License-Identifier: Apache-2.0
# TAK (Gabriel): (tak 18 12 6) repeated; the same program as tak.lisp.
def tak(x, y, z):
    if not y < x:
        return z
    return tak(tak(x - 1, y, z), tak(y - 1, z, x), tak(z - 1, x, y))


def main(iterations):
    total = 0
    for _ in range(iterations):
        total += tak(18, 12, 6)
    print(total)


main(300)
