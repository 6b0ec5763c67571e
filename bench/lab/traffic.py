#!/usr/bin/env python3
"""Traffic for the benchmark capture: bulk TCP streams and many short request/response
connections between two network namespaces. Standard library only.

    traffic.py serve --bind ADDR                    # bulk sink on 9000, request/response on 9001
    traffic.py bulk --host ADDR [--go FILE]         # one stream sending until killed; with
                                                    # --go, prints "ready" and connects
                                                    # once FILE exists
    traffic.py rr --host ADDR [--seed N]            # short connections until killed; prints
                                                    # "running" after its first one

Each rr connection: the client sends a 100-byte request naming a response size (1–32 KB),
the server writes the response and closes first (HTTP/1.0 style), the client reads to EOF
and closes.
"""

import argparse
import os
import random
import socket
import socketserver
import threading
import time

BULK_PORT = 9000
RR_PORT = 9001
REQUEST_LEN = 100
PAYLOAD = b"y" * (1 << 20)


class BulkSink(socketserver.BaseRequestHandler):
    def handle(self):
        buf = bytearray(1 << 20)
        while self.request.recv_into(buf):
            pass


class Responder(socketserver.BaseRequestHandler):
    def handle(self):
        req = b""
        while len(req) < REQUEST_LEN:
            chunk = self.request.recv(REQUEST_LEN - len(req))
            if not chunk:
                return
            req += chunk
        size = int(req.split(b" ", 1)[0])
        self.request.sendall(PAYLOAD[:size])


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 1024


def serve(args):
    servers = [Server((args.bind, BULK_PORT), BulkSink), Server((args.bind, RR_PORT), Responder)]
    threads = [threading.Thread(target=s.serve_forever, daemon=True) for s in servers]
    for t in threads:
        t.start()
    print("serving", flush=True)
    for t in threads:
        t.join()


def bulk(args):
    if args.go:
        # Started ahead and held, so that many streams begin within milliseconds of each
        # other instead of one Python start-up apart.
        print("ready", flush=True)
        while not os.path.exists(args.go):
            time.sleep(0.005)
    with socket.create_connection((args.host, BULK_PORT)) as s:
        view = memoryview(PAYLOAD)
        while True:
            s.sendall(view)


def rr(args):
    rng = random.Random(args.seed)
    buf = bytearray(65536)
    first = True
    while True:
        size = rng.randrange(1000, 32768)
        request = f"{size} GET".encode().ljust(REQUEST_LEN, b".")
        try:
            with socket.create_connection((args.host, RR_PORT)) as s:
                s.sendall(request)
                while s.recv_into(buf):
                    pass
            if first:
                print("running", flush=True)
                first = False
        except OSError:
            pass  # e.g. a full accept queue: try again, the capture shows what happened


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("serve")
    s.add_argument("--bind", required=True)
    s.set_defaults(func=serve)
    b = sub.add_parser("bulk")
    b.add_argument("--host", required=True)
    b.add_argument("--go", help="connect once this file exists")
    b.set_defaults(func=bulk)
    r = sub.add_parser("rr")
    r.add_argument("--host", required=True)
    r.add_argument("--seed", type=int, default=1)
    r.set_defaults(func=rr)
    args = p.parse_args()
    args.func(args)


if __name__ == "__main__":
    main()
