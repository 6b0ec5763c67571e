//! `rwnd.limited` on a capture of the kernel-labelled sweep (issue 12): how long the
//! receiver's window held the sender, against the sender's own tcp_info
//! (tcpi_rwnd_limited, tcpi_busy_time). Numbers checked by hand in tshark
//! (tests/data/sweep/README.md).

mod common;

use common::analyze::{findings, findings_at_any_cost, frames, one, sweep_path};

/// s10-080, the client's capture of its own upload (RTT 1 ms, Reno, no window scaling,
/// 2,924,544 B in 64 KiB writes): the sender's tcp_info read rwnd_limited 116 ms of busy
/// 124 ms, 46 segments unacked (the 65,535-byte window) and 338 KB not yet sent. Frame
/// 1005 (0.043593 s) fills the window to its edge, 932,669 (ACK 867,134 + 65,535); frame
/// 1006 (0.043660 s) ACKs 870,030, room for two segments, and six more ACKs follow, yet
/// the client's next data leave only at frame 1014 (0.044455 s, 0.8 ms later), up to the
/// then edge 958,733 exactly. Linux's TCP_CHRONO_RWND_LIMITED runs through such a pause
/// (it is stopped only by a `tcp_write_xmit` whose window test passes, and the ACKs
/// waited for the writer's socket lock); counted as the sender's own window, as before,
/// they left 48 % of the transfer (56.8 ms) to the window. Now 94 %, as the kernel's
/// 116 / 124; the cost is the transfer less the 9.93 ms slow start would have needed
/// (the label's 112 ms).
#[test]
fn a_window_holds_the_sender_until_it_sends_again_as_linux_counts_it() {
    let f = findings(sweep_path("s10-080-bulk-client.pcap"));
    let r = one(&f, "rwnd.limited");
    assert_eq!(r.vantage, "client");
    assert!((r.cost_ms - 109.4).abs() < 0.1, "{}", r.cost_ms);
    assert!(
        r.explanation.contains("receiver's window 94 %"),
        "{}",
        r.explanation
    );
    assert!(r.explanation.contains("146 time(s) it filled the window"));
    assert_eq!(frames(r)[..4], [126, 159, 175, 209]);
    let w = one(&f, "rwnd.no_window_scaling");
    assert!((w.cost_ms - r.cost_ms).abs() < 1e-9);
}

/// s10-064, the client's capture of a download behind a 5 Mbit/s bottleneck with a
/// 925-packet FIFO (18 ms path, CUBIC, the client's SO_RCVBUF fixed at 48,128 B): the
/// client's window stays at 59,368 B (frame 13) and the queue fills with it, so the
/// server's data echo the client's ACKs 97 ms after them (median; the handshake's 19 ms
/// and the shortest echo 18.8 ms are the empty path). The server's tcp_info read
/// rwnd_limited 4,532 ms of busy 4,700. In tshark, frame 228 (0.379 s) echoes TSval
/// 3318986300, the client's ACK in frame 167, and ends exactly at that ACK's right edge
/// (207,065); each ACK releases two segments, which the bottleneck delivers 2.4 ms apart
/// (frames 227 and 228), the first one segment short of the edge. So do frames 219, 222
/// and 225 (0.365–0.374 s: ACKs of frames 158, 161 and 164, edges 198,377, 201,273 and
/// 204,169). The tracker sees the window full as the kernel does (878 times from frame
/// 219 on, 92 % of the transfer; session 16).
///
/// But the window cost nothing: 2,809,856 B in 4,706 ms (data frames 4 → 2946) is 597
/// kB/s, and 5 Mbit/s carries 597.7 kB/s of payload in 1,514-byte frames of 1,448. The
/// window was 5 × the bottleneck's bandwidth-delay product (18.8 ms × 597.7 kB/s = 11.2
/// KB) and the rest waited in the FIFO: a larger window would have lengthened the queue,
/// not the rate. The label (crates/lab/src/labels.rs, `busy_beyond_rounds_ms`) gives it
/// no cost either: busy 4,700 ms less the bytes at the bottleneck's payload rate, 4,701.
/// Named: the queue (network.bufferbloat), with the link's rate; "raise the receive
/// buffer" is not.
#[test]
fn a_window_above_the_bottlenecks_bdp_costs_nothing() {
    let conns = common::connections(&sweep_path("s10-064-bulk-client.pcap"));
    let l = &conns[0].dirs[1].limits;
    let share = l.rwnd_ns as f64 / l.total_ns() as f64;
    assert!(share > 0.9, "{l:?}");
    common::analyze::no_family_at_any_cost(sweep_path("s10-064-bulk-client.pcap"), "rwnd.");
    let f = findings(sweep_path("s10-064-bulk-client.pcap"));
    let b = one(&f, "network.bufferbloat");
    // The delivery rate while the queue stood: the link's payload rate within 1 %.
    assert!(
        b.explanation.contains("≈ 596 KB/s (4.8 Mbit/s of payload)"),
        "{}",
        b.explanation
    );
}

/// s44-040, the client's capture (tests/data/sweep/README.md): a 37,648 B window and an
/// 18 KB send buffer taking turns to cap a flight that waits in a 15 Mbit/s FIFO at a
/// 1 ms path. The server's tcp_info read rwnd_limited 224 ms of busy 1,136 (its own
/// capture: the window 23 % of the time). Checked in tshark: frame 154 (0.078050 s) ends
/// at 134,665, the right edge of the client's ACK in frame 114 (0.057046 s: ACK 97,017 +
/// 37,648), whose TSval it echoes 21.0 ms later; frame 157 likewise at frame 117's edge
/// (137,561), 178 at frame 138's (156,385), 181 at frame 141's (159,281). The echoes of
/// the client's TSvals run 1–21 ms as the queue fills and drains; with the ACKs that no
/// data echoed timed by the shortest of the last four, the view ran ahead of the server
/// and its flights looked like 9 KB: 0 % window-limited (session 16).
///
/// Yet the window cost nothing: the transfer averaged 1,792 kB/s, and 15 Mbit/s carries
/// 1,793 kB/s of payload in 1,514-byte frames of 1,448; the queue stood from the
/// slow-start ramp to the end, so the link never idled. 2,046,976 B at that rate take
/// 1,141 ms, the busy time the kernel counted (1,136 ms): the label leaves it undecided,
/// and the finding, priced against the bytes at the rate the queue measured, is below a
/// millisecond (hidden at the default --min-cost).
#[test]
fn a_window_behind_a_queue_it_fills_and_drains_is_seen_from_the_receiver() {
    let path = sweep_path("s44-040-bulk-client.pcap");
    let all = common::analyze::findings_at_any_cost(&path);
    let r = one(&all, "rwnd.limited");
    assert_eq!(r.vantage, "client");
    assert_eq!(frames(r)[..4], [154, 157, 178, 181]);
    assert!(
        r.explanation.contains("receiver's window 17 %"),
        "{}",
        r.explanation
    );
    assert!(
        r.explanation
            .contains("a bottleneck that delivered 1793 kB/s while it stood"),
        "{}",
        r.explanation
    );
    assert!(r.cost_ms < 1.0, "{}", r.cost_ms);
    common::analyze::none_of(&findings(&path), &["rwnd.limited", "rwnd.not_growing"]);
}

/// s50-072, the server's own capture (RTT 6 ms, Reno, 3,307,520 B through 30 Mbit/s with
/// a 409-packet FIFO; the client's SO_RCVBUF 60,416 gives a 65,535 B window). tshark
/// flags 667 frames "window full" and its data → ACK RTT runs from 6.2 ms to 18.0 ms
/// (median) and 18.6 ms (p95): the window is three times the bottleneck's BDP (6.2 ms ×
/// 3,586 kB/s = 22 KB) and the rest waits in the FIFO. The server's tcp_info read
/// rwnd_limited 864 ms of busy 884. Data frames 4 (0.006507 s) → 3558 (0.918819 s):
/// 3,307,520 B in 912 ms, and 30 Mbit/s carries 3,586 kB/s of payload in 1,514-byte
/// frames of 1,448, 922 ms for those bytes: the link never idled, and a larger window
/// would only have lengthened its queue. Seen at the sender, the window's time is exact
/// (97 % of the transfer), and it cost nothing; session 16 named 869 ms of it.
#[test]
fn at_the_sender_a_window_above_the_bottlenecks_bdp_costs_nothing() {
    let path = sweep_path("s50-072-bulk-server.pcap");
    let conns = common::connections(&path);
    let l = &conns[0].dirs[1].limits;
    assert!(l.rwnd_ns as f64 > 0.95 * l.total_ns() as f64, "{l:?}");
    common::analyze::no_family_at_any_cost(&path, "rwnd.");
}

/// Control s58-015 at the server (140 ms, clean path, CUBIC, 4 MiB): in tshark the
/// response leaves in rounds of 10, 20, 40, 80, 160, 320, 640, 1,280 and 347 segments,
/// slow start's doubling to the segment. Frame 205 (0.5676 s) ends the fourth with
/// 115,840 B in flight, 896 B short of the client's 116,736 B window, and the next ACK
/// (frame 206) comes 142 ms later: the window's edge and the congestion window (80
/// segments) met there. Linux tests the congestion window first, so tcp_info's
/// `rwnd_limited` stays 0; the window was named for 42 ms.
#[test]
fn a_window_met_by_slow_starts_own_round_held_nothing() {
    common::analyze::no_family_at_any_cost(sweep_path("s58-015-control-server.pcap"), "rwnd.");
}

/// s53-069 at the client (43 ms, CUBIC, a reader taking 7,168 B every 48 ms, SO_RCVBUF
/// 68,608): the response's rounds are 10, 20 and 40 segments, then the 10 left. The
/// client's ACK in frame 55 (0.1413 s) puts the window's edge at 101,731, and the
/// 40-segment round ends at 101,361 (frame 95), 370 B short of it: slow start's round,
/// which the window met. tcp_info: `rwnd_limited` 0, sk_rcvbuf 137,216 throughout; the
/// window and its flat size (not_growing) were named for 10 ms.
#[test]
fn a_slow_readers_window_met_by_a_doubling_round_is_not_named() {
    common::analyze::no_family_at_any_cost(sweep_path("s53-069-slow_reader-client.pcap"), "rwnd.");
}

/// Control s65-095 at the server (25 ms, clean path, CUBIC, 4 MiB; cut to 96 bytes a
/// frame with editcap: the capture had no snaplen and weighed 4.5 MB): rounds of 10, 20,
/// 40, 80, 160, 320 and 640 segments, then 679 and 713 once HyStart ended slow start. The
/// flight reaches the client's 116,736 B window at frame 199 (0.1069 s, the end of the
/// 80-segment round: 115,840 B in flight, 896 B short) and at frame 202, in the
/// 160-segment round after it: both in rounds that doubled to the segment, followed by
/// rounds that doubled too. tcp_info's `rwnd_limited` 0; named for 25 ms. A rule that
/// asked every round to double missed it (the rounds after HyStart's exit do not).
#[test]
fn a_window_met_in_slow_starts_rounds_before_hystart_held_nothing() {
    common::analyze::no_family_at_any_cost(sweep_path("s65-095-control-server-96.pcap"), "rwnd.");
}

/// s65-056 at the client (11 ms, CUBIC, 85 Mbit/s, the client without window scaling):
/// the response's rounds are 10, 20 and 40 segments, then 799 that never pause: the
/// 65,535 B window holds a continuous stream (in tshark the client's window field is
/// 65,535 in every segment). The three
/// rounds before it doubled exactly, but the window was full in the rounds that did not:
/// it is named (kernel: `rwnd_limited` 192 ms of 228 busy, 115 ms beyond slow start).
#[test]
fn a_window_full_beyond_the_doubling_rounds_is_still_the_windows() {
    let f = findings(sweep_path("s65-056-bulk-client.pcap"));
    let r = one(&f, "rwnd.limited");
    assert!(r.explanation.contains("65,535 B"), "{}", r.explanation);
    one(&f, "rwnd.no_window_scaling");
}

/// Issue 12, fresh sweep s68-061 at the server (6 ms, Reno, snaplen 128; the client
/// reads 6,144 B every 98 ms with SO_RCVBUF 38,912; tests/data/sweep/README.md). In
/// tshark the 350,208 B leave from frame 4 (0.009114 s) to frame 329 (4.612793 s), held
/// by the client's window (12 zero windows); tcp_info: rwnd_limited 4,464 ms of busy
/// 4,648. Frame 117 (0.840072 s) ACKs everything sent, 42.6 ms after the ACK before it
/// (frame 116, 0.797483 s), with a window of 5,792 B down from 15,928: the receiver held
/// it (with unread data and a shrinking window no immediate ACK, `__tcp_ack_snd_check`), and its 49.0 ms
/// sample on a 6.3 ms path is that hold, 0.08 ms of the path's jitter beyond the
/// silence. Before, such samples made a standing queue of 0.5 Mbit/s: bufferbloat named
/// for 13.1 ms, and that "bottleneck" priced the window at nothing.
#[test]
fn a_slow_readers_held_acks_are_no_queue_and_its_window_is_named() {
    let path = sweep_path("s68-061-slow_reader-server.pcap");
    common::analyze::not_at_any_cost(&path, "network.bufferbloat");
    let f = findings(&path);
    let w = one(&f, "rwnd.limited");
    assert!(
        (4_464.0..4_604.0).contains(&w.cost_ms),
        "the chrono's 4,464 ms up to the transfer's 4,604: {}",
        w.cost_ms
    );
    assert!(
        w.explanation.contains("350,208 B in 4604 ms"),
        "{}",
        w.explanation
    );
}

/// Issue 12 class 4, sweep s96-086 at the client (Reno at 123 ms, the delay to the
/// client raised to 300 ms after the SYN/ACK; tests/data/sweep/README.md): two 80,560 B
/// responses under the client's window, 67,584 B at the start (frame 7) and 80,896 B
/// from frame 29 on. In tshark the second response (frames 89–168, 1.8618–1.8623 s)
/// arrives in one round trip, its last segment ending at 161,121 — within a segment of
/// the edge the client's frame 87 had opened (ACK 80,561 + 80,896 = 161,457) — and the
/// server's next segment is its FIN, frame 171, 361 ms later. The server had nothing
/// more to send: Linux's rwnd chrono runs only while a queued skb fails the window test
/// (`tcp_snd_wnd_test`), and tcp_info read rwnd_limited 0. Counted as the window's,
/// that round trip was named rwnd.limited and rwnd.not_growing ("a window still
/// ramping", 361 ms). Time at the edge is the window's only when new data follow it;
/// what remains at any cost is the 20 µs between frame 166, at the edge in the view the
/// tracker keeps of the server, and frame 168, the response's last 920 B.
#[test]
fn a_response_that_ends_at_the_windows_edge_was_not_held_by_it() {
    let path = sweep_path("s96-086-rtt_step-client.pcap");
    let f = findings(&path);
    assert!(
        !f.iter().any(|x| x.id.starts_with("rwnd.")),
        "{:?}",
        f.iter().map(|x| &x.id).collect::<Vec<_>>()
    );
    for x in findings_at_any_cost(&path)
        .iter()
        .filter(|x| x.id.starts_with("rwnd."))
    {
        assert!(x.cost_ms < 0.05, "{} {}", x.id, x.cost_ms);
    }
}
