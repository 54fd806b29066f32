#!/bin/sh
# start_together.sh PREFIX N: run by each of N bench processes at the start
# of a pass (from their --hook), so that the N start it together: each takes
# the next of the directories PREFIX.1 .. PREFIX.N (mkdir is atomic) and
# waits, at most 60 s, for PREFIX.N, the last one's.
k=1
until mkdir "$1.$k" 2> /dev/null; do k=$((k + 1)); done
w=0
while [ ! -d "$1.$2" ] && [ $w -lt 6000 ]; do
	sleep 0.01
	w=$((w + 1))
done
