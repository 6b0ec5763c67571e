#!/usr/bin/env python3
"""Lab workloads for tcpwhy's example captures: a small HTTP/1.1 server and clients.

Standard library only, so the captures can be regenerated on any machine with Python 3.
The server answers `GET /bytes/N` with an N-byte body; it keeps connections alive
(HTTP/1.1) unless the client sends `Connection: close`.
"""

import argparse
import http.client
import http.server
import sys
import time

# One body buffer reused for every response; larger responses are written in chunks of it.
CHUNK = b"x" * 65536


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # persistent connections by default (RFC 9112 §9.3)

    def do_GET(self):
        parts = self.path.strip("/").split("/")
        if len(parts) != 2 or parts[0] != "bytes" or not parts[1].isdigit():
            self.send_error(404)
            return
        size = int(parts[1])
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(size))
        self.end_headers()
        left = size
        while left > 0:
            n = min(left, len(CHUNK))
            self.wfile.write(CHUNK[:n])
            left -= n

    def log_message(self, fmt, *args):  # quiet: the capture is the record
        pass


def serve(args):
    srv = http.server.ThreadingHTTPServer((args.bind, args.port), Handler)
    srv.daemon_threads = True
    print(f"serving on {args.bind}:{args.port}", flush=True)
    srv.serve_forever()


def get(args):
    """Run `--count` GETs of `--size` bytes, `--interval` seconds apart.

    With `--new-connection` each request opens its own connection (and asks the server
    to close it); otherwise all requests share one keep-alive connection."""
    conn = None
    for i in range(args.count):
        if i > 0:
            time.sleep(args.interval)
        if conn is None or args.new_connection:
            conn = http.client.HTTPConnection(args.host, args.port, timeout=30)
        headers = {"Connection": "close"} if args.new_connection else {}
        t0 = time.monotonic()
        conn.request("GET", f"/bytes/{args.size}", headers=headers)
        resp = conn.getresponse()
        body = resp.read()
        dt = time.monotonic() - t0
        if resp.status != 200 or len(body) != args.size:
            sys.exit(f"request {i}: status {resp.status}, {len(body)} bytes")
        print(f"request {i}: {len(body)} bytes in {dt * 1000:.1f} ms", flush=True)
        if args.new_connection:
            conn.close()
    if conn is not None:
        conn.close()


def main():
    p = argparse.ArgumentParser(description=__doc__)
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("serve")
    s.add_argument("--bind", default="0.0.0.0")
    s.add_argument("--port", type=int, default=8080)
    s.set_defaults(func=serve)
    g = sub.add_parser("get")
    g.add_argument("--host", required=True)
    g.add_argument("--port", type=int, default=8080)
    g.add_argument("--size", type=int, default=200_000)
    g.add_argument("--count", type=int, default=6)
    g.add_argument("--interval", type=float, default=0.5)
    g.add_argument("--new-connection", action="store_true")
    g.set_defaults(func=get)
    args = p.parse_args()
    args.func(args)


if __name__ == "__main__":
    main()
