#!/usr/bin/env bash
# Fails (exit 1) when a tracked C++ file differs from what clang-format makes of it with the
# repository's .clang-format (ColumnLimit 100), and lists the files. Fix with:
#   git ls-files '*.cc' '*.h' | xargs clang-format -i
set -euo pipefail
cd "$(dirname "$0")/.."
formatter="${CLANG_FORMAT:-clang-format}"
if ! command -v "$formatter" > /dev/null; then
  echo "check-format: $formatter not found (deploy/install-deps.sh installs clang-format)" >&2
  exit 2
fi
bad=()
while IFS= read -r -d '' file; do
  if ! "$formatter" --dry-run --Werror "$file" > /dev/null 2>&1; then bad+=("$file"); fi
done < <(git ls-files -z '*.cc' '*.h')
if (( ${#bad[@]} )); then
  echo "check-format: ${#bad[@]} file(s) are not clang-formatted:" >&2
  printf '  %s\n' "${bad[@]}" >&2
  exit 1
fi
echo "check-format: $(git ls-files '*.cc' '*.h' | wc -l) files formatted"
