#!/usr/bin/env bash
# Builds the release's packages of the checked-in SDKs (sdk/, `make sdks`) and the
# plugin's archive into OUT, as users install them: for nodejs the npm tarball
# (TypeScript compiled, with its declarations, README and LICENSE: what `npm publish`
# uploads); for python the wheel and sdist of pulumi-vertex-training; for plugin the
# archive the engine downloads for this machine's OS and architecture
# (pulumi-resource-vertex-training-vX.Y.Z-OS-ARCH.tar.gz, scripts/build-plugin.sh: the
# plugin bundled with its own interpreter, which needs no Python where it runs; the
# release builds each platform's on a runner of that platform). The Go SDK ships as its
# module (a tag), nothing to pack. Each carries the schema's version, which `make sdks`
# stamped.
#
#   bash scripts/pack-sdks.sh OUT [nodejs] [python] [plugin]
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
out=$(mkdir -p "${1:?usage: pack-sdks.sh OUT [nodejs] [python] [plugin]}" && cd "$1" && pwd)
shift
[ $# -gt 0 ] || set -- nodejs python plugin
# The Python that builds the Python SDK (with `build`) and bundles the plugin: PYTHON,
# else the virtualenv's (VENV, as the Makefile names it).
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
      # The bundle takes its packages from the virtualenv (never PYTHON, which `make`
      # hands down and may be a bare interpreter without the package).
      bash "$root/scripts/build-plugin.sh" "$out" "$venv/bin/python" >/dev/null
      ;;
    *)
      echo "pack-sdks.sh: no package for $language (nodejs, python or plugin)" >&2
      exit 2
      ;;
  esac
done
ls "$out"
