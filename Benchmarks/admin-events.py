#!/usr/bin/env python3
"""Issue 27 §5: the time from an admin availability write to its event on every open stream.

Run by scripts/bench-admin-events, which starts the servers (and Redis) and passes their URLs:
  admin-events.py --admin URL --token-file PATH --streams URL [URL ...] [--sessions N] [--writes N]

Makes N sessions, opens one GET /changes event stream per session (spread over the --streams
URLs in turn), then makes --writes admin writes (`PUT /admin/availability`, one dish sold out,
then available again, in turn) one after the other. For each write it reads --watched streams,
drawn at random, until each has the write's `availability` event, and takes the time from the
moment the write was sent to the moment the selector reported the stream readable; the other
streams get the same events into their sockets' buffers, unread (a Python thread reading all
10,000 would add its own 100-200 ms to the late ones). Prints p50, p99 and the slowest over
every (write, watched stream) pair, and the median time for the last watched stream of a write.
No figure is checked: they are printed for docs/performance.md.
"""
import argparse
import http.client
import json
import random
import selectors
import time
import urllib.parse

from streams import Stream, new_sessions, percentile


def open_all(urls, sessions):
    """A stream per session over `urls` in turn, each read until its `open` event."""
    selector = selectors.DefaultSelector()
    streams = []
    for index, session in enumerate(sessions):
        stream = Stream(urls[index % len(urls)], session)
        stream.index = index
        streams.append(stream)
        selector.register(stream.socket, selectors.EVENT_READ, stream)
    pending = set(range(len(streams)))
    deadline = time.time() + 300
    while pending and time.time() < deadline:
        for key, _ in selector.select(timeout=1):
            stream = key.data
            stream.read()
            if stream.index in pending and b"event: open" in stream.buffer:
                pending.discard(stream.index)
    if pending:
        raise RuntimeError(f"{len(pending)} streams did not open")
    return streams, selector


def write_and_wait(admin, token, dish, state, streams, watched, selector):
    """Milliseconds from sending the write to each watched stream's event; the write's revision."""
    for stream in watched:
        stream.buffer = b""
    body = json.dumps({"changes": [{"id": dish, "state": state}]}).encode()
    sent = time.perf_counter()
    admin.request("PUT", "/admin/availability", body=body,
                  headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    response = admin.getresponse()
    answer = response.read()
    if response.status != 200:
        raise RuntimeError(f"the admin write answered {response.status}: {answer[:200]!r}")
    revision = json.loads(answer)["revision"]
    needle = f'"revision":{revision},'.encode()
    found = [None] * len(streams)
    pending = len(watched)
    deadline = time.perf_counter() + 60
    while pending:
        if time.perf_counter() > deadline:
            raise RuntimeError(f"{pending} streams had no event for revision {revision} within 60 s")
        events = selector.select(timeout=1)
        now = time.perf_counter()
        for key, _ in events:
            stream = key.data
            stream.read()
            if found[stream.index] is None and needle in stream.buffer:
                found[stream.index] = (now - sent) * 1000
                pending -= 1
    return [found[stream.index] for stream in watched], revision


def main():
    arguments = argparse.ArgumentParser()
    arguments.add_argument("--admin", required=True, help="the admin listener that takes the writes")
    arguments.add_argument("--token-file", required=True)
    arguments.add_argument("--streams", nargs="+", required=True, help="the servers that hold the streams")
    arguments.add_argument("--sessions", type=int, default=10000)
    arguments.add_argument("--writes", type=int, default=20)
    arguments.add_argument("--watched", type=int, default=1000)
    arguments.add_argument("--dish", default="kung-pao-chicken")
    arguments.add_argument("--label", default="")
    options = arguments.parse_args()
    with open(options.token_file) as file:
        token = file.readline().strip()

    sessions = new_sessions(options.streams[0], options.sessions)
    streams, selector = open_all(options.streams, sessions)
    watched = random.Random(27).sample(streams, min(options.watched, len(streams)))
    watched_indices = {stream.index for stream in watched}
    for stream in streams:
        if stream.index not in watched_indices:
            selector.unregister(stream.socket)
    parsed = urllib.parse.urlparse(options.admin)
    admin = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=60)
    every, last = [], []
    for write in range(options.writes):
        found, _ = write_and_wait(admin, token, options.dish, "sold_out" if write % 2 == 0 else "available",
                                  streams, watched, selector)
        every.extend(found)
        last.append(max(found))
        time.sleep(0.2)
    print(f"{options.label}: {len(streams)} streams ({len(watched)} watched), {options.writes} admin writes: write sent -> event, "
          f"p50 {percentile(every, 0.5):.1f} ms, p99 {percentile(every, 0.99):.1f} ms, "
          f"slowest {max(every):.1f} ms; the last stream of a write, median {percentile(last, 0.5):.1f} ms")
    for stream in streams:
        stream.socket.close()


if __name__ == "__main__":
    main()
