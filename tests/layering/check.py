#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Checks the source tree's layering and two habits, from the text of src/:
#  1. Layers: each file may include only headers of its own layer and the layers below it
#     (LAYERS; public headers in include/tensorlisp/ as PUBLIC allows). A file whose directory
#     is in one layer but whose code belongs to a higher one is listed in PENDING with the layer
#     it is checked as, until it moves.
#  2. No `default:` in a switch over ops (one whose cases name Op::, EOp::, OpGroup::,
#     ReduceKind:: or MathFn::, in src/ and backends/): the compiler's -Werror=switch then names
#     every switch a new op must be handled in.
#  3. No getenv/secure_getenv in the compiler's layers (NO_ENVIRONMENT): settings are read at
#     the edges (the CLI, the embedding API: api/devices.cpp) and passed down.
#  4. A source file over 800 lines (src/, backends/) says why near its top, in a comment that
#     begins "(Over 800 lines:", or is split.
# Prints each violation as FILE:LINE: message and exits 1 if there is any.
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

# layer -> the layers it may include (itself included implicitly).
LAYERS = {
    "support": [],
    "reader": ["support", "eval"],           # the reader builds the evaluator's values
    "eval": ["support", "reader"],
    "tensor": ["support"],                    # graph, views, dtypes, semantics: plain C++
    "schedule": ["support", "tensor"],
    "codegen": ["support", "tensor", "schedule"],
    "runtime": ["support", "tensor", "schedule", "codegen"],
    "text": ["support", "eval"],
    "bindings": ["support", "reader", "eval", "tensor", "schedule", "codegen", "runtime", "text"],
    # defoptimizer: rules written in Lisp over tensor values
    "rewrite": ["support", "reader", "eval", "tensor", "schedule", "codegen", "runtime", "text", "bindings"],
    "api": ["support", "reader", "eval", "tensor", "schedule", "codegen", "runtime", "text", "bindings", "rewrite"],
    # the Python module (src/python/): the C API only
    "python": [],
    "cli": ["support", "reader", "eval", "tensor", "schedule", "codegen", "runtime", "text", "bindings", "rewrite", "api"],
}
# Public headers (include/tensorlisp/NAME) each layer may use.
PUBLIC = {
    "error.hpp": ["support", "eval", "reader", "rewrite", "text", "bindings", "api", "cli"],
    "backend.h": ["runtime", "bindings", "api", "cli"],
    "tensor.hpp": ["api", "cli"],
    "tensorlisp.hpp": ["api", "cli", "python"],
    "tensorlisp.h": ["api", "python"],  # the C API, and the Python module built on it
    "dtype.h": ["runtime", "bindings", "api", "cli", "python"],
}
# Files whose directory is in one layer but whose code belongs to a higher one, with the layer
# they are checked as until they move (issue 20). Empty: the Lisp bindings now live in
# src/bindings/.
PENDING = {}

# Layers that read no environment variable (issue 20): what they need to know comes in as
# settings (runtime::JitSettings, runtime::ToolchainSettings).
NO_ENVIRONMENT = ["tensor", "schedule", "codegen", "runtime"]

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
SWITCH = re.compile(r'\bswitch\s*\(((?:[^()]|\([^()]*\))*)\)\s*\{')
OP_CASE = re.compile(r'\bcase\s+(?:[\w:]*::)?(Op|EOp|OpGroup|ReduceKind|MathFn)::')
LONG_FILE = 800
LONG_REASON = "(Over 800 lines:"

GETENV = re.compile(r'\b(secure_getenv|getenv)\s*\(')


def layer_of(rel):
    if rel in PENDING:
        return PENDING[rel]
    if rel.startswith("src/tensor/io/"):
        return "tensor"  # file formats: plain C++ over tensor/ and support/
    parts = rel.split("/")
    return parts[1] if len(parts) > 2 and parts[0] == "src" else None


def check_includes(rel, lines, errors):
    layer = layer_of(rel)
    if layer not in LAYERS:
        errors.append(f"{rel}:1: no layer known for this file (add it to tests/layering/check.py)")
        return
    for n, line in enumerate(lines, 1):
        m = INCLUDE.match(line)
        if not m:
            continue
        path = m.group(1)
        first = path.split("/")[0]
        if first == "tensorlisp":
            name = path.split("/", 1)[1]
            if layer not in PUBLIC.get(name, []):
                errors.append(f"{rel}:{n}: the {layer} layer includes public header {path}")
            continue
        if "/" not in path:
            continue  # a file next to it (.inc, .def)
        target = layer_of("src/" + path) or first
        if target == layer or target in LAYERS[layer]:
            continue
        errors.append(f"{rel}:{n}: the {layer} layer includes {path} (the {target} layer)")


def check_environment(rel, lines, errors):
    layer = layer_of(rel)
    if layer not in NO_ENVIRONMENT:
        return
    for n, line in enumerate(lines, 1):
        m = GETENV.search(line.split("//", 1)[0])
        if m:
            errors.append(f"{rel}:{n}: the {layer} layer calls {m.group(1)} (read the variable at the edge, "
                          f"api/devices.cpp or the CLI, and pass it in as a setting)")


def check_switches(rel, text, errors):
    for m in SWITCH.finditer(text):
        depth, i, defaults, over_ops = 1, m.end(), [], False
        while i < len(text) and depth > 0:
            c = text[i]
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
            elif depth == 1 and text.startswith("default:", i):
                defaults.append(text.count("\n", 0, i) + 1)
            elif depth == 1 and text.startswith("case", i) and OP_CASE.match(text, i):
                over_ops = True
            i += 1
        if over_ops:
            for line in defaults:
                errors.append(f"{rel}:{line}: default: in a switch over ops ({m.group(1).strip()}): name every case")


def check_length(rel, lines, errors):
    if len(lines) > LONG_FILE and not any(LONG_REASON in line for line in lines[:20]):
        errors.append(f"{rel}:1: {len(lines)} lines: split it, or say why near the top in a comment "
                      f"beginning \"{LONG_REASON}\"")


def main():
    errors = []
    for top in ("src", "backends"):
        for dirpath, _, files in os.walk(os.path.join(ROOT, top)):
            for f in sorted(files):
                if not f.endswith((".cpp", ".h", ".inc")):
                    continue
                path = os.path.join(dirpath, f)
                rel = os.path.relpath(path, ROOT)
                with open(path, encoding="utf-8") as fh:
                    text = fh.read()
                lines = text.splitlines()
                if top == "src":
                    check_includes(rel, lines, errors)
                    check_environment(rel, lines, errors)
                check_switches(rel, text, errors)
                check_length(rel, lines, errors)
    for e in sorted(errors):
        print(e)
    if errors:
        print(f"layering: {len(errors)} violation(s)")
        return 1
    print("layering: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
