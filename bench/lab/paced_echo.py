#!/usr/bin/env python3
"""Paced echo traffic for bench/emulator.sh: the client writes a small message at a fixed
rate with TCP_NODELAY (one packet per write when the machine keeps up) and the server
echoes every byte back, so the path emulator carries about `rate` data packets per second
each way, plus ACKs. Standard library only.

    paced_echo.py serve --bind ADDR [--port 9100]        # echo every connection until killed
    paced_echo.py client --host ADDR [--port 9100] [--rate 1000] [--seconds 5] [--bytes 100]

The client prints one line: writes=N bytes_echoed=N seconds=S write_rate=R.
"""

import argparse
import socket
import socketserver
import threading
import time


class Echo(socketserver.BaseRequestHandler):
    def handle(self):
        self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        while True:
            data = self.request.recv(65536)
            if not data:
                return
            self.request.sendall(data)


class Server(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True


def client(args):
    s = socket.create_connection((args.host, args.port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    echoed = [0]

    def reader():
        while True:
            data = s.recv(65536)
            if not data:
                return
            echoed[0] += len(data)

    t = threading.Thread(target=reader)
    t.start()
    msg = b"x" * args.bytes
    writes = int(args.rate * args.seconds)
    start = time.monotonic()
    for i in range(writes):
        delay = start + i / args.rate - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        s.sendall(msg)
    took = time.monotonic() - start
    s.shutdown(socket.SHUT_WR)
    t.join()
    s.close()
    print(f"writes={writes} bytes_echoed={echoed[0]} seconds={took:.3f} "
          f"write_rate={writes / took:.0f}")


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    sv = sub.add_parser("serve")
    sv.add_argument("--bind", required=True)
    sv.add_argument("--port", type=int, default=9100)
    cl = sub.add_parser("client")
    cl.add_argument("--host", required=True)
    cl.add_argument("--port", type=int, default=9100)
    cl.add_argument("--rate", type=float, default=1000.0)
    cl.add_argument("--seconds", type=float, default=5.0)
    cl.add_argument("--bytes", type=int, default=100)
    args = p.parse_args()
    if args.cmd == "serve":
        with Server((args.bind, args.port), Echo) as srv:
            srv.serve_forever()
    else:
        client(args)


if __name__ == "__main__":
    main()
