#!/usr/bin/env bash
# Live reload benchmark: menu-server on the 1.1M-node synthetic menu, its config swapped between
# two versions RELOADS times with SIGHUP while wrk reads pages, with and without a session.
# Prints each reload's durations (from the server's log line) and VmRSS after it; the peak VmHWM
# at start-up and during the reloads; wrk's p99 and max latency during the reload phase against
# a phase of the same length without reloads; and at the end VmRSS against the single-menu figure
# measured before any reload (then, with gdb present, VmRSS after malloc_trim(0) in the server:
# what glibc holds freed but not returned).
#   Benchmarks/reload.sh    (RELOADS=10 SESSIONS=3000 TOGGLES=5 CONNECTIONS=20 THREADS=2 SIZE=large)
# MALLOC_ARENA_MAX and other glibc variables in the environment reach the server unchanged.
set -euo pipefail
cd "$(dirname "$0")/.."
reloads=${RELOADS:-10}
sessions=${SESSIONS:-3000}
toggles=${TOGGLES:-5}
connections=${CONNECTIONS:-20}
threads=${THREADS:-2}
size=${SIZE:-large}

. Benchmarks/release-build.sh wrk python3

# Version A, and version B: a changed copy whose version hash differs but whose ids mostly stay.
# B renames the dishes whose number ends in 7 (a tenth of the rows), expands by default the groups
# whose number ends in 3 that were collapsed, and gives new ids to the dishes ending in 99 (so the
# translation meets ids that left the menu and ids that are new).
"$bin/menu-bench" --write-menu "$size" "$work/a.json"
sed -e 's/"title":"Dish \([0-9]*7\)"/"title":"Plat \1"/g' \
    -e 's/"id":"\(g[0-9]*3\)","title":"\([^"]*\)","expanded":false/"id":"\1","title":"\2","expanded":true/g' \
    -e 's/"id":"r\([0-9]*99\)"/"id":"n\1"/g' "$work/a.json" >"$work/b.json"
# The server reads menu.json, a symbolic link switched by rename (atomic) to a.json or b.json.
use() { ln -sfn "$1" "$work/next.json" && mv -T "$work/next.json" "$work/menu.json"; }
use a.json

"$bin/menu-server" --config "$work/menu.json" --port 0 --threads "$threads" --per-ip-connections 0 \
    >"$work/server.out" 2>"$work/server.err" &
server_pid=$!
pids+=("$server_pid")
url=
: >"$work/server.out"
for _ in $(seq 600); do
    url=$(sed -n 's|.*\(http://[0-9.]*:[0-9]*\).*|\1|p' "$work/server.out")
    [ -n "$url" ] && break
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.1
done
[ -n "$url" ] || { echo "server did not start: $(cat "$work/server.err")" >&2; exit 1; }
kib() { sed -n "s/^$1:[[:space:]]*\([0-9]*\) kB/\1/p" "/proc/$server_pid/status"; }
mib() { awk -v k="$1" 'BEGIN {printf "%.0f", k / 1024}'; }
startup_hwm=$(kib VmHWM)

# SESSIONS sessions, each with TOGGLES random groups toggled (fixed seed), over one keep-alive
# connection; prints their ids, one a line.
python3 - "$url" "$work/a.json" "$sessions" "$toggles" >"$work/sessions.txt" <<'PY'
import http.client, random, re, sys, urllib.parse
url, menu_path, count, toggles = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
groups = re.findall(rb'"id":"(g[0-9]+)"', open(menu_path, "rb").read())
rng = random.Random(12)
address = urllib.parse.urlsplit(url)
connection = http.client.HTTPConnection(address.hostname, address.port)
def call(method, path, session=None):
    connection.request(method, path, headers={"X-Session-Id": session} if session else {})
    response = connection.getresponse()
    response.read()
    if response.status not in (200, 201):
        sys.exit(f"{method} {path}: {response.status}")
    return response
for _ in range(count):
    session = call("POST", "/sessions").getheader("X-Session-Id")
    for group in rng.sample(groups, toggles):
        call("POST", f"/groups/{group.decode()}/toggle", session)
    print(session)
PY
[ "$(wc -l <"$work/sessions.txt")" = "$sessions" ] || { echo "created $(wc -l <"$work/sessions.txt") sessions, not $sessions" >&2; exit 1; }
count=$(curl -s "$url/count" | sed 's/.*"count":\([0-9]*\).*/\1/')
path="/rows?offset=$((count / 2))&limit=50"
# Each request with a session names the next of the first 1,000 sessions, so reloads meet
# sessions not yet carried over (the lazy path) as well as the background rebase.
{
    echo "local sessions = {"
    sed -n '1,1000s/.*/"&",/p' "$work/sessions.txt"
    echo "}"
    cat <<LUA
local index = 0
request = function()
    index = index % #sessions + 1
    return wrk.format("GET", "$path", { ["X-Session-Id"] = sessions[index] })
end
LUA
} >"$work/sessions.lua"

echo "menu: $size ($(wc -c <"$work/a.json") bytes; b.json $(wc -c <"$work/b.json") bytes), $count visible rows by default; page $path"
echo "sessions: $sessions, $toggles groups toggled in each; wrk: 2 runs at once (with X-Session-Id over the first $((sessions < 1000 ? sessions : 1000)) sessions, and without), $((connections / 2)) connections each; server threads: $threads; $(nproc) cores"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"

# Load: two wrk runs at once, one thread each, for $1 seconds or (no argument) until stopped
# with SIGINT, which makes wrk print its figures; output in $work/wrk-{session,anonymous}-$phase.
load_pids=()
start_load() {
    local phase=$1 duration=${2:-3600}
    wrk -t1 -c$((connections / 2)) -d"${duration}s" --latency -s "$work/sessions.lua" "$url" >"$work/wrk-session-$phase" &
    load_pids=($!)
    wrk -t1 -c$((connections / 2)) -d"${duration}s" --latency "$url$path" >"$work/wrk-anonymous-$phase" &
    load_pids+=($!)
}
stop_load() { kill -INT "${load_pids[@]}" 2>/dev/null || true; wait "${load_pids[@]}"; }
# "p99 max req/s non-2xx" from one wrk output.
latency() {
    awk '/Latency  / {max = $4} /^ *99%/ {p99 = $2} /Requests\/sec/ {rate = $2}
         /Non-2xx/ {bad = $NF} END {printf "%s %s %.0f %d\n", p99, max, rate, bad}' "$1"
}

# Warm up (connection pools, the page's cache lines), then the single-menu figure.
start_load warmup 3
wait "${load_pids[@]}"
sleep 1
single_rss=$(kib VmRSS)
single_hwm=$(kib VmHWM)
echo "before any reload: VmRSS $(mib "$single_rss") MiB, VmHWM $(mib "$single_hwm") MiB (start-up peak $(mib "$startup_hwm") MiB)"
# Reset VmHWM to the current RSS, so the peak below is the reload phase's own (Linux clear_refs 5).
echo 5 >"/proc/$server_pid/clear_refs"

# The reload phase: under load, RELOADS reloads alternating b.json and a.json, each one waited for
# through its log line before the next starts.
printf '\n%-7s %-7s %10s %10s %12s %9s %12s\n' reload to "read ms" "serve ms" "carry ms" sessions "VmRSS MiB"
phase_start=$(date +%s.%N)
start_load reload
sleep 1
for n in $(seq "$reloads"); do
    if ((n % 2)); then use b.json; else use a.json; fi
    before=$(grep -c 'SIGHUP: ' "$work/server.err" || true)
    kill -HUP "$server_pid"
    for _ in $(seq 1200); do
        (($(grep -c 'SIGHUP: ' "$work/server.err" || true) > before)) && break
        sleep 0.05
    done
    line=$(sed -n '/SIGHUP: /h; ${x;p}' "$work/server.err")
    case $line in *"menu reloaded"*) ;; *) echo "reload $n failed: $line" >&2; exit 1 ;; esac
    echo "$line" | sed -n 's/.*-> \([0-9a-f]*\),.*read in \([0-9.]*\) ms, served after \([0-9.]*\) ms more; \([0-9]*\) sessions* carried over in \([0-9.]*\) ms.*/\1 \2 \3 \5 \4/p' |
        { read -r version read_ms serve_ms carry_ms carried
          printf '%-7s %-7s %10s %10s %12s %9s %12s\n' "$n" "${version:0:6}" "$read_ms" "$serve_ms" "$carry_ms" "$carried" "$(mib "$(kib VmRSS)")"; }
done
sleep 1
stop_load
phase_seconds=$(awk -v a="$phase_start" -v b="$(date +%s.%N)" 'BEGIN {printf "%.0f", b - a}')
reload_hwm=$(kib VmHWM)

# The same load for the same time, no reload.
start_load steady "$phase_seconds"
wait "${load_pids[@]}"
sleep 1
after_rss=$(kib VmRSS)

echo
echo "peak VmHWM during the reload phase: $(mib "$reload_hwm") MiB (single menu, before: VmRSS $(mib "$single_rss") MiB)"
printf '%-42s %10s %10s %9s %8s\n' "phase (${phase_seconds} s each)" "p99" "max" "req/s" "non-2xx"
for phase in reload steady; do
    for kind in session anonymous; do
        read -r p99 max rate bad < <(latency "$work/wrk-$kind-$phase")
        printf '%-42s %10s %10s %9s %8s\n' "$phase, $([ "$kind" = session ] && echo "with X-Session-Id" || echo "no session")" "$p99" "$max" "$rate" "$bad"
    done
done
echo
echo "after $reloads reloads and the steady phase: VmRSS $(mib "$after_rss") MiB against $(mib "$single_rss") MiB before ($(awk -v a="$after_rss" -v b="$single_rss" 'BEGIN {printf "%+.0f", (a - b) / 1024}') MiB)"
if command -v gdb >/dev/null; then
    gdb -p "$server_pid" -batch -ex 'call (int) malloc_trim(0)' >"$work/gdb.out" 2>&1 || true
    echo "after malloc_trim(0) in the server (gdb): VmRSS $(mib "$(kib VmRSS)") MiB"
fi
