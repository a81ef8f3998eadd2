#!/usr/bin/env python3
"""Issue 26 §4: what event streams of GET /changes cost, against running menu-servers.

Run by scripts/bench-streams, which starts the servers (and Redis) and passes their URLs:
  streams.py --memory URL --pid PID [--redis-a URL --redis-b URL] [--streams N] [--samples N]

Prints, for the memory store:
  - resident memory per idle keep-alive connection (one GET /count each) and per idle stream
    (one per session), N of each, as resident-memory differences; also on a server with
    --connection-memory 8192 (libmicrohttpd's pool per connection, 32 KiB by default);
  - the time from a write's answer to its event on another connection's stream, p50 and p99,
    with 1,000 other streams open (a write of a session whose stream is watched, in turn);
  - GET /rows?limit=50 throughput (wrk, 2 threads, 8 connections, 5 s) without streams and with
    1,000 idle streams open, alternating, 5 rounds each, the median;
and, with --redis-a/--redis-b (two instances on one Redis), the same time across instances: the
stream held on B, the write made on A.
No figure is checked: they are printed for docs/performance.md.
"""
import argparse
import http.client
import json
import selectors
import socket
import re
import subprocess
import time
import urllib.parse


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def new_sessions(url, count):
    parsed = urllib.parse.urlparse(url)
    connection = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=30)
    ids = []
    for _ in range(count):
        connection.request("POST", "/sessions", body=b"")
        response = connection.getresponse()
        response.read()
        ids.append(response.getheader("X-Session-Id"))
    connection.close()
    return ids


class Stream:
    """One open GET /changes event stream on a raw socket, read when the selector says so."""

    def __init__(self, url, session):
        parsed = urllib.parse.urlparse(url)
        self.socket = socket.create_connection((parsed.hostname, parsed.port))
        self.socket.setblocking(False)
        request = (f"GET /changes?since=0 HTTP/1.1\r\nHost: {parsed.hostname}\r\nAccept: text/event-stream\r\n"
                   f"X-Session-Id: {session}\r\n\r\n")
        self.socket.sendall(request.encode())
        self.buffer = b""

    def read(self):
        """The bytes received now (non-blocking)."""
        try:
            data = self.socket.recv(65536)
        except BlockingIOError:
            return b""
        if not data:
            raise RuntimeError("a stream was closed by the server")
        self.buffer += data
        return data


def open_plain(url, count):
    """`count` keep-alive connections, each after one GET /count answered, left open."""
    parsed = urllib.parse.urlparse(url)
    sockets = []
    for _ in range(count):
        connection = socket.create_connection((parsed.hostname, parsed.port))
        connection.sendall(f"GET /count HTTP/1.1\r\nHost: {parsed.hostname}\r\n\r\n".encode())
        answer = b""
        while b"\r\n\r\n" not in answer or not answer.endswith(b"}"):
            answer += connection.recv(65536)
        sockets.append(connection)
    return sockets


def per_connection(url, pid, count, streaming):
    """Resident bytes per idle connection of `count` on a fresh server: a stream of a session of
    its own each (sessions made first, not counted), or a keep-alive connection after one GET
    /count. Returns (bytes each, the streams or sockets, the sessions)."""
    sessions = new_sessions(url, count) if streaming else []
    time.sleep(1)
    before = rss_kib(pid)
    held = open_streams(url, sessions)[0] if streaming else open_plain(url, count)
    time.sleep(1)
    return (rss_kib(pid) - before) * 1024 / count, held, sessions


def open_streams(url, sessions):
    streams = [Stream(url, session) for session in sessions]
    selector = selectors.DefaultSelector()
    for stream in streams:
        selector.register(stream.socket, selectors.EVENT_READ, stream)
    # Every stream has its head and its open event.
    pending = set(range(len(streams)))
    deadline = time.time() + 120
    while pending and time.time() < deadline:
        for key, _ in selector.select(timeout=1):
            key.data.read()
        pending = {i for i in pending if b"event: open" not in streams[i].buffer}
    if pending:
        raise RuntimeError(f"{len(pending)} streams did not open")
    return streams, selector


def latencies(write_url, streams, sessions, samples):
    """Milliseconds from each write's answer to the matching event on its stream."""
    parsed = urllib.parse.urlparse(write_url)
    connection = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=30)
    found = []
    for sample in range(samples):
        index = sample % len(streams)
        stream = streams[index]
        stream.buffer = b""
        connection.request("POST", "/groups/main-courses/toggle", body=b"",
                           headers={"X-Session-Id": sessions[index]})
        response = connection.getresponse()
        response.read()
        answered = time.perf_counter()
        if response.status != 200:
            raise RuntimeError(f"a write answered {response.status}")
        stream.socket.setblocking(True)
        stream.socket.settimeout(10)
        while b"event: change" not in stream.buffer:
            data = stream.socket.recv(65536)
            if not data:
                raise RuntimeError("a stream was closed by the server")
            stream.buffer += data
        found.append((time.perf_counter() - answered) * 1000)
        stream.socket.setblocking(False)
    return found


def rows_per_second(url):
    output = subprocess.run(["wrk", "-t2", "-c8", "-d5s", url + "/rows?limit=50"], capture_output=True, text=True,
                            check=True).stdout
    return float(re.search(r"Requests/sec:\s+([0-9.]+)", output).group(1))


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def main():
    arguments = argparse.ArgumentParser()
    arguments.add_argument("--memory", required=True)
    arguments.add_argument("--pid", type=int, required=True)
    arguments.add_argument("--plain", required=True, help="a fresh server for the keep-alive connections")
    arguments.add_argument("--plain-pid", type=int, required=True)
    arguments.add_argument("--small-memory", required=True, help="a fresh server with --connection-memory 8192")
    arguments.add_argument("--small-pid", type=int, required=True)
    arguments.add_argument("--small-plain", required=True)
    arguments.add_argument("--small-plain-pid", type=int, required=True)
    arguments.add_argument("--redis-a")
    arguments.add_argument("--redis-b")
    arguments.add_argument("--streams", type=int, default=10000)
    arguments.add_argument("--samples", type=int, default=500)
    options = arguments.parse_args()

    for label, streams_url, streams_pid, plain_url, plain_pid in [
        ("--connection-memory 8192", options.small_memory, options.small_pid, options.small_plain, options.small_plain_pid),
        ("--connection-memory 32768 (the default)", options.memory, options.pid, options.plain, options.plain_pid),
    ]:
        per_plain, plain, _ = per_connection(plain_url, plain_pid, options.streams, streaming=False)
        for connection in plain:  # another server's: closing them changes nothing measured next
            connection.close()
        per_stream, streams, sessions = per_connection(streams_url, streams_pid, options.streams, streaming=True)
        print(f"{label}: {options.streams} idle keep-alive connections {per_plain:.0f} bytes each; "
              f"{options.streams} idle streams {per_stream:.0f} bytes each (fresh servers, resident memory)")
        if streams_url != options.memory:
            for stream in streams:
                stream.socket.close()
    for stream in streams[1000:]:
        stream.socket.close()
    streams = streams[:1000]
    with_streams, without = [], []
    for _ in range(5):
        with_streams.append(rows_per_second(options.memory))
        for stream in streams:
            stream.socket.shutdown(socket.SHUT_RDWR)
            stream.socket.close()
        time.sleep(2)
        without.append(rows_per_second(options.memory))
        streams, _ = open_streams(options.memory, sessions[:1000])
    low, high = sorted(with_streams)[2], sorted(without)[2]
    print(f"memory store, GET /rows?limit=50: {high:.0f} requests/s without streams, {low:.0f} with 1,000 idle "
          f"streams open ({(high - low) / high * 100:+.1f}% cost; medians of 5 runs of 5 s, alternating)")
    found = latencies(options.memory, streams, sessions[:1000], options.samples)
    print(f"memory store, 1,000 streams open: write answered -> event, p50 {percentile(found, 0.5):.2f} ms, "
          f"p99 {percentile(found, 0.99):.2f} ms ({len(found)} writes)")
    for stream in streams:
        stream.socket.close()

    if options.redis_a and options.redis_b:
        sessions = new_sessions(options.redis_a, 1000)
        streams, _ = open_streams(options.redis_b, sessions)
        found = latencies(options.redis_a, streams, sessions, options.samples)
        print(f"Redis, two instances, 1,000 streams on B, writes on A: write answered -> event, "
              f"p50 {percentile(found, 0.5):.2f} ms, p99 {percentile(found, 0.99):.2f} ms ({len(found)} writes)")
        for stream in streams:
            stream.socket.close()


if __name__ == "__main__":
    main()
