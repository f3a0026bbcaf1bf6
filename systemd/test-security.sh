#!/bin/bash
# The unit's exposure as systemd-analyze rates it, offline (no running systemd needed): at
# most 2.0, the bar of hvtuned.service. Prints the table on failure.
# usage: test-security.sh UNIT_FILE
set -euo pipefail
command -v systemd-analyze > /dev/null || { echo "SKIP: no systemd-analyze"; exit 77; }
out=$(systemd-analyze security --offline=yes --no-pager "$1" 2>&1)
level=$(echo "$out" | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
[ -n "$level" ] || { echo "FAIL: no exposure level in:"; echo "$out"; exit 1; }
echo "exposure level: $level"
if ! python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) <= 2.0 else 1)" "$level"; then
        echo "FAIL: exposure $level is above 2.0:"; echo "$out"; exit 1
fi
