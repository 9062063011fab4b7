#!/bin/sh
# A wrapper as npx, uvx or a launcher script is: it starts a helper of its own (here a sleeper that would
# outlive everything by itself), records the helper's pid in the file named by $HELPER_PIDS, then runs the
# real server as its own child and waits for it.
sleep 300 &
echo "$!" >> "$HELPER_PIDS"
"$@"
