#!/usr/bin/env python3
"""Writes a pcap of N short TCP connections, each SYN -> SYN/ACK -> RST from the client:
what a capture of a SYN flood or a port scan against a busy front end holds. It tests that
memory follows the connections open at once, not their total (bench/README.md). With
--open the RST is left out: SYN/ACKs nobody answers, handshakes that stay open (a spoofed
SYN flood as the server sees it), which the tracker bounds (MAX_OPEN_HANDSHAKES). With
--ack each connection is one ACK from the client and nothing else (a spoofed ACK flood as
a capture before the target sees it), which the tracker bounds (LIVE_CUT_START).

    manyconns.py OUT.pcap [--connections N] [--rate PER_SECOND] [--seed S] [--open | --ack]

Standard library only. Clients are spread over 10.200.0.0/16 with ephemeral ports, the
server is 10.201.0.1:443; the SYN/ACK follows the SYN by 0.5 ms, the RST by 1 ms.
"""
import argparse
import heapq
import random
import struct


def checksum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    s = (s >> 16) + (s & 0xFFFF)
    s += s >> 16
    return ~s & 0xFFFF


def packet(src, dst, sport, dport, seq, ack, flags, options, ip_id):
    tcp_len = 20 + len(options)
    tcp = struct.pack("!HHIIBBHHH", sport, dport, seq, ack, (tcp_len // 4) << 4, flags, 64240, 0, 0) + options
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + tcp_len, ip_id, 0x4000, 64, 6, 0, src, dst)
    ip = ip[:10] + struct.pack("!H", checksum(ip)) + ip[12:]
    # The TCP checksum is left 0: tcpwhy, tcptrace and tshark do not verify it by default.
    eth = b"\x02\x00\x00\x00\x00\x02" + b"\x02\x00\x00\x00\x00\x01" + b"\x08\x00"
    return eth + ip + tcp


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out")
    p.add_argument("--connections", type=int, default=1_000_000)
    p.add_argument("--rate", type=float, default=20_000.0, help="new connections per second")
    p.add_argument("--seed", type=int, default=1)
    kind = p.add_mutually_exclusive_group()
    kind.add_argument("--open", action="store_true", help="no RST: every handshake is left open")
    kind.add_argument("--ack", action="store_true", help="one ACK a connection, nothing answered")
    a = p.parse_args()
    rng = random.Random(a.seed)
    server = bytes([10, 201, 0, 1])
    # MSS 1460, SACK permitted, timestamps, window scale 7: Linux's SYN options.
    syn_opts = b"\x02\x04\x05\xb4\x04\x02\x08\x0a" + b"\0" * 8 + b"\x01\x03\x03\x07"
    t0 = 1_700_000_000 * 1_000_000  # µs
    step = 1e6 / a.rate
    with open(a.out, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        out = []
        # Connections overlap (a new one every 50 µs at the default rate, each lasting
        # 1 ms): packets go through a heap so that the file is in time order.
        pending = []
        for i in range(a.connections):
            client = bytes([10, 200, rng.randrange(256), rng.randrange(1, 255)])
            sport = rng.randrange(1024, 65536)
            isn_c, isn_s = rng.getrandbits(32), rng.getrandbits(32)
            t = t0 + int(i * step)
            while pending and pending[0][0] <= t:
                out.append(heapq.heappop(pending)[2])
            first_id = rng.getrandbits(16)
            if a.ack:
                frames = [(0, packet(client, server, sport, 443, isn_c, isn_s, 0x10, b"", first_id))]
            else:
                frames = [
                    (0, packet(client, server, sport, 443, isn_c, 0, 0x02, syn_opts, first_id)),
                    (500, packet(server, client, 443, sport, isn_s, (isn_c + 1) & 0xFFFFFFFF, 0x12, syn_opts, 0)),
                ]
            rst_id = rng.getrandbits(16)
            if not (a.open or a.ack):
                frames.append((1000, packet(client, server, sport, 443, (isn_c + 1) & 0xFFFFFFFF, 0, 0x04, b"", rst_id)))
            for seq, (dt, pkt) in enumerate(frames):
                ts = t + dt
                rec = struct.pack("<IIII", ts // 1_000_000, ts % 1_000_000, len(pkt), len(pkt)) + pkt
                heapq.heappush(pending, (ts, i * 3 + seq, rec))
            if len(out) >= 30_000:
                f.write(b"".join(out))
                out.clear()
        while pending:
            out.append(heapq.heappop(pending)[2])
        f.write(b"".join(out))

if __name__ == "__main__":
    main()
