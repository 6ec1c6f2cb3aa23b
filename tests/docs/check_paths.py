#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Keeps the documentation honest about the tree: every path under src/, stdlib/, tests/,
# backends/ or scripts/ that README.md or docs/*.md mentions must exist. A path with a
# placeholder (<name>) is skipped; one with a * must match at least one file.
# Prints each missing path as FILE:LINE: path and exits 1 if there is any.
import glob
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
PREFIXES = ("src", "stdlib", "tests", "backends", "scripts")
# A path starts at a word boundary that is not part of a longer path (build/tests/... is not
# tests/...), and runs over the characters file names here use.
PATH = re.compile(r"(?<![\w./<>-])((?:%s)/[\w./*<>-]*)" % "|".join(PREFIXES))


def documents():
    yield os.path.join(ROOT, "README.md")
    yield from sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))


def exists(path):
    if "*" in path:
        return bool(glob.glob(os.path.join(ROOT, path)))
    return os.path.exists(os.path.join(ROOT, path))


def main():
    missing = []
    checked = 0
    for doc in documents():
        rel = os.path.relpath(doc, ROOT)
        with open(doc, encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                for m in PATH.finditer(line):
                    path = m.group(1).rstrip(".,:;")
                    if "<" in path or ">" in path or "..." in path:
                        continue
                    checked += 1
                    if not exists(path):
                        missing.append(f"{rel}:{n}: {path} does not exist")
    for e in missing:
        print(e)
    if missing:
        print(f"docs.paths: {len(missing)} of {checked} paths missing")
        return 1
    print(f"docs.paths: ok ({checked} paths)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
