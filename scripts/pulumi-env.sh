# Sourced by the Makefile and the tests: runs Pulumi offline, from the project's own
# tools, with state in a local file backend under .state/ (no Pulumi Cloud account).
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export PATH="$root/.tools/bin:$root/.venv/bin:$PATH"
export PULUMI_HOME="$root/.state/home"
export PULUMI_BACKEND_URL="file://$root/.state/backend"
export PULUMI_SKIP_UPDATE_CHECK=true
export PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION=true
# The `local` stack's secrets are encrypted with this passphrase; set your own for others.
export PULUMI_CONFIG_PASSPHRASE="${PULUMI_CONFIG_PASSPHRASE-vertex-training-local}"
mkdir -p "$PULUMI_HOME" "$root/.state/backend"
