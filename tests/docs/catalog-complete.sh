#!/bin/bash
# Every MESSAGE_ID in daemon/messages.h has an entry in the journal catalog, and the catalog
# has no entry for an id the daemon does not define. Prints the difference on failure.
set -euo pipefail
messages=$1 catalog=$2
diff -u --label messages.h --label hvtuned.catalog \
        <(grep -o '"[0-9a-f]\{32\}"' "$messages" | tr -d '"' | sort) \
        <(sed -n 's/^-- \([0-9a-f]\{32\}\)$/\1/p' "$catalog" | sort)
