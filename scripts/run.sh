#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The main job: set up a fresh machine, build, and run the sample model script.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/build.sh" "$root/build"
exec "$root/build/tlisp" "$root/examples/tour.lisp" "$@"
