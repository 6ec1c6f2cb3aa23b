# SPDX-License-Identifier: Apache-2.0
# Building a large string from 200,000 formatted pieces, the same program as bench/strings.lisp.
parts = []
for i in range(200000):
    parts.append("item-%d" % i)
text = ",".join(parts)
print([len(text), len(text.split(","))])
