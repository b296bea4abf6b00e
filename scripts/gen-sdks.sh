#!/usr/bin/env bash
# Writes the plugin's SDKs under OUT (sdk/ by `make sdks`) from its schema
# (provider/vertex_training/plugin/schema.json): TypeScript in OUT/nodejs, Go in OUT/go,
# Python in OUT/python, each with the repository's LICENSE. The code is sdkgen's
# (tools/sdkgen: the Pulumi CLI's own generators); the Go SDK's go.mod is written here,
# requiring the Go SDK of the Pulumi release requirements.txt pins, and tidied.
#
#   bash scripts/gen-sdks.sh OUT
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: gen-sdks.sh OUT}
tools=${VERTEX_TOOLS_DIR:-$root/.tools}
schema=$root/provider/vertex_training/plugin/schema.json
[ -x "$tools/bin/sdkgen" ] || { echo "no $tools/bin/sdkgen: run \`make tools\`" >&2; exit 1; }

"$tools/bin/sdkgen" "$schema" "$out" nodejs go python
for language in nodejs go python; do
  cp "$root/LICENSE" "$out/$language/LICENSE"
done

module=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["language"]["go"]["modulePath"])' "$schema")
pulumi=$(sed -n 's/^pulumi==\([0-9.]*\).*/\1/p' "$root/requirements.txt")
go=$(sed -n 's/^go \([0-9.]*\)$/\1/p' "$root/tools/sdkgen/go.mod")
cat > "$out/go/go.mod" <<MOD
module $module

go $go

require github.com/pulumi/pulumi/sdk/v3 v$pulumi
MOD
export GOMODCACHE="${GOMODCACHE:-$tools/go/mod}" GOCACHE="${GOCACHE:-$tools/go/cache}"
export GOFLAGS=-mod=mod GOTOOLCHAIN=local
(cd "$out/go" && go mod tidy)
