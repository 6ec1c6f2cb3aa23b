#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Formats the C++ a change touches with the repository's .clang-format, and nothing else.
# Usage: scripts/format.sh [--check] [BASE]
#   BASE     the commit to compare with (default: origin/main if it exists, else HEAD~1); the
#            change is everything from BASE to the working tree, staged or not, plus new files
#            git does not ignore
#   --check  change nothing: print the formatting the changed lines need, and exit 1 if any
# Only the changed lines of changed files are formatted (clang-format-diff), so untouched code
# keeps its layout; a new file is formatted whole. Files: *.cpp *.cc *.h *.hpp.
# Needs clang-format 14 and its clang-format-diff (Debian: apt-get install -y clang-format-14);
# CLANG_FORMAT names another clang-format binary.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

check=0
base=""
for arg in "$@"; do
  case "$arg" in
    --check) check=1 ;;
    -h|--help) sed -n '3,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "format.sh: unknown option $arg (usage: scripts/format.sh [--check] [BASE])" >&2; exit 2 ;;
    *)
      if [[ -n "$base" ]]; then
        echo "format.sh: one BASE only, got $base and $arg" >&2
        exit 2
      fi
      base="$arg" ;;
  esac
done
if [[ -z "$base" ]]; then
  if git rev-parse -q --verify origin/main >/dev/null; then base=origin/main; else base=HEAD~1; fi
fi
if ! git rev-parse -q --verify "$base^{commit}" >/dev/null; then
  echo "format.sh: $base is not a commit" >&2
  exit 2
fi

find_tool() {
  local t
  for t in "$@"; do
    if command -v "$t" >/dev/null 2>&1; then command -v "$t"; return 0; fi
  done
  return 1
}
clang_format="${CLANG_FORMAT:-}"
[[ -n "$clang_format" ]] || clang_format="$(find_tool clang-format-14 clang-format)" || {
  echo "format.sh: clang-format not found (Debian: apt-get install -y clang-format-14)" >&2
  exit 2
}
clang_format_diff="$(find_tool clang-format-diff-14 clang-format-diff)" || {
  echo "format.sh: clang-format-diff not found (it comes with clang-format-14)" >&2
  exit 2
}

patterns=('*.cpp' '*.cc' '*.h' '*.hpp')
# Changed tracked files (added, copied, modified, renamed) and new untracked ones.
mapfile -t changed < <(git diff --name-only --diff-filter=ACMR "$base" -- "${patterns[@]}")
mapfile -t added < <(git ls-files --others --exclude-standard -- "${patterns[@]}")
if [[ ${#changed[@]} -eq 0 && ${#added[@]} -eq 0 ]]; then
  echo "format.sh: no C++ files changed since $base"
  exit 0
fi

status=0
if [[ ${#changed[@]} -gt 0 ]]; then
  if [[ $check -eq 1 ]]; then
    out="$(git diff -U0 --no-color -M --diff-filter=ACMR "$base" -- "${patterns[@]}" | "$clang_format_diff" -p1 -binary "$clang_format")"
    if [[ -n "$out" ]]; then
      printf '%s\n' "$out"
      status=1
    fi
  else
    git diff -U0 --no-color -M --diff-filter=ACMR "$base" -- "${patterns[@]}" | "$clang_format_diff" -p1 -i -binary "$clang_format"
  fi
fi
for f in "${added[@]}"; do
  if [[ $check -eq 1 ]]; then
    "$clang_format" --style=file --dry-run --Werror "$f" || status=1
  else
    "$clang_format" --style=file -i "$f"
  fi
done

if [[ $check -eq 1 ]]; then
  n=$(( ${#changed[@]} + ${#added[@]} ))
  if [[ $status -eq 0 ]]; then
    echo "format.sh: $n changed file(s) since $base are formatted"
  else
    echo "format.sh: the changes since $base need formatting (run scripts/format.sh $base)" >&2
  fi
fi
exit $status
