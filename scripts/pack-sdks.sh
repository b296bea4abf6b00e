#!/usr/bin/env bash
# Builds the release's packages of the checked-in SDKs (sdk/, `make sdks`) into OUT, as
# users install them: for nodejs the npm tarball (TypeScript compiled, with its
# declarations, README and LICENSE: what `npm publish` uploads); for python the wheel and
# sdist of pulumi-vertex-training. The Go SDK ships as its module (a tag), nothing to pack.
# Each package's version is the schema's, which `make sdks` stamped.
#
#   bash scripts/pack-sdks.sh OUT [nodejs] [python]
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
out=$(mkdir -p "${1:?usage: pack-sdks.sh OUT [nodejs] [python]}" && cd "$1" && pwd)
shift
[ $# -gt 0 ] || set -- nodejs python
python=${PYTHON:-$root/.venv/bin/python}
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
    *)
      echo "pack-sdks.sh: no package for $language (nodejs or python)" >&2
      exit 2
      ;;
  esac
done
ls "$out"
