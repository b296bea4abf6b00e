#!/usr/bin/env bash
# Makes a Pulumi CLI and its Python language host available in .tools/bin: what `make up`
# runs. With `all`, also the language hosts of the other languages (YAML, Node.js, Go) and
# the generators of the plugin's SDKs: what `make test` and `make sdks` run.
#
#   bash scripts/install-pulumi.sh [all]
#
#   1. A `pulumi` already installed (on PATH) at MIN_CLI or later is used as it is, with
#      the language hosts its release ships beside it: no Go, no build. With `all`, only
#      if no pulumi-language-yaml is beside it or on PATH is that host built, as in step 3
#      (or, without Go, left out with a warning: YAML programs then do not run).
#   2. Else a CLI built here before, at the release requirements.txt pins for the `pulumi`
#      Python package, is reused.
#   3. Else that release is built from the Go module proxy (tools/pulumi-cli), with the
#      Python language host of tools/language-host and the two host scripts of tools/host.
#
# With `all`: the YAML language host is built from tools/language-yaml, at the
# pulumi-yaml release its go.mod requires, when .tools/bin has none of that release; the
# Node.js and Go language hosts (TypeScript and Go programs) from tools/language-nodejs
# and tools/language-go the same way, when the CLI in use has none beside it. The SDK
# generators (tools/sdkgen, sdkgen-java, sdkgen-dotnet), which `make sdks` runs, are built
# whenever Go is there. Builds keep the Go caches under .tools/go. VERTEX_TOOLS_DIR moves
# .tools elsewhere (the tests use it); PULUMI_BUILD=1 skips step 1.
set -euo pipefail

case ${1:-} in
  "") all= ;;
  all) all=1 ;;
  *) echo "usage: install-pulumi.sh [all]" >&2; exit 2 ;;
esac

# The oldest Pulumi CLI the project supports, and why: the engine tests pass on it (the
# kill-and-rerun ones included), and a CLI older than the `pulumi` Python package it runs
# is a combination Pulumi itself tests only back to a few releases.
MIN_CLI=3.245.0

root=$(cd "$(dirname "$0")/.." && pwd)
tools=${VERTEX_TOOLS_DIR:-$root/.tools}
bin="$tools/bin"
mkdir -p "$bin"

version=$(sed -n 's/^pulumi==\([0-9.]*\).*/\1/p' "$root/requirements.txt")
[ -n "$version" ] || { echo "requirements.txt does not pin pulumi==X.Y.Z" >&2; exit 1; }
grep -q "github.com/pulumi/pulumi/pkg/v3 v$version\$" "$root/tools/pulumi-cli/go.mod" || {
  echo "tools/pulumi-cli/go.mod must require github.com/pulumi/pulumi/pkg/v3 v$version" \
    "(the version requirements.txt pins); update both together" >&2
  exit 1
}

cli_version() { PULUMI_SKIP_UPDATE_CHECK=1 "$1" version 2>/dev/null | tr -d 'v\r\n'; }
# at_least A B: version A is B or later.
at_least() { [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n1)" = "$2" ]; }
# remove_ours: removes the CLI and hosts from .tools/bin, all but the YAML, Node.js and Go
# hosts built here (yaml_host and sdk_host below replace those only when of another
# release).
remove_ours() {
  local f
  for f in "$bin"/pulumi*; do
    case ${f##*/} in
      pulumi-language-yaml | pulumi-language-nodejs | pulumi-language-go) ;;
      *) rm -f "$f" ;;
    esac
  done
}

# Builds use the Go module proxy, with the Go caches under .tools/go.
# -checklinkname=0: a dependency (github.com/pgavlin/text) links to internal/bytealg by
# name, which Go 1.23 and later refuse unless told otherwise.
go_env() {
  export GOMODCACHE="${GOMODCACHE:-$tools/go/mod}" GOCACHE="${GOCACHE:-$tools/go/cache}"
  export GOFLAGS=-mod=mod GOTOOLCHAIN=local CGO_ENABLED=0
}
build() {  # build DIR VERSION PACKAGE [VERSION_VARIABLE]
  local variable=${4:-github.com/pulumi/pulumi/sdk/v3/go/common/version.Version}
  (cd "$root/tools/$1" && go build -trimpath -o "$bin/" -ldflags "-s -w -checklinkname=0 \
    -X $variable=v$2" "$3")
}

# The YAML language host: the release tools/language-yaml/go.mod requires, built there
# (with the version variable pulumi-yaml's own builds set) unless .tools/bin has it.
yaml_version=$(sed -n 's|^require github.com/pulumi/pulumi-yaml v\(.*\)$|\1|p' \
  "$root/tools/language-yaml/go.mod")
[ -n "$yaml_version" ] || {
  echo "tools/language-yaml/go.mod must require github.com/pulumi/pulumi-yaml vX.Y.Z" >&2
  exit 1
}
# built_from BINARY MODULE: the release of MODULE a host in .tools/bin was built from, as
# its build info records it (the module of the main package is on the `mod` line).
built_from() {
  go version -m "$1" 2>/dev/null | awk -v module="$2" \
    '$1 == "mod" && $2 == module { print substr($3, 2) }'
}
yaml_host() {
  local built=
  if [ -x "$bin/pulumi-language-yaml" ] && [ ! -L "$bin/pulumi-language-yaml" ]; then
    command -v go >/dev/null || return 0  # cannot check it, nor build another: keep it
    built=$(built_from "$bin/pulumi-language-yaml" github.com/pulumi/pulumi-yaml)
  fi
  [ "$built" != "$yaml_version" ] || return 0
  command -v go >/dev/null || {
    echo "warning: no pulumi-language-yaml is installed beside the Pulumi CLI or on PATH," \
      "and building it needs Go: Pulumi YAML programs will not run (install Go," \
      "go.dev/doc/install, and run this again)" >&2
    return 0
  }
  echo "building the Pulumi YAML language host $yaml_version from the Go module proxy" >&2
  go_env
  rm -f "$bin/pulumi-language-yaml"
  build language-yaml "$yaml_version" github.com/pulumi/pulumi-yaml/cmd/pulumi-language-yaml \
    github.com/pulumi/pulumi-yaml/pkg/version.Version
}

# The Node.js and Go language hosts: the proxy serves their own modules at no version, so
# they are built from the last sdk/v3 releases that still carry them (each go.mod says
# which), unless the CLI in use has its own (an official release ships both).
sdk_host() {  # sdk_host LANGUAGE PACKAGE
  local name=pulumi-language-$1 dir=language-$1 want built=
  if [ -n "${cli_dir:-}" ] && PATH=$cli_dir command -v "$name" >/dev/null; then
    rm -f "$bin/$name"
    return 0
  fi
  want=$(sed -n 's|^require github.com/pulumi/pulumi/sdk/v3 v\(.*\)$|\1|p' \
    "$root/tools/$dir/go.mod")
  if [ -x "$bin/$name" ]; then
    command -v go >/dev/null || return 0
    built=$(built_from "$bin/$name" github.com/pulumi/pulumi/sdk/v3)
  fi
  [ "$built" != "$want" ] || return 0
  command -v go >/dev/null || {
    echo "warning: no $name is installed beside the Pulumi CLI, and building it needs Go:" \
      "programs of that language will not run (install Go, go.dev/doc/install)" >&2
    return 0
  }
  echo "building the Pulumi language host $name from sdk/v3 $want" >&2
  go_env
  rm -f "$bin/$name"
  build "$dir" "$want" "github.com/pulumi/pulumi/sdk/v3/$2"
}
other_hosts() {
  sdk_host nodejs nodejs/cmd/pulumi-language-nodejs
  sdk_host go go/pulumi-language-go
  command -v go >/dev/null || return 0
  # The checksum database does not know pulumi-java's module (tools/sdkgen-java); its
  # go.sum, committed, is what its download is checked against.
  local generator
  for generator in sdkgen sdkgen-java sdkgen-dotnet; do
    if [ ! -x "$bin/$generator" ] || [ -n "$(find "$root/tools/$generator" \
         "$root/tools/sdkwrite" -newer "$bin/$generator")" ]; then
      echo "building $generator (tools/$generator), which writes the plugin's SDKs" >&2
      go_env
      (cd "$root/tools/$generator" && GONOSUMDB=github.com/pulumi/pulumi-java \
        go build -trimpath -o "$bin/" -ldflags "-s -w -checklinkname=0" .)
    fi
  done
}

# 1. An installed CLI. The official release ships its language hosts and host scripts
#    beside the binary; the CLI finds them there and on PATH.
path_without_tools=$(printf '%s' "$PATH" | tr ':' '\n' | grep -vxF "$bin" | paste -sd: -)
if [ "${PULUMI_BUILD:-}" != 1 ] \
   && installed=$(PATH=$path_without_tools command -v pulumi); then
  installed=$(readlink -f "$installed")
  found=$(cli_version "$installed")
  if [ -n "$found" ] && at_least "$found" "$MIN_CLI"; then
    if PATH=$(dirname "$installed"):$path_without_tools command -v pulumi-language-python \
         >/dev/null; then
      remove_ours
      ln -s "$installed" "$bin/pulumi"
      echo "using the installed Pulumi CLI $found ($installed)" >&2
      [ -n "$all" ] || exit 0
      if PATH=$(dirname "$installed"):$path_without_tools command -v pulumi-language-yaml \
           >/dev/null; then
        rm -f "$bin/pulumi-language-yaml"
      else
        yaml_host
      fi
      cli_dir=$(dirname "$installed")
      other_hosts
      exit 0
    fi
    echo "the installed Pulumi CLI $found ($installed) has no pulumi-language-python beside" \
      "it or on PATH; building Pulumi $version instead" >&2
  elif [ -n "$found" ]; then
    echo "the installed Pulumi CLI $found ($installed) is older than $MIN_CLI, the oldest" \
      "this project supports; building $version (or upgrade it: pulumi.com/docs/install)" >&2
  fi
fi

# 2. and 3. The CLI of the pinned release, built here.
built=$(test -x "$bin/pulumi" && test ! -L "$bin/pulumi" && cli_version "$bin/pulumi" || true)
if [ "$built" != "$version" ] || [ ! -x "$bin/pulumi-language-python" ]; then
  go_needed=$(sed -n 's/^go \([0-9.]*\)$/\1/p' "$root/tools/pulumi-cli/go.mod")
  command -v go >/dev/null || {
    echo "no Pulumi CLI $MIN_CLI or later is installed, and building $version needs Go" \
      "$go_needed or later: install either (pulumi.com/docs/install, go.dev/doc/install)" >&2
    exit 1
  }
  echo "building Pulumi $version and its Python language host from the Go module proxy" >&2
  go_env
  remove_ours
  build pulumi-cli "$version" github.com/pulumi/pulumi/pkg/v3/cmd/pulumi
  host=$(sed -n 's|^require github.com/pulumi/pulumi/sdk/v3 v\(.*\)$|\1|p' \
    "$root/tools/language-host/go.mod")
  build language-host "$host" github.com/pulumi/pulumi/sdk/v3/python/cmd/pulumi-language-python
fi
if [ -n "$all" ]; then
  yaml_host
  other_hosts
fi

# The host scripts a CLI release ships beside its language host: the host runs the program
# through the first; the engine starts the second as the plugin that serves every dynamic
# resource of a Python program.
# Copied only when they differ: a run of the tests may be running them (CI runs two side by
# side, each `make test` running this script first).
for script in pulumi-language-python-exec pulumi-resource-pulumi-python; do
  cmp -s "$root/tools/host/$script" "$bin/$script" \
    || install -m 0755 "$root/tools/host/$script" "$bin/"
done
echo "pulumi $(cli_version "$bin/pulumi") in $bin" >&2
