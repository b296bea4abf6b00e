#!/usr/bin/env bash
# Makes the Pulumi CLI, the Python language host and the two host scripts the CLI
# tarball would ship available in .tools/bin, at the release of the `pulumi` Python
# package that requirements.txt pins. The CLI is not published on PyPI or npm, so it is
# built from the Go module proxy (see tools/pulumi-build/go.mod).
#
#   1. a `pulumi` on PATH at that version is reused;
#   2. else a build already in .tools/bin at that version is reused;
#   3. else both programs are built, with the Go caches under .tools/go.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
bin="$root/.tools/bin"
mkdir -p "$bin"

version=$(sed -n 's/^pulumi==\([0-9.]*\).*/\1/p' "$root/requirements.txt")
[ -n "$version" ] || { echo "requirements.txt does not pin pulumi==X.Y.Z" >&2; exit 1; }
gomod="$root/tools/pulumi-build/go.mod"
for module in pkg sdk; do
  grep -q "github.com/pulumi/pulumi/$module/v3 v$version\$" "$gomod" || {
    echo "tools/pulumi-build/go.mod must require github.com/pulumi/pulumi/$module/v3 v$version" \
      "(the version requirements.txt pins); update both together" >&2
    exit 1
  }
done

cli_version() { PULUMI_SKIP_UPDATE_CHECK=1 "$1" version 2>/dev/null | tr -d 'v\r\n'; }

if onpath=$(PATH=$(echo "$PATH" | tr ':' '\n' | grep -vxF "$bin" | paste -sd:) command -v pulumi) \
   && [ "$(cli_version "$onpath")" = "$version" ]; then
  ln -sf "$onpath" "$bin/pulumi"
  lang=$(dirname "$onpath")/pulumi-language-python
  [ -x "$lang" ] && ln -sf "$lang" "$bin/pulumi-language-python"
fi

if [ ! -x "$bin/pulumi" ] || [ "$(cli_version "$bin/pulumi")" != "$version" ] \
   || [ ! -x "$bin/pulumi-language-python" ]; then
  command -v go >/dev/null || { echo "building Pulumi $version needs Go (https://go.dev/doc/install)" >&2; exit 1; }
  echo "building Pulumi $version and its Python language host from the Go module proxy" >&2
  export GOMODCACHE="${GOMODCACHE:-$root/.tools/go/mod}" GOCACHE="${GOCACHE:-$root/.tools/go/cache}"
  export GOFLAGS=-mod=mod GOTOOLCHAIN=local CGO_ENABLED=0
  # -checklinkname=0: a dependency of this release (github.com/pgavlin/text) links to
  # internal/bytealg by name, which Go 1.23 and later refuse unless told otherwise.
  ldflags="-s -w -checklinkname=0"
  ldflags+=" -X github.com/pulumi/pulumi/pkg/v3/version.Version=v$version"
  ldflags+=" -X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=v$version"
  rm -f "$bin/pulumi" "$bin/pulumi-language-python"
  (cd "$root/tools/pulumi-build" && go build -trimpath -ldflags "$ldflags" -o "$bin/" \
    github.com/pulumi/pulumi/pkg/v3/cmd/pulumi \
    github.com/pulumi/pulumi/sdk/v3/python/cmd/pulumi-language-python)
fi

# The host scripts the CLI tarball ships beside the language host: the language host runs
# the program through the first; the engine starts the second as the plugin that serves
# every dynamic resource of a Python program.
install -m 0755 "$root/tools/host/pulumi-language-python-exec" \
  "$root/tools/host/pulumi-resource-pulumi-python" "$bin/"
echo "pulumi $(cli_version "$bin/pulumi") in $bin" >&2
