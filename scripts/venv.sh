# Sourced by scripts/demo, scripts/test and scripts/test-ros2-wheels: make the virtual environment $FLEXROBOT_VENV
# (default .venv; installing Debian's python3-venv if it is missing) and install this package into it with the extras
# named in $FLEXROBOT_EXTRAS.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
VENV=${FLEXROBOT_VENV:-.venv}
if [ ! -x "$VENV/bin/python" ]; then
  if ! python3 -m venv "$VENV" 2>/dev/null; then
    rm -rf "$VENV"
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
      apt-get update -qq && apt-get install -y -qq python3-venv >/dev/null
    fi
    python3 -m venv "$VENV"
  fi
fi
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check ".${FLEXROBOT_EXTRAS:+[$FLEXROBOT_EXTRAS]}"
