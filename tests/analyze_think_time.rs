//! `app.server_think_time` claims only the server's time: not a round trip that grew
//! after the handshake, not a loss recovery of the response. Lab captures from both
//! vantage points, numbers checked by hand in tshark and against the lab's ground truth
//! (truth/server-timings.json, nstat). The server-think-time example itself (400 ms from
//! both ends) is asserted in tests/analyze.rs.

mod common;

use serde_json::Value;

const THINK: &str = "app.server_think_time";

/// Every finding of a lab capture, none hidden by cost (`--min-cost 0`).
fn lab(scenario: &str, side: &str, extra: &[&str]) -> Vec<Value> {
    let args: Vec<&str> = ["--min-cost", "0"].iter().chain(extra).copied().collect();
    common::analyze::findings_json(common::analyze::lab_path(scenario, side), &args)
}

fn ids(f: &[Value]) -> Vec<&str> {
    f.iter().filter_map(|x| x["id"].as_str()).collect()
}

/// rtt-step: the path's RTT is 25 ms in the handshake and 325 ms from the next packet on
/// (truth/path.json: to_client delay 13 → 313 ms after 1 packet). The server answered at
/// once (server-timings.json: think_ns 111 and 170).
///
/// Checked in tshark on client.pcap: request 1's last byte is frame 4 (0.025523 s); the
/// server's pure ACK of it, frame 6 (0.350748 s, `tcp.analysis.ack_rtt` 0.325225 s
/// from frame 4); the first response byte, frame 7 (0.350976 s): a 325.45 ms gap of
/// which 0.25 ms is not the round trip. Request 2: frame 147 (1.499940 s), ACK frame 148
/// (ack_rtt 0.325627 s), response frame 149 (1.825601 s): 0.03 ms left. Subtracting the
/// handshake's 25.4 ms instead claimed 300 ms per request. server.pcap: the responses leave at once (no gap to claim).
#[test]
fn rtt_growth_after_the_handshake_is_not_thinking() {
    for side in ["client", "server"] {
        let f = lab("rtt-step", side, &[]);
        assert!(!ids(&f).contains(&THINK), "{side}: {:?}", ids(&f));
        // The capture is read: its other findings (the spurious RTO of the grown RTT)
        // are still there.
        assert!(ids(&f).contains(&"loss.rto"), "{side}");
    }
}

/// rto: the 1,000-byte response's original, its tail loss probe and the first RTO
/// retransmission were all dropped (server nstat TCPLossProbes 1, TCPTimeouts 2); the
/// server's application wrote it at once (server-timings.json: think_ns 411).
///
/// Checked in tshark on client.pcap: the request ends in frame 4 (0.026337 s), the
/// server's ACK of it is frame 5 (0.051515 s, IP ID 0x061d, ack 401), the response's
/// only data arrives in frame 6 (0.976153 s, IP ID 0x0621, ack 401): IDs 0x061e–0x0620,
/// three transmissions, never reached the client. The 925 ms after the server's ACK are
/// loss.rto's (which claims them), not thinking.
#[test]
fn a_response_whose_first_transmissions_were_lost_is_not_thinking() {
    let f = lab("rto", "client", &[]);
    assert!(!ids(&f).contains(&THINK), "{:?}", ids(&f));
    let rto = f
        .iter()
        .find(|x| x["id"] == "loss.rto")
        .expect("loss.rto keeps the recovery");
    let cost = rto["cost_ms"].as_f64().expect("cost");
    assert!((cost - 925.0).abs() < 0.05 * 925.0, "{cost}");
    let f = lab("rto", "server", &[]);
    assert!(!ids(&f).contains(&THINK), "{:?}", ids(&f));
}

/// server-think-time (200 ms think per request, server-timings.json): at the client each
/// request's own ACK (frames 5 and 35, ack_rtt 25.18 and 25.33 ms in tshark) gives the
/// round trip subtracted, and the evidence says so.
#[test]
fn the_round_trip_subtracted_is_named() {
    let f = lab("server-think-time", "client", &[]);
    let t = f.iter().find(|x| x["id"] == THINK).expect(THINK);
    let text = t["explanation"].as_str().expect("explanation");
    assert!(
        text.contains("the RTT sample of the request's own ACK for 2"),
        "{text}"
    );
    let notes: Vec<&str> = t["evidence"]
        .as_array()
        .expect("evidence")
        .iter()
        .filter_map(|e| e["note"].as_str())
        .collect();
    assert!(
        notes[1].contains("the request's ACK (frame 5)"),
        "{notes:?}"
    );
    assert!(
        notes[3].contains("the request's ACK (frame 35)"),
        "{notes:?}"
    );
}

/// suricata-verify-mime-stream-depth (public, SMTP on port 2525, captured at the client):
/// the handshake takes 110.75 ms (SYN frame 1 at 0, SYN/ACK frame 2 at 0.110525 s, ACK
/// frame 3 at 0.110751 s), but every request is ACKed within a fraction of a millisecond
/// (frame 6, `tcp.analysis.ack_rtt` 0.129 ms for request 1 in frame 5; the response,
/// frame 7, 101.6 ms after the request): something near the client acknowledges for the
/// server. Those ACKs are not the round trip: the handshake's 110.75 ms stays
/// subtracted, leaving the two exchanges whose gaps exceed it: request 10 (frame 1284,
/// 2.053375 s; ACK frame 1285 after 0.09 ms; response frame 1286, 2.234536 s: 181.2 ms)
/// and request 14 (frame 1916, 2.611819 s; response frame 1918, 2.851276 s: 239.5 ms):
/// 70.4 + 128.7 = 199.1 ms. (Subtracting the 0.1 ms ACK samples would claim 1748 ms.)
#[test]
fn acks_from_nearer_than_the_server_are_not_the_round_trip() {
    let f = common::analyze::findings_json(
        common::analyze::public_path("suricata-verify-mime-stream-depth.pcap"),
        &["--min-cost", "0"],
    );
    let t: Vec<&Value> = f.iter().filter(|x| x["id"] == THINK).collect();
    assert_eq!(t.len(), 1, "{t:?}");
    let cost = t[0]["cost_ms"].as_f64().expect("cost");
    assert!((cost - 199.1).abs() < 1.0, "{cost}");
    let frames: Vec<u64> = t[0]["evidence"]
        .as_array()
        .expect("evidence")
        .iter()
        .filter_map(|e| e["frame"].as_u64())
        .collect();
    assert_eq!(frames, [1284, 1286, 1916, 1918]);
}

/// Sweep s9-081 (session-7 seed 9), client capture, frames 1–30
/// (tests/data/sweep/README.md): RTT 72 ms, TSO at the server, GRO at the client; the
/// server answered in 1.0 ms (its capture: request in at 36.975734, ACK out 36.975747,
/// response out 36.976712). Checked in tshark on the prefix: request 1 ends in frame 4
/// (0.072576 s); the server's pure ACK of it, frame 5 (0.145384 s, TSval 810861044,
/// `ack_rtt` 72.81 ms); the first response byte, frame 6 (0.150631 s, TSval 810861045):
/// 78.06 ms after the request, 5.25 ms after the ACK though the server's clock moved one
/// tick (1 ms) between them. The path delayed the response's way back by 4.25 ms more
/// than the ACK's; before, the 5.25 ms beyond the ACK's sample were named thinking.
#[test]
fn a_longer_way_back_of_the_response_is_not_thinking() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/sweep/s9-081-http-client.pcap");
    let f = common::analyze::findings_json(path, &["--min-cost", "0"]);
    assert!(!ids(&f).contains(&THINK), "{:?}", ids(&f));
    // The capture is read: the handshake's round trip is still priced.
    assert!(
        ids(&f).contains(&"slow_start.new_connection"),
        "{:?}",
        ids(&f)
    );
}

/// Issue 12 class 7, fresh sweep s67-014 at the client (snaplen 64: no timestamps; the
/// delay to the client rose from 4 to 36 ms after the SYN/ACK; tests/data/sweep/README.md).
/// In tshark: request 1 ends at frame 4 (0.007407 s), the server's ACK of it arrives at
/// frame 5 (0.046647 s, 39.2 ms) and the response at frame 6 (0.053390 s, 46.0 ms). The
/// client's first ACK of it, frame 7 (0.053413 s), released the second round, whose first
/// segment is frame 26 (0.071093 s): 17.7 ms. The server's capture has the request at
/// 0.007318 s and the response at 0.007775 s (0.45 ms; server-timings.json: think_ns
/// 0.4 ms). The path moved by more than the 6.74 ms it was named as thinking.
#[test]
fn a_round_trip_that_moved_by_more_than_the_thinking_is_not_thinking() {
    let path = common::analyze::sweep_path("s67-014-rtt_step-client.pcap");
    common::analyze::not_at_any_cost(&path, THINK);
}
