#!/usr/bin/env bash
# Builds the release's packages of the checked-in SDKs (sdk/, `make sdks`) and the
# plugin's archives into OUT, as users install them: for nodejs the npm tarball
# (TypeScript compiled, with its declarations, README and LICENSE: what `npm publish`
# uploads); for python the wheel and sdist of pulumi-vertex-training; for plugin the
# archives the engine downloads (pulumi-resource-vertex-training-vX.Y.Z-OS-ARCH.tar.gz,
# one per platform the launcher runs on, all alike: the launcher, which installs the
# release's vertex-training on first run, its VERSION and the LICENSE). The Go SDK ships
# as its module (a tag), nothing to pack. Each carries the schema's version, which
# `make sdks` stamped.
#
#   bash scripts/pack-sdks.sh OUT [nodejs] [python] [plugin]
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
out=$(mkdir -p "${1:?usage: pack-sdks.sh OUT [nodejs] [python] [plugin]}" && cd "$1" && pwd)
shift
[ $# -gt 0 ] || set -- nodejs python plugin
# The Python that builds the Python SDK (with `build`): PYTHON, else the virtualenv's
# (VENV, as the Makefile names it).
venv=${VENV:-.venv}
case $venv in /*) ;; *) venv=$root/$venv ;; esac
python=${PYTHON:-$venv/bin/python}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for language in "$@"; do
  case $language in
    nodejs)
      # The sources are compiled in a copy (npm install writes node_modules beside them);
      # the tarball is made of bin/, as Pulumi's own SDKs are.
      cp -r "$root/sdk/nodejs" "$work/nodejs"
      (
        cd "$work/nodejs"
        npm install --no-audit --no-fund --loglevel=error >&2
        npx tsc >&2
        cp package.json README.md LICENSE bin/
        cd bin && npm pack --loglevel=error --pack-destination "$out" >/dev/null
      )
      ;;
    python)
      cp -r "$root/sdk/python" "$work/python"
      "$python" -m build --no-isolation --outdir "$out" "$work/python" >&2
      ;;
    plugin)
      version=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["version"])' \
        "$root/provider/vertex_training/plugin/schema.json")
      mkdir "$work/plugin"
      cp "$root/provider/pulumi-resource-vertex-training" "$root/LICENSE" "$work/plugin/"
      echo "$version" > "$work/plugin/VERSION"
      for platform in linux-amd64 linux-arm64 darwin-amd64 darwin-arm64; do
        tar -czf "$out/pulumi-resource-vertex-training-v$version-$platform.tar.gz" \
          -C "$work/plugin" --owner=0 --group=0 pulumi-resource-vertex-training VERSION LICENSE
      done
      ;;
    *)
      echo "pack-sdks.sh: no package for $language (nodejs, python or plugin)" >&2
      exit 2
      ;;
  esac
done
ls "$out"
