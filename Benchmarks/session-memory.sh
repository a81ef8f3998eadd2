#!/usr/bin/env bash
# Session memory under a flood of large sessions: menu-server (release) on a 100,000-group menu,
# sent REQUESTS times `POST /sessions` with a body of about 65,000 bytes listing 8,262 random
# group ids (each request different, fixed seed) over one keep-alive connection. Prints the
# server's VmRSS before and after (and VmHWM), the answers by status, and the server's own
# menu_session_bytes against menu_session_memory_budget_bytes. Exits 1 unless the resident memory
# grew by at most the budget (the sessions' own bytes stop at 15/16 of it; the rest is what glibc
# keeps beside them, with the mmap threshold menu-server fixes at start-up).
#   Benchmarks/session-memory.sh    (REQUESTS=10000 MEMORY=32M EVICT_IDLE=0)
# EVICT_IDLE=0 makes every idle session evictable, so each request past the budget evicts and
# creates (the churn that fragments memory most); the default 3600 makes them 429 instead.
set -euo pipefail
cd "$(dirname "$0")/.."
requests=${REQUESTS:-10000}
memory=${MEMORY:-32M}
evict_idle=${EVICT_IDLE:-0}

. Benchmarks/release-build.sh python3 curl

# 1,000 top-level groups of 99 groups each (100,000 groups), each inner group holding one row.
# Group ids are their numbers in decimal, so 8,262 of them fill about 65,000 bytes.
python3 - "$work/menu.json" <<'PY'
import sys
items = []
for top in range(1000):
    children = [f'{{"id":"{1000 + top * 99 + k}","title":"Group {1000 + top * 99 + k}","items":[{{"id":"r{1000 + top * 99 + k}","title":"Dish"}}]}}'
                for k in range(99)]
    items.append(f'{{"id":"{top}","title":"Top {top}","items":[{",".join(children)}]}}')
open(sys.argv[1], "w").write('{"title":"Session memory","items":[' + ",".join(items) + "]}")
PY

"$bin/menu-server" --config "$work/menu.json" --port 0 --quiet --session-memory "$memory" \
    --session-evict-idle "$evict_idle" >"$work/server.out" 2>"$work/server.err" &
server_pid=$!
pids+=("$server_pid")
wait_for_url "$server_pid" "$work/server.out" "$work/server.err"
kib() { sed -n "s/^$1:[[:space:]]*\([0-9]*\) kB/\1/p" "/proc/$server_pid/status"; }
metric() { curl -s "$url/metrics" | sed -n "s/^$1 //p"; }
curl -s -o /dev/null "$url/rows?limit=50"
before=$(kib VmRSS)

python3 - "$url" "$requests" <<'PY'
import collections, http.client, json, random, sys, urllib.parse
url, count = sys.argv[1], int(sys.argv[2])
address = urllib.parse.urlsplit(url)
connection = http.client.HTTPConnection(address.hostname, address.port)
rng = random.Random(24)
statuses, sizes, codes = collections.Counter(), [], collections.Counter()
for _ in range(count):
    ids = rng.sample(range(100_000), 8_262)
    body = json.dumps({"expanded": [str(i) for i in ids]}, separators=(",", ":")).encode()
    sizes.append(len(body))
    connection.request("POST", "/sessions", body=body, headers={"Content-Type": "application/json"})
    response = connection.getresponse()
    answer = response.read()
    statuses[response.status] += 1
    if response.status >= 400:
        codes[json.loads(answer)["error"]["code"]] += 1
print(f"requests: {count}, bodies {min(sizes)}-{max(sizes)} bytes; answers: "
      + ", ".join(f"{status} x{n}" for status, n in sorted(statuses.items()))
      + ("; " + ", ".join(f"{code} x{n}" for code, n in sorted(codes.items())) if codes else ""))
PY
after=$(kib VmRSS)
hwm=$(kib VmHWM)
bytes=$(metric menu_session_bytes)
budget=$(metric menu_session_memory_budget_bytes)
live=$(metric menu_sessions_live)
evicted=$(metric menu_sessions_evicted_total)
mib() { awk -v k="$1" 'BEGIN {printf "%.1f", k / 1024}'; }
echo "VmRSS before: $(mib "$before") MiB (menu loaded), after: $(mib "$after") MiB, peak VmHWM $(mib "$hwm") MiB"
echo "sessions held: $live ($evicted evicted); menu_session_bytes $bytes of budget $budget ($(awk -v b="$bytes" -v l="$live" 'BEGIN {printf "%.0f", (l > 0 ? b / l : 0)}') bytes a session)"
limit=$(( before + budget / 1024 ))
echo "VmRSS after - before: $(mib $(( after - before ))) MiB; budget $(mib $(( budget / 1024 ))) MiB: $([ "$after" -le "$limit" ] && echo "within" || echo "NOT within") the budget"
[ "$after" -le "$limit" ]
