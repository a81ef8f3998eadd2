#!/usr/bin/env bash
# HTTP benchmark: menu-server against the limit of its stack, Benchmarks/c-limit.c (libmicrohttpd
# serving the identical response bytes from memory, same threading mode), with wrk, in alternating
# rounds. Prints req/s for each and the ratio; then POST toggle throughput.
#   Benchmarks/http.sh            (ROUNDS=3 DURATION=10s CONNECTIONS=64 THREADS=2 SIZE=medium)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-3}
duration=${DURATION:-10s}
connections=${CONNECTIONS:-64}
threads=${THREADS:-2}
size=${SIZE:-medium}

scripts/install-deps wrk gcc
# One product per command: given several --product flags, swift build builds only the last one.
swift build -c release --product menu-server >&2
swift build -c release --product menu-bench >&2
bin=$(swift build -c release --show-bin-path)
work=$(mktemp -d)
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT

# Start a server in the background (not in a subshell, so cleanup can stop it); set $url from
# its "listening on http://..." line.
start() {
    local log=$1
    shift
    "$@" >"$log" 2>"$log.err" &
    pids+=($!)
    for _ in $(seq 100); do
        url=$(grep -o 'http://[0-9.]*:[0-9]*' "$log" 2>/dev/null | head -1) && [ -n "$url" ] && return
        sleep 0.1
    done
    echo "server did not start: $(cat "$log.err")" >&2
    exit 1
}

"$bin/menu-bench" --write-menu "$size" "$work/menu.json"
cc -O2 -o "$work/c-limit" Benchmarks/c-limit.c -lmicrohttpd
start "$work/server.out" "$bin/menu-server" --config "$work/menu.json" --port 0 --threads "$threads"
server=$url

# A session with some changes, and one page of 50 rows in the middle of its table.
session=$(curl -s -X POST "$server/sessions" | sed 's/.*"sessionId":"\([^"]*\)".*/\1/')
for group in g1 g3 g14 g25 g1112 g2223; do
    curl -s -o /dev/null -X POST -H "X-Session-Id: $session" "$server/groups/$group/toggle"
done
count=$(curl -s -H "X-Session-Id: $session" "$server/count" | sed 's/.*"count":\([0-9]*\).*/\1/')
path="/rows?offset=$((count / 2))&limit=50"
curl -s -H "X-Session-Id: $session" "$server$path" >"$work/body.json"
start "$work/limit.out" "$work/c-limit" 0 "$threads" "$work/body.json"
limit=$url
echo "menu: $size ($(wc -c <"$work/menu.json") bytes), $count visible rows; page $path = $(wc -c <"$work/body.json") bytes"
echo "wrk: $connections connections, ${duration} per round, $rounds alternating rounds; server threads: $threads; $(nproc) cores"

rate() { wrk -t2 -c"$connections" -d"$duration" "$@" | awk '/Requests\/sec/ {print $2}'; }
# A short unmeasured run against each first: the first seconds after start-up (cold caches, page
# faults in fresh connection pools) would otherwise count against whichever server goes first.
wrk -t2 -c"$connections" -d2s -H "X-Session-Id: $session" "$server$path" >/dev/null
wrk -t2 -c"$connections" -d2s -H "X-Session-Id: $session" "$limit$path" >/dev/null
ours=()
theirs=()
for round in $(seq "$rounds"); do
    ours+=("$(rate -H "X-Session-Id: $session" "$server$path")")
    theirs+=("$(rate -H "X-Session-Id: $session" "$limit$path")")
    echo "round $round: menu-server ${ours[-1]} req/s, c-limit ${theirs[-1]} req/s"
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
m_ours=$(median "${ours[@]}")
m_theirs=$(median "${theirs[@]}")
ratios=()
for i in "${!ours[@]}"; do ratios+=("$(awk -v a="${ours[$i]}" -v b="${theirs[$i]}" 'BEGIN {printf "%.3f", a / b}')"); done
echo "GET $path (50 rows): menu-server $m_ours req/s, c-limit $m_theirs req/s, ratio $(awk -v a="$m_ours" -v b="$m_theirs" 'BEGIN {printf "%.2f", a / b}') (target >= 0.80)"
echo "per-round ratios: ${ratios[*]}; median $(median "${ratios[@]}")"

# Writes: POST toggle on one session (one shard lock) and on many sessions (one per connection).
cat >"$work/toggle.lua" <<LUA
wrk.method = "POST"
wrk.headers["X-Session-Id"] = "$session"
LUA
echo "POST /groups/g14/toggle, one session: $(rate -s "$work/toggle.lua" "$server/groups/g14/toggle") req/s"
cat >"$work/toggles.lua" <<'LUA'
-- Each connection creates its own session on its first response, then toggles within it.
local session = nil
request = function()
    if session then
        return wrk.format("POST", "/groups/g25/toggle", { ["X-Session-Id"] = session })
    end
    return wrk.format("POST", "/sessions")
end
response = function(status, headers, body)
    if not session then session = headers["X-Session-Id"] end
end
LUA
echo "POST /groups/g25/toggle, a session per connection: $(rate -s "$work/toggles.lua" "$server/") req/s"
