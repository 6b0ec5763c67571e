//! The tracker on the lab's captures (examples/lab/<scenario>/), checked against what the
//! kernel, the emulator and the workloads recorded next to them (manifest.json, truth/).
//! These are the numbers one would check by hand in Wireshark: how many connections, the
//! handshake RTT, where the capture was taken, how many retransmissions. Each expected
//! number comes from the run's own records, never from tcpwhy; where it comes from is
//! said at each check. How the examples were made: examples/lab/README.md.

mod common;

use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use tcpwhy_track::{ConnSummary, Side, Vantage, WindowScale};

/// The examples this file checks; `every_lab_example_is_checked` keeps it complete.
const EXAMPLES: &[&str] = &[
    "app-limited",
    "cached-ssthresh",
    "clean-bulk",
    "deep-queue",
    "delayed-ack-cwnd",
    "fast-retransmit",
    "fixed-rcvbuf",
    "idle-close",
    "idle-restart-bbr",
    "idle-restart-cubic",
    "idle-restart-off",
    "keepalive-warm",
    "nagle-delayed-ack",
    "nagle-nodelay",
    "new-connection-per-request",
    "no-window-scaling",
    "reordering",
    "rto",
    "rtt-step",
    "server-think-time",
    "slow-reader",
    "small-sndbuf",
    "syn-drop",
    "tail-loss",
    "tcp-mem-pressure",
];

fn lab_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/lab")
}

fn json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path:?}: {e}"))
}

/// One example: its manifest, the workloads' timings, and the tracker's view of each of
/// its captures (`client`, `server`).
struct Example {
    name: &'static str,
    manifest: Value,
    client_timings: Value,
    server_timings: Value,
    captures: Vec<(&'static str, Vec<ConnSummary>)>,
}

fn example(name: &'static str) -> Example {
    let dir = lab_dir().join(name);
    let captures: Vec<(&'static str, Vec<ConnSummary>)> = ["client", "server"]
        .into_iter()
        .filter_map(|side| {
            let p = dir.join(format!("{side}.pcap"));
            p.exists().then(|| (side, common::connections(&p)))
        })
        .collect();
    assert!(!captures.is_empty(), "{name}: no capture");
    Example {
        name,
        manifest: json(&dir.join("manifest.json")),
        client_timings: json(&dir.join("truth/client-timings.json")),
        server_timings: json(&dir.join("truth/server-timings.json")),
        captures,
    }
}

fn counter(m: &Value, side: &str, name: &str) -> u64 {
    m["nstat_delta"][side][name].as_u64().unwrap_or(0)
}

/// Checks every example shares, on each of its captures.
fn check_common(e: &Example) {
    check_common_with(e, PeerRetransmissions::AtMostSent)
}

/// What the peer's retransmissions in a capture are compared with.
#[derive(PartialEq)]
enum PeerRetransmissions {
    /// No more than the peer's TcpRetransSegs (some may have been dropped on the way).
    AtMostSent,
    /// Not compared: the path reordered the peer's packets, and a late original is a
    /// retransmission by Wireshark's rules (the scenario's test checks it instead).
    Reordered,
}

fn check_common_with(e: &Example, peer_check: PeerRetransmissions) {
    let m = &e.manifest;
    assert!(
        m["passed"].as_bool().unwrap(),
        "{}: the lab's checks failed",
        e.name
    );
    // The client's own record of every connect() (truth/client-timings.json).
    let ports: BTreeSet<u16> = e.client_timings["connections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["local_port"].as_u64().unwrap() as u16)
        .collect();
    let rtt_configured = m["key_numbers"]["rtt_configured_ms"].as_f64().unwrap();
    // The lab's reading of the same capture (SYN → SYN/ACK at the client, SYN/ACK → ACK at
    // the server; only handshakes whose SYN was not retransmitted).
    let measured: Vec<f64> = m["key_numbers"]["rtt_handshake_ms"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_f64)
        .collect();
    for (side, conns) in &e.captures {
        let what = format!("{} {side}.pcap", e.name);
        // Connections: one stream per connect() the client made, on its ports.
        assert_eq!(conns.len(), ports.len(), "{what}: streams");
        let seen: BTreeSet<u16> = conns.iter().map(|c| c.endpoints[0].port).collect();
        assert_eq!(seen, ports, "{what}: client ports");
        for c in conns {
            // The server end: the workload's listening address.
            assert_eq!(
                c.endpoints[1].to_string(),
                e.server_timings["listen"].as_str().unwrap(),
                "{what}"
            );
            // Vantage: the side whose namespace ran tcpdump (the file's name).
            let want = if *side == "client" {
                Vantage::Client
            } else {
                Vantage::Server
            };
            assert_eq!(c.vantage, want, "{what}: stream {} vantage", c.stream);
        }
        // Handshake RTT (SYN → first ACK of the client): within 10 % of the path's
        // configured RTT (truth/path.json, the emulator's two one-way delays) plus 0.5 ms
        // (the emulator's user-space hop; it matters only on the 2 ms path), and within
        // 10 % of the lab's own measurement when it has one. A retransmitted SYN is
        // checked in `syn_drop` instead.
        for c in conns
            .iter()
            .filter(|c| c.dirs[0].counts.retransmissions == 0)
        {
            let rtt = c.handshake_rtt_ns().expect("handshake") as f64 / 1e6;
            assert!(
                (rtt - rtt_configured).abs() <= 0.1 * rtt_configured + 0.5,
                "{what}: stream {} handshake RTT {rtt:.2} ms for {rtt_configured} configured",
                c.stream
            );
            if let Some(med) = median(&measured) {
                assert!(
                    (rtt - med).abs() <= 0.1 * med,
                    "{what}: stream {} handshake RTT {rtt:.2} ms, the lab measured {med:.2}",
                    c.stream
                );
            }
        }
        // Retransmissions: the capturing end's own (TcpRetransSegs in its nstat delta,
        // SYNs included) are all in the capture, since tcpdump sees what the end sends
        // before the router can drop it. One sent within the RTT of the highest segment
        // is "out-of-order" by Wireshark's rules (tshark 4.0 flags the fast retransmits
        // of fast-retransmit/server.pcap and reordering/server.pcap so, and the tracker
        // follows it); at its own sender's capture nothing can have been reordered yet,
        // so there an out-of-order segment is a retransmission too.
        let own = if *side == "client" {
            Side::Client
        } else {
            Side::Server
        };
        let peer = own.peer();
        let retrans =
            |d: Side| -> u64 { conns.iter().map(|c| c.dirs[d].counts.retransmissions).sum() };
        let own_ooo: u64 = conns.iter().map(|c| c.dirs[own].counts.out_of_order).sum();
        assert_eq!(
            retrans(own) + own_ooo,
            counter(m, side, "TcpRetransSegs"),
            "{what}: retransmissions sent by the {side}"
        );
        // The peer's retransmissions can be missing here (the copy the router dropped
        // never reached this capture, so the one that did is new data), but there are
        // never more than it made.
        let other = if *side == "client" {
            "server"
        } else {
            "client"
        };
        if peer_check == PeerRetransmissions::AtMostSent {
            assert!(
                retrans(peer) <= counter(m, other, "TcpRetransSegs"),
                "{what}"
            );
        }
        // Bytes: what the server's application wrote and read on each connection
        // (server-timings `bytes_sent`, `bytes_received`) is the unique payload of each
        // direction (head-only captures still carry the IP lengths).
        let sent: u64 = e.server_timings["connections"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["bytes_sent"].as_u64().unwrap())
            .sum();
        let received: u64 = e.server_timings["connections"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["bytes_received"].as_u64().unwrap())
            .sum();
        let unique = |d: Side| -> u64 { conns.iter().map(|c| c.dirs[d].unique_bytes).sum() };
        assert_eq!(unique(Side::Server), sent, "{what}: server → client bytes");
        assert_eq!(
            unique(Side::Client),
            received,
            "{what}: client → server bytes"
        );
    }
}

fn median(v: &[f64]) -> Option<f64> {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    s.get(s.len() / 2).copied()
}

#[test]
fn every_lab_example_is_checked() {
    let mut dirs: Vec<String> = std::fs::read_dir(lab_dir())
        .unwrap()
        .flatten()
        .filter(|d| d.path().join("manifest.json").exists())
        .map(|d| d.file_name().to_string_lossy().into_owned())
        .collect();
    dirs.sort();
    assert_eq!(dirs, EXAMPLES);
}

/// manifest key_numbers.connections = 2 (run with `--requests 2`, `Connection: close`):
/// two streams at both ends, each carrying one whole 741,342-byte response.
#[test]
fn new_connection_per_request() {
    let e = example("new-connection-per-request");
    check_common(&e);
    assert_eq!(e.manifest["key_numbers"]["connections"], 2);
    for (_, conns) in &e.captures {
        for c in conns {
            assert_eq!(c.dirs[1].unique_bytes, 741_342);
        }
    }
}

/// One keep-alive connection (client-timings: one entry in `connections`) for both
/// requests: one stream with 2 × 741,342 bytes.
#[test]
fn keepalive_warm() {
    let e = example("keepalive-warm");
    check_common(&e);
    for (_, conns) in &e.captures {
        assert_eq!(conns.len(), 1);
        assert_eq!(conns[0].dirs[1].unique_bytes, 2 * 741_342);
    }
}

/// The server closes each keep-alive connection after 1.5 s idle and the client asks
/// every 2 s (run with `--requests 3`): three streams at both ends, one 741,342-byte
/// response each.
#[test]
fn idle_close() {
    let e = example("idle-close");
    check_common(&e);
    assert_eq!(e.manifest["key_numbers"]["connections"], 3);
    for (_, conns) in &e.captures {
        assert_eq!(conns.len(), 3);
        for c in conns {
            assert_eq!(c.dirs[1].unique_bytes, 741_342);
        }
    }
}

#[test]
fn idle_restart_cubic() {
    check_common(&example("idle-restart-cubic"));
}

#[test]
fn nagle_delayed_ack() {
    check_common(&example("nagle-delayed-ack"));
}

#[test]
fn delayed_ack_cwnd() {
    check_common(&example("delayed-ack-cwnd"));
}

/// The router dropped the client's first SYN (truth/path.json `drop_syn: 1`; client
/// nstat TCPSynRetrans 1): at the client, stream 0 holds both SYNs, the second one
/// retransmitted ≈ 1 s (the initial RTO) after the first; the server saw only the second.
#[test]
fn syn_drop() {
    let e = example("syn-drop");
    check_common(&e);
    assert_eq!(counter(&e.manifest, "client", "TCPSynRetrans"), 1);
    for (side, conns) in &e.captures {
        let c = &conns[0];
        assert_eq!(c.stream, 0);
        let want = u64::from(*side == "client");
        assert_eq!(c.dirs[0].counts.retransmissions, want, "{side}");
        // Handshake RTT from the SYN that got through, as Wireshark's iRTT (tshark
        // 4.0.17 on client.pcap: tcp.analysis.initial_rtt 0.025420 s): the 1 s wait is
        // the SYN retransmission's cost, not the path's RTT.
        let rtt = c.handshake_rtt_ns().expect("handshake") as f64 / 1e6;
        assert!(
            (rtt - 25.0).abs() <= 2.5 + 0.5,
            "{side}: handshake RTT {rtt:.2} ms"
        );
    }
}

/// The router dropped the last data packet of the first response (path.json `drop_tail`
/// burst 1); the server's tail loss probe resent it (server nstat TCPLossProbes 1,
/// TcpRetransSegs 1, TCPTimeouts 0). At the server the probe is the second copy of those
/// bytes, so a retransmission (server.pcap frame 19, seq 8689, 1,312 bytes, 285.7 ms in:
/// tshark 4.0.17 flags the same frame); the client never saw the first copy, so for it
/// the probe is new data.
#[test]
fn tail_loss() {
    let e = example("tail-loss");
    check_common(&e);
    assert_eq!(counter(&e.manifest, "server", "TCPLossProbes"), 1);
    assert_eq!(counter(&e.manifest, "server", "TCPTimeouts"), 0);
    for (side, conns) in &e.captures {
        let want = u64::from(*side == "server");
        assert_eq!(conns[0].dirs[1].counts.retransmissions, want, "{side}");
    }
}

/// The controls and the scenarios whose tracker-level facts are the common ones: one
/// connection, handshake RTT as configured, the ends' own retransmissions as counted by
/// the kernel, bytes as the applications wrote them.
#[test]
fn common_checks_of_the_other_scenarios() {
    for name in [
        "nagle-nodelay",
        "small-sndbuf",
        "clean-bulk",
        "deep-queue",
        "fast-retransmit",
        "rto",
    ] {
        check_common(&example(name));
    }
}

/// Window scaling off at the client (manifest sysctls; ss: the server's snd_wnd never
/// above 65,535): the handshake shows it not negotiated, and the client's window
/// (tshark: tcp.window_size max 65535 on both captures) stays at the 16-bit limit.
#[test]
fn no_window_scaling() {
    let e = example("no-window-scaling");
    check_common(&e);
    assert_eq!(
        e.manifest["key_numbers"]["scenario"]["server_max_snd_wnd"],
        65535.0
    );
    for (side, conns) in &e.captures {
        let c = &conns[0];
        assert_eq!(c.dirs[0].syn.expect("SYN").wscale, None, "{side}");
        assert_eq!(c.dirs[0].wscale, Some(WindowScale::NotNegotiated), "{side}");
        assert_eq!(c.dirs[0].max_window_bytes, Some(65_535), "{side}");
    }
}

/// The client reads 16 KB every 100 ms: its window closes (client nstat
/// TCPToZeroWindowAdv 3), and both captures show its 3 zero-window ACKs (tshark:
/// tcp.analysis.zero_window, 3 frames each).
#[test]
fn slow_reader() {
    let e = example("slow-reader");
    check_common(&e);
    let closed = counter(&e.manifest, "client", "TCPToZeroWindowAdv");
    assert_eq!(closed, 3);
    for (side, conns) in &e.captures {
        assert_eq!(conns[0].dirs[0].counts.zero_windows, closed, "{side}");
    }
}

/// A fixed 32 KB SO_RCVBUF at the client: its window never grows past 40,544 bytes
/// (tshark: tcp.window_size max 40544, from the handshake's scale 0), the same at both
/// ends; the server's snd_wnd in ss peaked at 39,096.
#[test]
fn fixed_rcvbuf() {
    let e = example("fixed-rcvbuf");
    check_common(&e);
    for (side, conns) in &e.captures {
        assert_eq!(conns[0].dirs[0].max_window_bytes, Some(40_544), "{side}");
    }
}

/// net.ipv4.tcp_mem lowered 150 ms into the download (manifest: TCPMemoryPressures 1 in
/// the client's namespace, tcp_mem read back as before): the client's window peaked at
/// 346,112 B (tshark: client.pcap frame 265, server.pcap frame 403) before the pressure
/// clamped it to 6,144 B, the same at both ends.
#[test]
fn tcp_mem_pressure() {
    let e = example("tcp-mem-pressure");
    check_common(&e);
    assert_eq!(counter(&e.manifest, "client", "TCPMemoryPressures"), 1);
    for (side, conns) in &e.captures {
        assert_eq!(conns[0].dirs[0].max_window_bytes, Some(346_112), "{side}");
    }
}

/// The emulator held every 40th server packet 4 ms (path.json `reorder_every`, 20
/// times). The server sent one retransmission (nstat TcpRetransSegs 1, TCPFastRetrans 1:
/// server.pcap frame 135, seq 56473, IP ID 0x735b), which the client D-SACKed (client
/// TCPDSACKOldSent 1: client.pcap frame 164) because the 4 ms late original (IP ID
/// 0x7328, client.pcap frame 131) had arrived before it. At the client, tshark 4.0 calls
/// 6 server segments retransmissions (frames 131, 163, 210, 1316, 1350, 1431): only frame
/// 163 has a new IP ID; the other 5 are late originals whose IP IDs equal the ones the
/// server sent first. The tracker counts the same 6, by the same rules.
#[test]
fn reordering() {
    let e = example("reordering");
    check_common_with(&e, PeerRetransmissions::Reordered);
    assert_eq!(counter(&e.manifest, "server", "TcpRetransSegs"), 1);
    assert_eq!(counter(&e.manifest, "client", "TCPDSACKOldSent"), 1);
    for (side, conns) in &e.captures {
        assert_eq!(conns[0].dirs[0].counts.dsacks, 1, "{side}");
    }
    let client = &e.captures.iter().find(|c| c.0 == "client").unwrap().1;
    assert_eq!(client[0].dirs[1].counts.retransmissions, 6);
}

/// The path's RTT jumps from 25 to 325 ms after the handshake: both ends' first
/// retransmissions are needless and D-SACKed (nstat TCPDSACKRecv 1 at each end, and
/// TcpRetransSegs 1 each, checked in common).
#[test]
fn rtt_step() {
    let e = example("rtt-step");
    check_common(&e);
    for side in ["client", "server"] {
        assert_eq!(counter(&e.manifest, side, "TCPDSACKRecv"), 1);
    }
    for (side, conns) in &e.captures {
        assert_eq!(conns[0].dirs[0].counts.dsacks, 1, "{side}");
        assert_eq!(conns[0].dirs[1].counts.dsacks, 1, "{side}");
    }
}
