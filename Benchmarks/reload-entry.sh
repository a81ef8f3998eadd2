#!/usr/bin/env bash
# Issue 26 §4: a reload of the 1.1M-node menu as feed entries, with SESSIONS sessions in STORE
# (memory, disk: --data-dir with --fsync everysec, or redis: a redis-server of its own) (one in
# ten with TOGGLES groups toggled, the rest at the default). Prints the reload's own
# times (the server's log line), the time from SIGHUP to the reload entry on two open event
# streams (a default-state session's and a toggled one's), the entry's size when one dish was
# added to a group open by default, the time of GET /changes for READS more toggled sessions
# (each state a diff of its own), and VmRSS before, after the reload and after a second one
# (the server keeps the previous menu until the next reload) and once --reload-entry-window
# (WINDOW seconds) has run out after it.
#   Benchmarks/reload-entry.sh    (STORE=memory SESSIONS=10000 TOGGLES=3 READS=20 WINDOW=30 SIZE=large)
set -euo pipefail
cd "$(dirname "$0")/.."
sessions=${SESSIONS:-10000}
toggles=${TOGGLES:-3}
reads=${READS:-20}
window=${WINDOW:-30}
size=${SIZE:-large}
store=${STORE:-memory}

. Benchmarks/release-build.sh python3

case $store in
    memory) store_flags=() ;;
    disk) mkdir "$work/data" && store_flags=(--data-dir "$work/data") ;;
    redis)
        command -v redis-server >/dev/null || { echo "installing redis-server" >&2; apt-get install -y -qq redis-server >&2; }
        redis-server --port 0 --unixsocket "$work/redis.sock" --unixsocketperm 700 --save "" --appendonly no \
            --dir "$work" --daemonize no --logfile "$work/redis.log" &
        pids+=($!)
        for _ in $(seq 100); do [ -S "$work/redis.sock" ] && break; sleep 0.05; done
        store_flags=(--store "redis+unix://$work/redis.sock")
        ;;
    *) echo "STORE is memory, disk or redis, not $store" >&2; exit 64 ;;
esac

"$bin/menu-bench" --write-menu "$size" "$work/a.json"
cp "$work/a.json" "$work/menu.json"
"$bin/menu-server" --config "$work/menu.json" --port 0 --max-sessions $((sessions * 2)) --per-ip-connections 0 \
    --session-rate 0 --reload-entry-window "$window" "${store_flags[@]}" >"$work/server.out" 2>"$work/server.err" &
server_pid=$!
pids+=("$server_pid")
wait_for_url "$server_pid" "$work/server.out"
echo "menu: $size ($(wc -c <"$work/a.json") bytes); sessions: $sessions in $store; $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg)"

python3 - "$url" "$work" "$server_pid" "$sessions" "$toggles" "$reads" "$window" <<'PY'
import http.client, json, os, random, re, signal, socket, sys, time, urllib.parse
url, work, pid, count, toggles, reads, window = sys.argv[1], sys.argv[2], int(sys.argv[3]), *map(int, sys.argv[4:])
address = urllib.parse.urlsplit(url)
connection = http.client.HTTPConnection(address.hostname, address.port)

def call(method, path, session=None):
    connection.request(method, path, headers={"X-Session-Id": session} if session else {})
    response = connection.getresponse()
    body = response.read()
    if response.status not in (200, 201):
        sys.exit(f"{method} {path}: {response.status} {body[:200]}")
    return json.loads(body)

def rss():
    return int(re.search(r"VmRSS:\s+(\d+)", open(f"/proc/{pid}/status").read()).group(1)) / 1024

# The dish: a new row after the first leaf of the default view inside a group, so it is visible.
rows = call("GET", "/rows?offset=0&limit=200")["rows"]
anchor = next(row for row in rows if not row["isGroup"] and row["parentId"])
text = open(f"{work}/a.json").read()
needle = f'"id":"{anchor["id"]}"'
at = text.index(needle)
start = text.rindex("{", 0, at)
text = text[:start] + '{"id":"bench-new-dish","title":"New dish"},' + text[start:]
open(f"{work}/b.json", "w").write(text)

groups = re.findall(r'"id":"(g[0-9]+)"', open(f"{work}/a.json").read())
rng = random.Random(26)
plain, toggled = [], []
started = time.monotonic()
for index in range(count):
    session = call("POST", "/sessions")["sessionId"]
    if index % 10 == 0:
        for group in rng.sample(groups, toggles):
            call("POST", f"/groups/{group}/toggle", session)
        toggled.append(session)
    else:
        plain.append(session)
print(f"{count} sessions made in {time.monotonic() - started:.1f} s ({len(toggled)} toggled)")

def open_stream(session):
    revision = call("GET", "/count", session)["revision"]
    stream = socket.create_connection((address.hostname, address.port))
    stream.sendall(f"GET /changes?since={revision} HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n"
                   f"X-Session-Id: {session}\r\n\r\n".encode())
    buffer = b""
    while b"event: open" not in buffer:
        buffer += stream.recv(65536)
    return stream

def next_reload(stream):
    buffer = b""
    while True:
        buffer += stream.recv(65536)
        for block in buffer.split(b"\n\n"):
            if b"event: change" in block and b'"reload"' in block:
                return time.monotonic(), block.split(b"data: ", 1)[1]
            if b"event: reload" in block:
                return time.monotonic(), b"(a reload event: no entry)"

streams = {"default state": open_stream(plain[0]), "toggled state": open_stream(toggled[0])}
before = rss()
print(f"VmRSS before the reload: {before:.0f} MiB")

os.replace(f"{work}/b.json", f"{work}/menu.json")
sent = time.monotonic()
os.kill(pid, signal.SIGHUP)
for name, stream in streams.items():
    arrived, data = next_reload(stream)
    entry = json.loads(data) if data.startswith(b"{") else None
    reload = entry["reload"] if entry else None
    print(f"{name}: entry on the stream {1000 * (arrived - sent):.0f} ms after SIGHUP, {len(data)} bytes: "
          + (f'{len(reload["changes"])} splice(s) {reload["changes"]}, {len(reload["reconfigured"])} reconfigured'
             if reload else data.decode()))
time.sleep(0.5)
line = [l for l in open(f"{work}/server.err").read().splitlines() if "SIGHUP" in l][-1]
print("server:", line.split("SIGHUP: ")[1])
after = rss()
print(f"VmRSS after the reload: {after:.0f} MiB (+{after - before:.0f})")

durations = []
for session in toggled[1:1 + reads]:
    revision = call("GET", "/count", session)["revision"]
    started = time.monotonic()
    answer = call("GET", f"/changes?since={revision - 1}", session)
    durations.append(1000 * (time.monotonic() - started))
    assert answer["changes"] and "reload" in answer["changes"][-1], answer
durations.sort()
print(f"GET /changes of {len(durations)} toggled sessions (each its own diff): "
      f"median {durations[len(durations) // 2]:.0f} ms, max {durations[-1]:.0f} ms")
started = time.monotonic()
for session in plain[1:1 + reads]:
    revision = call("GET", "/count", session)["revision"]
    call("GET", f"/changes?since={revision - 1}", session)
print(f"GET /changes of {reads} default-state sessions (one cached diff): "
      f"{1000 * (time.monotonic() - started) / reads:.1f} ms each with its GET /count")

os.replace(f"{work}/a.json", f"{work}/menu.json")
os.kill(pid, signal.SIGHUP)
while sum("SIGHUP" in l for l in open(f"{work}/server.err").read().splitlines()) < 2:
    time.sleep(0.1)
time.sleep(0.5)
second = time.monotonic()
print(f"VmRSS after a second reload (the first's old menu freed): {rss():.0f} MiB")
time.sleep(max(0, window + 1 - (time.monotonic() - second)))
print(f"VmRSS once the {window} s window ran out (only the served menu): {rss():.0f} MiB")
PY
