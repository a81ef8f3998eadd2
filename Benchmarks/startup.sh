#!/usr/bin/env bash
# Start-up on the 1.1M-node synthetic menu, as a black box: the time from exec to the
# `menu-server listening on` line, the process's CPU time (user + system, all threads) and its
# resident memory at that moment, in ROUNDS runs (default 5); prints each run and the medians.
# Then the same menu reloaded in place (SIGHUP) ROUNDS times, from the server's own
# `menu reloaded` line (read, then served after).
#   Benchmarks/startup.sh            (ROUNDS=5 SIZE=large)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-5}
size=${SIZE:-large}
. Benchmarks/release-build.sh
"$bin/menu-bench" --write-menu "$size" "$work/menu.json"
# The reloads alternate between the menu and one with its top title changed (an unchanged file
# is not reloaded).
cp "$work/menu.json" "$work/menu-a.json"
sed '0,/"title":"Synthetic/s//"title":"Renamed/' "$work/menu.json" >"$work/menu-b.json"
echo "menu: $size ($(wc -c <"$work/menu.json") bytes); load average $(cut -d' ' -f1-3 /proc/loadavg)"
hz=$(getconf CLK_TCK)
walls=(); cpus=(); rsss=()
for round in $(seq "$rounds"); do
    : >"$work/out"
    start=$(date +%s%N)
    "$bin/menu-server" --config "$work/menu.json" --port 0 >"$work/out" 2>"$work/err" &
    pid=$!
    pids+=("$pid")
    until grep -q 'listening on' "$work/out" 2>/dev/null; do
        kill -0 "$pid" 2>/dev/null || { echo "menu-server exited: $(cat "$work/err")" >&2; exit 1; }
        sleep 0.005
    done
    end=$(date +%s%N)
    cpu=$(awk -v hz="$hz" '{printf "%.2f", ($14 + $15) / hz}' "/proc/$pid/stat")
    rss=$(awk '/VmRSS/ {printf "%.0f", $2 / 1024}' "/proc/$pid/status")
    wall=$(awk -v a="$start" -v b="$end" 'BEGIN {printf "%.2f", (b - a) / 1e9}')
    walls+=("$wall"); cpus+=("$cpu"); rsss+=("$rss")
    echo "start-up $round: ${wall} s to the listening line, ${cpu} s CPU, ${rss} MB resident"
    if [ "$round" = 1 ]; then
        for reload in $(seq "$rounds"); do
            if ((reload % 2)); then cp "$work/menu-b.json" "$work/menu.json"; else cp "$work/menu-a.json" "$work/menu.json"; fi
            kill -HUP "$pid"
            until [ "$(grep -c 'menu reloaded' "$work/err")" -ge "$reload" ]; do sleep 0.05; done
        done
        grep 'menu reloaded' "$work/err" | sed 's/^/  /'
        cp "$work/menu-a.json" "$work/menu.json"
    fi
    kill "$pid"; wait "$pid" 2>/dev/null || true
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "median: $(median "${walls[@]}") s to listening, $(median "${cpus[@]}") s CPU, $(median "${rsss[@]}") MB resident (target <= 2 s)"
