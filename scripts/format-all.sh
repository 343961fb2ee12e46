#!/usr/bin/env bash
# One-time reformat of the whole tree with prettier (.prettierrc.json, .prettierignore), for the
# lead to run once after merging every branch of the round, then to commit on its own. It then
# checks that the tree is still sound: format:check, lint, typecheck and generated code.
#
# Usage: bash scripts/format-all.sh        (from a clean git checkout; exit 0 when every check passes)
set -euo pipefail
cd "$(dirname "$0")/.."

if ! git diff --quiet || ! git diff --cached --quiet; then
  echo "format-all: the working tree has uncommitted changes; commit them first, so that the reformat is a commit of its own" >&2
  exit 2
fi

echo "== prettier --write"
npx prettier --write . --log-level warn
echo "format-all: prettier rewrote $(git diff --name-only | wc -l) file(s) ($(git diff --shortstat))"

echo "== format:check"
npm run -s format:check
echo "== lint"
npm run -s lint
echo "== typecheck"
npx tsc -p tsconfig.json --noEmit
echo "== generated code is current"
npm run -s generate:check

echo "format-all: all checks pass. Run the tests (npm test), then commit the reformat alone, e.g."
echo "  git commit -am 'format: prettier over the whole tree (scripts/format-all.sh)'"
echo "and list that commit in .git-blame-ignore-revs so that git blame skips it."
