#!/usr/bin/env bash
# Prints what release VERSION changes: its section of provider/CHANGELOG.md (from its
# `## [VERSION]` heading to the next `## ` heading), for the GitHub release's notes. Fails
# when the changelog has no such section: a release is tagged only once its changes are
# written down (docs/release.md).
#
#   bash scripts/release-notes.sh VERSION
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
version=${1:?usage: release-notes.sh VERSION}
notes=$(awk -v heading="## [$version]" '
  index($0, heading) == 1 { found = 1; next }
  found && /^## / { exit }
  found { print }
' "$root/provider/CHANGELOG.md")
if [ -z "$(printf '%s' "$notes" | tr -d '[:space:]')" ]; then
  echo "provider/CHANGELOG.md has no section \"## [$version]\": rename [Unreleased] to" \
    "[$version] with the release's date (docs/release.md)" >&2
  exit 1
fi
printf '%s\n' "$notes"
