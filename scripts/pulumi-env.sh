# Sourced by the Makefile and the tests: runs Pulumi offline, from the project's own
# tools, with state in a local file backend under .state/ (no Pulumi Cloud account).
# VENV names the project's virtualenv (.venv, as Pulumi.yaml says, unless told otherwise).
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv=${VENV:-.venv}
case $venv in /*) ;; *) venv=$root/$venv ;; esac
export PATH="${VERTEX_TOOLS_DIR:-$root/.tools}/bin:$venv/bin:$PATH"
# The language host built from tools/language-host is not handed Pulumi.yaml's
# `virtualenv` option by newer CLIs: it runs the program with this Python instead. An
# installed CLI's own host reads the option and ignores this.
export PULUMI_PYTHON_CMD="$venv/bin/python"
export PULUMI_HOME="$root/.state/home"
export PULUMI_BACKEND_URL="file://$root/.state/backend"
export PULUMI_SKIP_UPDATE_CHECK=true
export PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION=true
# The `local` stack's secrets are encrypted with this passphrase; set your own for others.
export PULUMI_CONFIG_PASSPHRASE="${PULUMI_CONFIG_PASSPHRASE-vertex-training-local}"
mkdir -p "$PULUMI_HOME" "$root/.state/backend"
