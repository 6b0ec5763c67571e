//! The tracker on real captures from public projects (../shared/captures/public), checked
//! against tshark 4.0.17's counts (tshark-reference.json) and against values read by hand
//! in Wireshark. Disagreements with tshark are explained in docs/tshark-comparison.md.

mod common;

use common::total;
use std::collections::BTreeMap;
use std::path::PathBuf;
use tcpwhy_track::{ConnSummary, Vantage, WindowScale};

fn public_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/captures/public")
}

fn connections(name: &str) -> Vec<ConnSummary> {
    common::connections(&public_dir().join(name))
}

fn reference() -> serde_json::Value {
    let text = std::fs::read_to_string(public_dir().join("tshark-reference.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn stream_count_equals_tshark_tcp_stream_count_on_every_public_capture() {
    let r = reference();
    let files = r["files"].as_object().unwrap();
    let mut wrong = BTreeMap::new();
    for (name, v) in files {
        let want = v["tcp_streams"].as_u64().unwrap();
        let got = connections(name).len() as u64;
        if got != want {
            wrong.insert(name.clone(), (want, got));
        }
    }
    assert!(files.len() >= 60);
    assert!(wrong.is_empty(), "tshark vs tcpwhy streams: {wrong:?}");
}

/// Files where every compared flag count equals tshark's (tshark-reference.json).
#[test]
fn flag_counts_agree_with_tshark_where_its_definitions_apply() {
    let r = reference();
    let agreed = [
        "sharkfest20-trace1.pcapng",
        "sharkfest20-trace2.pcapng",
        "sharkfest20-trace3.pcapng",
        "suricata-verify-http-mime-truncated.pcap",
        "suricata-verify-mime-stream-depth.pcap",
        "suricata-verify-smb2-peter.pcap",
        "suricata-verify-syn-retransmit-with-ts-vlan.pcap",
        "suricata-verify-tls-subjectaltname.pcap",
        "tcptrace-dsack.pcap",
        "tcptrace-urgent.pcap",
        "tcptrace-zwnd.pcap",
        "tcptrace-long-rtt.pcap",
        "wireshark-sample-ipp-window-full.pcap",
        "zeek-http-206-example-a.pcap",
        "zeek-http-206-example-b.pcap",
        "zeek-echo-connections.pcap.gz",
    ];
    for name in agreed {
        let t = &r["files"][name]["tcp_analysis"];
        let n = |k: &str| t[k].as_u64().unwrap();
        let got = total(&connections(name));
        let pairs = [
            ("retransmission", got.retransmissions),
            ("fast_retransmission", got.fast_retransmissions),
            ("spurious_retransmission", got.spurious_retransmissions),
            ("out_of_order", got.out_of_order),
            ("duplicate_ack", got.dup_acks),
            ("zero_window", got.zero_windows),
            ("zero_window_probe", got.zero_window_probes),
            ("window_full", got.window_full),
            ("window_update", got.window_updates),
            ("keep_alive", got.keep_alives),
        ];
        for (flag, ours) in pairs {
            assert_eq!(ours, n(flag), "{name}: {flag}");
        }
    }
}

/// tcptrace-hardware-dups.pcap: every frame of one connection was captured twice (same
/// IP ID, < 10 ms apart). tshark calls the copies 470 retransmissions, 15 out-of-order
/// and 1 duplicate ACK (486 in all); an independent count of frames repeating the IP
/// source, IP ID, raw seq, length and raw ACK of a frame < 50 ms earlier (awk over
/// `tshark -T fields`) gives the same 486. None of them is a retransmission.
#[test]
fn capture_duplicates_are_not_retransmissions() {
    let c = total(&connections("tcptrace-hardware-dups.pcap"));
    assert_eq!(c.capture_duplicates, 486);
    assert_eq!(c.retransmissions, 0);
    assert_eq!(c.out_of_order, 0);
}

/// tcptrace-fast-reuse.pcap: 18 connections on one 4-tuple (3330 → 9080); tshark flags
/// 17 "reused ports" SYNs, i.e. every stream after the first.
#[test]
fn port_reuse_starts_new_streams() {
    let conns = connections("tcptrace-fast-reuse.pcap");
    assert_eq!(conns.len(), 18);
    assert_eq!(conns.iter().filter(|c| c.reused_port).count(), 17);
    assert!(conns
        .iter()
        .all(|c| c.endpoints[0].port == 3330 && c.endpoints[1].port == 9080));
}

/// wireshark-sample-win-scale-examples.pcapng, checked in Wireshark:
/// stream 0: SYN ws 8, SYN/ACK ws 7 → both scale; stream 1: SYN/ACK without the option
/// → neither scales; stream 2: the SYN was not captured → the client's scale is unknown.
#[test]
fn window_scale_negotiated_not_negotiated_and_unknown() {
    let c = connections("wireshark-sample-win-scale-examples.pcapng");
    assert_eq!(c[0].dirs[0].wscale, Some(WindowScale::Shift(8)));
    assert_eq!(c[0].dirs[1].wscale, Some(WindowScale::Shift(7)));
    assert_eq!(c[1].dirs[0].wscale, Some(WindowScale::NotNegotiated));
    assert_eq!(c[1].dirs[1].wscale, Some(WindowScale::NotNegotiated));
    assert_eq!(c[1].dirs[1].syn.unwrap().wscale, None);
    assert_eq!(c[2].dirs[0].syn, None);
    assert_eq!(c[2].dirs[1].syn.unwrap().wscale, Some(7));
    // The server's SYN/ACK, frame 19, carries MSS 1460 and SACK-permitted.
    assert_eq!(c[2].dirs[1].syn.unwrap().mss, Some(1460));
    assert!(c[2].dirs[1].syn.unwrap().sack_permitted);
}

/// tcptrace-dsack.pcap: tshark's tcp.analysis.initial_rtt is 0.560439 s; the capture
/// was taken at the sender (SYN→SYN/ACK is the whole RTT), whose data→ACK samples on
/// a long-RTT path stay near it.
#[test]
fn handshake_rtt_and_vantage_on_a_long_path() {
    let c = &connections("tcptrace-dsack.pcap")[0];
    assert_eq!(c.handshake_rtt_ns(), Some(560_439_000));
    assert_eq!(c.vantage, Vantage::Client);
    let rtt = c.dirs[0].rtt_ack.unwrap();
    assert!(
        rtt.min_ns >= 540_000_000 && rtt.median_ns < 700_000_000,
        "{rtt:?}"
    );
    let syn = c.dirs[0].syn.unwrap();
    assert_eq!(
        (syn.mss, syn.wscale, syn.sack_permitted, syn.timestamps),
        (Some(1460), Some(0), true, true)
    );
    // One D-SACK in the capture (tshark: tcp.options.sack.dsack on one frame).
    assert_eq!(c.dirs[1].counts.dsacks, 1);
}

/// Data→ACK RTT against tshark's `tcp.analysis.ack_rtt` (min and median over the frames
/// that carry it, per ACKing side). tcpwhy takes fewer samples (Karn's rule: none from
/// retransmitted data; tshark takes one whenever an ACK exactly ends a segment), so
/// the medians may differ a little; the minimum is the same frame pair.
#[test]
fn rtt_samples_agree_with_tshark_ack_rtt() {
    // (file, stream, direction of the data, tshark min ms, tshark median ms)
    let cases = [
        ("tcptrace-dsack.pcap", 0, 0, 559.497, 582.001),
        ("sharkfest20-trace1.pcapng", 0, 0, 1.125, 1.392),
        ("zeek-http-206-example-b.pcap", 0, 1, 0.697, 0.965),
        ("zeek-http-206-example-b.pcap", 1, 1, 0.680, 1.393),
        ("wireshark-sample-nntp-sack.pcap", 1, 0, 24.179, 26.859),
    ];
    for (name, stream, dir, min_ms, median_ms) in cases {
        let conns = connections(name);
        let r = conns[stream].dirs[dir].rtt_ack.expect("samples");
        let ms = |ns: u64| ns as f64 / 1e6;
        assert!(
            (ms(r.min_ns) - min_ms).abs() < 0.001,
            "{name}: min {}",
            ms(r.min_ns)
        );
        let rel = (ms(r.median_ns) - median_ms).abs() / median_ms;
        assert!(
            rel < 0.01,
            "{name}: median {} vs {median_ms}",
            ms(r.median_ns)
        );
    }
}

/// Largest bytes in flight per direction equals the maximum of tshark's
/// `tcp.analysis.bytes_in_flight` for that sender.
#[test]
fn max_bytes_in_flight_equals_tshark() {
    let cases = [
        ("tcptrace-dsack.pcap", 0, [Some(120_184), None]),
        ("sharkfest20-trace1.pcapng", 0, [Some(78_746), Some(85)]),
        (
            "wireshark-sample-ipp-window-full.pcap",
            1,
            [Some(5_792), Some(201)],
        ),
    ];
    for (name, stream, want) in cases {
        let c = &connections(name)[stream];
        assert_eq!(
            [c.dirs[0].max_in_flight, c.dirs[1].max_in_flight],
            want,
            "{name}"
        );
    }
}
