#!/usr/bin/env bash
# Checks that every tracked C++ source and header is clang-format clean (.clang-format, clang-format
# 14). The X-macro tables (*.def) keep their hand-aligned columns, and the exported C++ prelude
# (export/prelude/) is emitted text, byte for byte, so both are left out.
#   --fix   reformat the files in place instead of checking
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v clang-format-14 >/dev/null 2>&1; then
  echo "check-format: clang-format-14 not found (apt-get install clang-format-14)" >&2
  exit 1
fi
mapfile -t files < <(git ls-files '*.cpp' '*.h' '*.hpp' | grep -v '^export/prelude/')
if [ "${1:-}" = "--fix" ]; then
  clang-format-14 -i "${files[@]}"
  exit 0
fi
if ! clang-format-14 --dry-run -Werror "${files[@]}" 2>/tmp/check-format.$$; then
  grep -E "^[^ ].*: error:" /tmp/check-format.$$ | cut -d: -f1 | sort -u | sed 's/^/check-format: not formatted: /' >&2
  rm -f /tmp/check-format.$$
  echo "check-format: run scripts/check-format.sh --fix" >&2
  exit 1
fi
rm -f /tmp/check-format.$$
echo "check-format: ${#files[@]} files clean"
