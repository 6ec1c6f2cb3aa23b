#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# CI's format check: every C++ line changed since the commit in tests/format/base (the tree
# before the check existed; the rest of the tree keeps its layout) is formatted as
# .clang-format says (scripts/format.sh --check). Fix with scripts/format.sh BASE. Skipped
# (status 77) where the clone lacks that commit (a shallow clone) or clang-format-14 is absent.
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
base="$(tr -d '[:space:]' < tests/format/base)"
if ! git rev-parse -q --verify "$base^{commit}" >/dev/null 2>&1; then
  echo "format check skipped: commit $base (tests/format/base) is not in this clone"
  exit 77
fi
if ! command -v clang-format-14 >/dev/null 2>&1 && ! command -v clang-format >/dev/null 2>&1; then
  echo "format check skipped: no clang-format (scripts/bootstrap.sh installs clang-format-14)"
  exit 77
fi
"$root/scripts/format.sh" --check "$base"
