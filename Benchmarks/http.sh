#!/usr/bin/env bash
# HTTP benchmark: menu-server against the limit of its stack, Benchmarks/c-limit.c (libmicrohttpd
# serving the identical response bytes from memory, same threading mode), with wrk, in rounds of
# one run against each (which goes first alternates, so neither always follows the other).
# Prints req/s for each and the ratio, and a revalidation answered 304 against the c-limit's full
# page; then POST toggle throughput. The headline ratio is the
# median of the per-round ratios: a round's two runs are seconds apart and share the machine's
# conditions, which drift by 20% and more over a minute on this shared VM.
# Each round also reports each server's CPU time and preemptions (involuntary context switches
# of all its threads) per request, from /proc.
#   Benchmarks/http.sh            (ROUNDS=9 DURATION=5s CONNECTIONS=64 THREADS=2 SIZE=medium)
#   WRK_POLICY=batch Benchmarks/http.sh   wrk under SCHED_BATCH: it keeps its share of the CPUs,
#                                 but a wrk thread woken by a response no longer preempts the
#                                 server that sent it (a different split of the cores, not a
#                                 different cost: docs/performance.md, "Who preempts whom")
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-9}
duration=${DURATION:-5s}
connections=${CONNECTIONS:-64}
threads=${THREADS:-2}
size=${SIZE:-medium}
case ${WRK_POLICY:-normal} in
    normal) wrk=(wrk) ;;
    batch) wrk=(chrt --batch 0 wrk) ;;
    *) echo "WRK_POLICY is normal or batch, not $WRK_POLICY" >&2; exit 64 ;;
esac

. Benchmarks/release-build.sh wrk gcc

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
# wrk's connections all come from 127.0.0.1: no per-IP limit (CONNECTIONS may pass the default).
start "$work/server.out" "$bin/menu-server" --config "$work/menu.json" --port 0 --threads "$threads" \
    --per-ip-connections 0
server=$url

# A session with some changes, and one page of 50 rows in the middle of its table.
session=$(curl -s -X POST "$server/sessions" | sed 's/.*"sessionId":"\([^"]*\)".*/\1/')
for group in g1 g3 g14 g25 g1112 g2223; do
    curl -s -o /dev/null -X POST -H "X-Session-Id: $session" "$server/groups/$group/toggle"
done
count=$(curl -s -H "X-Session-Id: $session" "$server/count" | sed 's/.*"count":\([0-9]*\).*/\1/')
path="/rows?offset=$((count / 2))&limit=50"
curl -s -H "X-Session-Id: $session" "$server$path" >"$work/body.json"
etag=$(curl -si -H "X-Session-Id: $session" "$server$path" | tr -d '\r' | sed -n 's/^ETag: //p')
[ "$(curl -s -o /dev/null -w '%{http_code}' -H "X-Session-Id: $session" -H "If-None-Match: $etag" "$server$path")" = 304 ] \
    || { echo "a revalidation with If-None-Match: $etag does not answer 304" >&2; exit 1; }
start "$work/limit.out" "$work/c-limit" 0 "$threads" "$work/body.json"
limit=$url
echo "menu: $size ($(wc -c <"$work/menu.json") bytes), $count visible rows; page $path = $(wc -c <"$work/body.json") bytes"
echo "wrk (${WRK_POLICY:-normal} scheduling): $connections connections, ${duration} per round, $rounds alternating rounds; server threads: $threads; $(nproc) cores"

rate() { "${wrk[@]}" -t2 -c"$connections" -d"$duration" "$@" | awk '/Requests\/sec/ {print $2}'; }
# A short unmeasured run against each first: the first seconds after start-up (cold caches, page
# faults in fresh connection pools) would otherwise count against whichever server goes first.
"${wrk[@]}" -t2 -c"$connections" -d2s -H "X-Session-Id: $session" "$server$path" >/dev/null
"${wrk[@]}" -t2 -c"$connections" -d2s -H "X-Session-Id: $session" "$limit$path" >/dev/null
# Involuntary context switches of all the threads of process $1 so far (preemptions).
preemptions() { cat /proc/"$1"/task/*/status 2>/dev/null | awk '/^nonvoluntary_ctxt_switches/ {n += $2} END {print n + 0}'; }
# One wrk run against the server with pid $1: prints "req/s CPU-microseconds-per-request
# preemptions-per-request".
measure() {
    local pid=$1
    shift
    local before after output switches_before switches_after
    before=$(awk '{print $14 + $15}' "/proc/$pid/stat")
    switches_before=$(preemptions "$pid")
    output=$("${wrk[@]}" -t2 -c"$connections" -d"$duration" "$@")
    after=$(awk '{print $14 + $15}' "/proc/$pid/stat")
    switches_after=$(preemptions "$pid")
    echo "$output" | awk -v ticks=$((after - before)) -v hz="$(getconf CLK_TCK)" -v switches=$((switches_after - switches_before)) '
        /requests in/ {n = $1} /Requests\/sec/ {r = $2}
        END {printf "%s %.2f %.3f\n", r, ticks / hz / n * 1e6, switches / n}'
}
ours=()
ratios304=()
theirs=()
ratios=()
cpu_ratios=()
preempted=()
preempted_limit=()
preempted_304=()
for round in $(seq "$rounds"); do
    if ((round % 2)); then
        read -r rate_ours cpu_ours switches_ours < <(measure "${pids[0]}" -H "X-Session-Id: $session" "$server$path")
        read -r rate_theirs cpu_theirs switches_theirs < <(measure "${pids[1]}" -H "X-Session-Id: $session" "$limit$path")
    else
        read -r rate_theirs cpu_theirs switches_theirs < <(measure "${pids[1]}" -H "X-Session-Id: $session" "$limit$path")
        read -r rate_ours cpu_ours switches_ours < <(measure "${pids[0]}" -H "X-Session-Id: $session" "$server$path")
    fi
    # The revalidation: a 304 from menu-server against the c-limit's full page of the same round.
    read -r rate_304 cpu_304 switches_304 < <(measure "${pids[0]}" -H "X-Session-Id: $session" -H "If-None-Match: $etag" "$server$path")
    ratios304+=("$(awk -v a="$rate_304" -v b="$rate_theirs" 'BEGIN {printf "%.3f", a / b}')")
    ours+=("$rate_ours")
    preempted+=("$switches_ours")
    preempted_limit+=("$switches_theirs")
    preempted_304+=("$switches_304")
    theirs+=("$rate_theirs")
    ratios+=("$(awk -v a="$rate_ours" -v b="$rate_theirs" 'BEGIN {printf "%.3f", a / b}')")
    cpu_ratios+=("$(awk -v a="$cpu_ours" -v b="$cpu_theirs" 'BEGIN {printf "%.3f", b / a}')")
    echo "round $round: menu-server $rate_ours req/s ($cpu_ours us CPU, $switches_ours preemptions/request), c-limit $rate_theirs req/s ($cpu_theirs us, $switches_theirs); ratio ${ratios[-1]}; 304 $rate_304 req/s ($cpu_304 us, $switches_304), ${ratios304[-1]} of the c-limit's page"
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
quartiles() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+3)/4)] "-" a[int((3*NR+3)/4)]}'; }
m_ours=$(median "${ours[@]}")
m_theirs=$(median "${theirs[@]}")
echo "GET $path (50 rows): ratio $(median "${ratios[@]}") (median of the per-round ratios; quartiles $(quartiles "${ratios[@]}"); target >= 0.80)"
echo "per-round req/s ratios: ${ratios[*]}"
echo "GET $path with If-None-Match (304): ratio $(median "${ratios304[@]}") of the c-limit's full page (quartiles $(quartiles "${ratios304[@]}"); target >= 1.0); per round: ${ratios304[*]}"
echo "medians: menu-server $m_ours req/s, c-limit $m_theirs req/s (ratio of the medians $(awk -v a="$m_ours" -v b="$m_theirs" 'BEGIN {printf "%.2f", a / b}'))"
echo "preemptions per request (medians): menu-server's page $(median "${preempted[@]}"), its 304 $(median "${preempted_304[@]}"), c-limit $(median "${preempted_limit[@]}")"
echo "per-round CPU-per-request ratios (c-limit / menu-server): ${cpu_ratios[*]}; median $(median "${cpu_ratios[@]}")"

# Writes: POST toggle on one session (one shard lock) and on many sessions (one per connection),
# on groups the menu has (the synthetic menus name groups g<N>, rows r<N>); each is checked to
# answer 200 first, so a figure is never the rate of a 404.
groups=($(grep -o '"id":"g[0-9]*"' "$work/menu.json" | sed -n '1,30s/"id":"\(.*\)"/\1/p'))
one=${groups[13]}
many=${groups[24]}
answers() { curl -s -o /dev/null -w '%{http_code}' -X POST ${2:+-H "X-Session-Id: $2"} "$1/groups/$3/toggle"; }
[ "$(answers "$server" "$session" "$one")" = 200 ] || { echo "POST /groups/$one/toggle does not answer 200" >&2; exit 1; }
cat >"$work/toggle.lua" <<LUA
wrk.method = "POST"
wrk.headers["X-Session-Id"] = "$session"
LUA
cat >"$work/toggles.lua" <<LUA
-- Each connection creates its own session on its first response, then toggles within it.
local session = nil
request = function()
    if session then
        return wrk.format("POST", "/groups/$many/toggle", { ["X-Session-Id"] = session })
    end
    return wrk.format("POST", "/sessions")
end
response = function(status, headers, body)
    if not session then session = headers["X-Session-Id"] end
end
LUA
echo "POST /groups/$one/toggle, one session: $(rate -s "$work/toggle.lua" "$server/groups/$one/toggle") req/s"
echo "POST /groups/$many/toggle, a session per connection: $(rate -s "$work/toggles.lua" "$server/") req/s"

# The same writes with durable sessions (--data-dir), for each --fsync policy.
for policy in no everysec always; do
    mkdir -p "$work/data-$policy"
    start "$work/durable-$policy.out" "$bin/menu-server" --config "$work/menu.json" --port 0 --threads "$threads" \
        --per-ip-connections 0 --data-dir "$work/data-$policy" --fsync "$policy"
    durable=$url
    [ "$(answers "$durable" "" "$many")" = 200 ] || { echo "durable POST /groups/$many/toggle does not answer 200" >&2; exit 1; }
    echo "POST /groups/$many/toggle, a session per connection, --data-dir --fsync $policy: $(rate -s "$work/toggles.lua" "$durable/") req/s"
    kill "${pids[-1]}"
done
