# Sourced by scripts/demo and scripts/test: make .venv (installing Debian's python3-venv if it is missing) and
# install this package into it with the extras named in $FLEXROBOT_EXTRAS.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if [ ! -x .venv/bin/python ]; then
  if ! python3 -m venv .venv 2>/dev/null; then
    rm -rf .venv
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
      apt-get update -qq && apt-get install -y -qq python3-venv >/dev/null
    fi
    python3 -m venv .venv
  fi
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip
.venv/bin/python -m pip install --quiet --disable-pip-version-check ".${FLEXROBOT_EXTRAS:+[$FLEXROBOT_EXTRAS]}"
