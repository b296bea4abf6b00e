#!/usr/bin/env bash
# Builds the plugin's release archive for the machine it runs on into OUT:
# pulumi-resource-vertex-training-vX.Y.Z-OS-ARCH.tar.gz (the schema's version; OS linux,
# darwin or windows, ARCH amd64 or arm64), which needs neither a Python nor a package
# index where it is installed. PyInstaller bundles the plugin with the interpreter and
# every package it imports (tools/plugin-bundle/plugin.spec), in one folder: the archive
# holds the executable pulumi-resource-vertex-training (.exe on Windows) at its root, its
# _internal/ folder, VERSION and LICENSE. Pulumi's plugin archives are .tar.gz on every
# OS, Windows (under Git Bash) included. A bundle runs only on the OS and architecture it
# was built on, so the release builds each archive on a runner of its own.
#
# PYTHON is a Python with vertex-training and its dependencies installed, whose packages
# go into the bundle: the virtualenv's (VENV, as the Makefile names it) by default.
# PyInstaller is installed into it from tools/plugin-bundle/requirements.txt when it is
# missing or not the pinned release.
#
#   bash scripts/build-plugin.sh OUT [PYTHON]
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
out=$(mkdir -p "${1:?usage: build-plugin.sh OUT [PYTHON]}" && cd "$1" && pwd)
venv=${VENV:-.venv}
case $venv in /*) ;; *) venv=$root/$venv ;; esac
if [ -n "${2:-}" ]; then
  python=$2
elif [ -x "$venv/bin/python" ]; then
  python=$venv/bin/python
else
  python=$venv/Scripts/python.exe
fi
bundler=$root/tools/plugin-bundle

# A Windows Python takes Windows paths, not Git Bash's.
native() { if command -v cygpath >/dev/null; then cygpath -m "$1"; else printf '%s\n' "$1"; fi; }

case $(uname -s) in
  Linux) os=linux ;;
  Darwin) os=darwin ;;
  MINGW* | MSYS* | CYGWIN*) os=windows ;;
  *) echo "build-plugin.sh: no plugin archive for $(uname -s)" >&2; exit 2 ;;
esac
case $(uname -m) in
  x86_64 | amd64) arch=amd64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *) echo "build-plugin.sh: no plugin archive for $(uname -m)" >&2; exit 2 ;;
esac

# Every pin without a platform marker installed at its release, or install them all.
if ! "$python" - "$(native "$bundler/requirements.txt")" <<'EOF'; then
import re, sys
from importlib import metadata

for line in open(sys.argv[1]):
    pin = re.match(r"([A-Za-z0-9_.-]+)==([^;\s]+)\s*$", line)
    try:
        if pin and metadata.version(pin[1]) != pin[2]:
            sys.exit(1)
    except metadata.PackageNotFoundError:
        sys.exit(1)
EOF
  # Only into a virtualenv: a bare interpreter is the machine's, not the build's.
  "$python" -c 'import sys; sys.exit(sys.prefix == sys.base_prefix)' || {
    echo "build-plugin.sh: $python is not a virtualenv's and has no PyInstaller at the pins" \
      "of tools/plugin-bundle/requirements.txt: give the Python of a virtualenv with" \
      "vertex-training installed (make venv makes .venv)" >&2
    exit 1
  }
  echo "build-plugin.sh: installing PyInstaller into $python" >&2
  "$python" -m pip install --quiet --disable-pip-version-check \
    -r "$(native "$bundler/requirements.txt")" >&2
fi

version=$("$python" -c 'import json, sys; print(json.load(open(sys.argv[1]))["version"])' \
  "$(native "$root/provider/vertex_training/plugin/schema.json")")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$python" -m PyInstaller --noconfirm --log-level WARN \
  --distpath "$(native "$work/dist")" --workpath "$(native "$work/build")" \
  "$(native "$bundler/plugin.spec")" >&2
bundle=$work/dist/pulumi-resource-vertex-training
cp "$root/LICENSE" "$bundle/LICENSE"
echo "$version" > "$bundle/VERSION"

# The archive, by Python's tarfile (GNU tar and macOS's bsdtar take different options):
# entries in name order, owned by root.
archive=$out/pulumi-resource-vertex-training-v$version-$os-$arch.tar.gz
"$python" - "$(native "$bundle")" "$(native "$archive")" <<'EOF'
import sys
import tarfile
from pathlib import Path

folder, archive = Path(sys.argv[1]), sys.argv[2]


def owned_by_root(entry: tarfile.TarInfo) -> tarfile.TarInfo:
    entry.uid = entry.gid = 0
    entry.uname = entry.gname = ""
    return entry


with tarfile.open(archive, "w:gz") as tar:
    for path in sorted(folder.rglob("*")):
        name = path.relative_to(folder).as_posix()
        tar.add(path, name, recursive=False, filter=owned_by_root)
EOF
echo "$archive"
