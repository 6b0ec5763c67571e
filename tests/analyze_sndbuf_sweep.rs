//! `sndbuf.limited` on captures of the kernel-labelled sweep (issue 12): a flight held
//! below the window by an application writing in chunks on a timer, which the detector
//! had called a send-buffer limit (tcp_info's `sndbuf_limited` 0). Numbers checked by
//! hand in tcpdump (tests/data/sweep/README.md).

mod common;

use common::analyze::{findings, frames, none_of, not_at_any_cost, one, public, sweep_path};

/// s8-072, the server's capture (the sender): RTT 136 ms, CUBIC, 6 Mbit/s; the
/// application writes 7,168 B every 71 ms, 23 times. The data per RTT stays at ≈ 14 KB
/// (two writes) for 11 RTTs, far below the client's 80 KB window, with no loss: the
/// plateau the detector looks for. But segments shorter than the 1,448-byte MSS go out
/// in the middle of the transfer, each followed by more data with no request between:
/// frames 6 (1,376 B), 16, 26, 36, 46, 56, 66, 76, 86, 96 and 106 (1,304 B each), 11
/// write ends for 11 plateau RTTs; frame 116 (1,304 B, FIN) ends the data. A writer held
/// by its send buffer sends full segments (`tcp_sendmsg_locked` waits for space only at a
/// new skb), so the writes ran dry: ss shows `app_limited` in 34 of 34 samples and cwnd
/// growing from 10 to 22 above the flight of 10 segments.
#[test]
fn a_timed_writer_whose_write_ends_reach_the_wire_is_not_sndbuf_limited() {
    let f = findings(sweep_path("s8-072-bulk-server.pcap"));
    none_of(&f, &["sndbuf.limited"]);
}

/// s20-016, the client's capture (the receiver): RTT 99 ms, Reno, the client without
/// window scaling (a 65,535 B window), the server's SO_SNDBUF 17,408 B with 1,448-byte
/// writes. ss on the server: cwnd 93 segments, the flight 16–45, `w` (queued) 36–84 KB
/// against `tb` 34,816, `sndbuf_limited` 1,100 ms by its end (an under-count: the chrono
/// misses MSS-sized writers). The server speaks first (no request), so the rounds are the
/// direction's own; tcpdump shows the data per RTT falling from 20 to 16 segments with
/// nothing retransmitted (0 retransmissions or lost segments in tshark) and no trend
/// after it. Its cost is the transfer less what the 64 KB window alone would allow:
/// 3,019,776 B need 47 windows, 46 RTTs of 99.5 ms = 4,579 ms, against 8,596 ms.
#[test]
fn a_send_buffer_holds_a_server_that_speaks_first_below_an_unscaled_window() {
    let f = findings(sweep_path("s20-016-bulk-client.pcap"));
    let s = one(&f, "sndbuf.limited");
    assert_eq!(s.vantage, "client");
    assert!((s.cost_ms - 4017.0).abs() < 2.0, "{}", s.cost_ms);
    assert!(
        s.explanation
            .contains("lets at most 65,535 B through per RTT"),
        "{}",
        s.explanation
    );
    assert_eq!(frames(s)[..2], [341, 378]);
    // The window's own time stays with the window, not in addition.
    let r = one(&f, "rwnd.limited");
    assert!(s.cost_ms + r.cost_ms < 8_795.0);
}

/// s19-032, the server's capture at snaplen 64 (the SYNs' window scale cut): RTT 20 ms,
/// Reno, SO_SNDBUF 41,984 B. Frame 606 had 259,192 B in flight under a window field of
/// 298, so the scale is at least 259,192 / 298; the rounds then carry ≈ 70 KB
/// (62,264–76,744 B from frame 1026) without loss, under fields of 799 (frame 1025, in
/// effect when the plateau began) and more: the window was at least 799 × 259,192 / 298
/// = 694,947 B, and never the limit. Without it, slow start's rounds from 10 segments
/// carry the 2,073,600 B in ≈ 142 ms, of the 592 ms the data took: 450 ms. (Session 18
/// took the window as the largest flight, 259,192 B, and priced 430 ms.)
#[test]
fn a_send_buffer_is_seen_under_a_window_whose_scale_the_snaplen_cut() {
    let f = findings(sweep_path("s19-032-bulk-server.pcap"));
    let s = one(&f, "sndbuf.limited");
    assert!(
        s.explanation.contains("at least 694,947 B"),
        "{}",
        s.explanation
    );
    assert_eq!(frames(s)[0], 1026);
    assert!((s.cost_ms - 450.0).abs() < 2.0, "{}", s.cost_ms);
}

/// s13-071, the client's capture at snaplen 64: a clean 4 MiB CUBIC download at 8 ms,
/// no send buffer set (`sndbuf_limited` 0). Rounds split by the hosts' scheduling fall by
/// more than the noise (264 → 72 segments), but then grow ≈ 6 segments per round, as a
/// congestion window does, and the window scale is cut: neither the flight nor the
/// window says "send buffer".
#[test]
fn a_congestion_window_growing_after_a_split_round_is_not_a_send_buffer() {
    let f = findings(sweep_path("s13-071-control-client.pcap"));
    none_of(&f, &["sndbuf.limited"]);
}

/// tcptrace-ipv6-ftp-nasa.pcap stream 2, an FTP data connection seen between the hosts
/// (RTT 1.6 ms): 6.3 MB in 7.4 s, 855 kB/s, in rounds of 1–16 KB (7.6 KB on average)
/// under a 25,920 B window with nothing lost. Rounds one RTT apart would carry 4.7 MB/s;
/// these waited for something else between them (the link, the hosts), so their data
/// per RTT is no ceiling on 855 kB/s.
#[test]
fn rounds_far_apart_are_no_send_buffer_ceiling() {
    let f = public("tcptrace-ipv6-ftp-nasa.pcap");
    none_of(&f, &["sndbuf.limited"]);
}

/// Issue 12, held-out sweep s40-013 at the client (tests/data/sweep/README.md): a reader
/// taking 21,504 B every 62 ms behind BBR at 33 ms, SO_RCVBUF 40,960; tcp_info on the
/// server: `sndbuf_limited` 0, `rwnd_limited` 1,092 ms. In tshark 1,290,240 B go to the
/// client over 3.56 s (362 kB/s), at most ≈ 31.6 KB per RTT; seen from the receiver, the
/// window it reopened bit by bit reached the sender late, and the tracker counted 62 % of
/// the time as the sender's own window. At 31.6 KB per 33.4 ms the bytes need 1.36 s: a
/// send buffer holding that ceiling explains under half the transfer, so it is not named
/// (it was, for 2,223 ms); the receiver's window is. Measured as the most sent within
/// one RTT, BBR's paced flight sits at 12–14 KB, a ceiling that would need 3.1 s; but
/// the window held the sender 38 % of the time, which a flight held below the window by
/// its buffer does not do.
#[test]
fn a_slow_readers_reopening_window_is_not_a_send_buffer() {
    let f = findings(sweep_path("s40-013-slow_reader-client.pcap"));
    none_of(&f, &["sndbuf.limited"]);
    one(&f, "rwnd.limited");
}

/// Issue 12, held-out sweep s44-085 at the client (tests/data/sweep/README.md): a reader
/// taking 30,720 B every 76 ms behind BBR at 48 ms, no window scaling at the client;
/// tcp_info on the server: `sndbuf_limited` 0, `rwnd_limited` 1,468 ms. Checked in
/// tshark: from frame 431 (1.236720 s) to frame 500 (1.425857 s) the server paces 64
/// segments in pairs ≈ 4.5 ms apart without a pause of half an RTT (92,672 B) while the
/// client's window field falls from 40,544 to 18,824 B (frames 430–490), and it is never
/// above 63,712 B in the capture: one round carried more than any window, so it was no
/// flight held by a buffer, but the reader reopening its window within it. Named before for 1,633 ms;
/// the receiver's window is named instead.
#[test]
fn a_round_larger_than_the_window_is_no_send_buffers_flight() {
    let f = findings(sweep_path("s44-085-slow_reader-client.pcap"));
    none_of(&f, &["sndbuf.limited"]);
    let r = one(&f, "rwnd.limited");
    assert!(
        r.explanation.contains("client's window"),
        "{}",
        r.explanation
    );
    one(&f, "rwnd.not_growing");
}

/// s53-088 at the client (snaplen 64: the SYNs' window scale and the timestamps cut),
/// a download from a server with SO_SNDBUF 21,504 to a client without window scaling:
/// the client's window field reads 65,535 in 723 of its 725 segments. The server's
/// samples: its send buffer full with the writer waiting and room in cwnd and window in
/// 82 of 100 (tcp_info's sndbuf_limited stays 0 on this kernel). In tshark the data
/// come in bursts a round trip apart: frame 160 (0.4985 s) 82.5 ms after the data
/// before it, frame 190 (0.5817 s) 82.6 ms. The window's least value was taken from the
/// largest flight alone (33 KB), as if the field might stand for less than itself; a
/// window scale is a shift of 0 or more (RFC 7323 §2.2), so the window is at least its
/// field, 65,535 B, and the 33 KB rounds stay below it.
#[test]
fn a_send_buffer_is_seen_from_the_client_under_an_unscaled_field() {
    let f = findings(sweep_path("s53-088-bulk-client.pcap"));
    let s = one(&f, "sndbuf.limited");
    assert!(
        s.explanation.contains("at least 65,535 B"),
        "{}",
        s.explanation
    );
    assert_eq!(frames(s)[..3], [114, 160, 190]);
}

/// s50-008 at the client (snaplen 64, 66 ms path, 7 Mbit/s behind a 938-packet FIFO,
/// CUBIC with TSO at the server): the server's samples show no send-buffer limit (0 of
/// 20). The client sees 56.6 KB of data per 67.6 ms RTT on a grid set by the handshake,
/// within 3 % for 12 RTTs: the link's 837 kB/s of payload. Its timestamps cut, no sample
/// spans the path, so the queue's growing RTT cannot be seen; but the data never pause:
/// after frame 100 no gap between data frames exceeds 2.8 ms (tshark, frames 4 → 779),
/// while a flight held by its buffer waits each round for its ACKs.
#[test]
fn a_bottlenecks_steady_stream_unseen_as_rtt_growth_is_no_send_buffer() {
    not_at_any_cost(sweep_path("s50-008-bulk-client.pcap"), "sndbuf.limited");
}

/// s57-040 at the server (snaplen 96, 187 ms path, no bottleneck): BBR with SO_SNDBUF
/// 77,824 (`tb` 155,648), 1,448-byte writes. ss on the server: cwnd 196–257 segments, the
/// flight (`unacked`) 53–92, the client's window 476,160 B, `sndbuf_limited` 2,528 ms of
/// 6.4 s busy. BBR paces, so a flight does not leave as one burst per RTT: in tshark the
/// data sent per RTT alternate between ≈ 80 and 133 KB, while the flight (sequence sent
/// less the latest ACK) stays at 118–133 KB from 1.1 s to the end (frames 1884 and 1981
/// begin two of its RTTs, 3.563 s and 3.752 s). No retransmission, no duplicate ACK
/// (tshark's analysis flags: none). 3,300,352 B go in 6,268 ms (frames 4 → 3481, first to
/// last data); slow start from 10 segments needs 8 rounds, 7 × 187.5 ms = 1,313 ms.
#[test]
fn a_paced_flight_held_by_its_send_buffer_is_measured_as_a_flight() {
    let f = findings(sweep_path("s57-040-bulk-server.pcap"));
    let s = one(&f, "sndbuf.limited");
    assert_eq!(s.vantage, "server");
    assert_eq!(frames(s)[..2], [1884, 1981]);
    assert!(
        (s.cost_ms - (6_268.2 - 1_312.7)).abs() < 2.0,
        "{}",
        s.cost_ms
    );
    assert!(
        s.explanation.contains("within one RTT"),
        "{}",
        s.explanation
    );
    assert!(s.explanation.contains("476,160 B"), "{}", s.explanation);
}

/// Control s58-095 at the client (snaplen 96, 21 ms path, CUBIC, no send buffer set):
/// ss on the server shows HyStart's exit (ssthresh 88) and then cwnd 100 → 221 over 450
/// ms with `unacked` equal to cwnd and megabytes unsent: a congestion window in
/// congestion avoidance, ≈ 6 segments per RTT. Measured as the most sent within one RTT
/// the flight grows 194 → 238 KB over eight RTTs (tshark, from frame 1530 at 0.3286 s),
/// within the plateau's ×1.25, so the plateau must also not grow as a congestion window
/// does; it was named for 425 ms.
#[test]
fn a_congestion_window_growing_after_hystart_is_no_plateau() {
    not_at_any_cost(sweep_path("s58-095-control-client.pcap"), "sndbuf.limited");
}

/// Issue 12, fresh sweep s67-056 at the server (BBR, 46 ms, 17 Mbit/s, snaplen 64: the
/// SYNs' window scale cut; SO_SNDBUF 25,600, so sk_sndbuf 51,200; tests/data/sweep/
/// README.md). In tshark the largest flight is 66,608 B at frame 226 (0.289178 s) under a
/// window field of 169; from 0.55 s on the client's fields are 184 and 185. The scale is
/// the connection's, so the window on the plateau was at least 184 × 66,608 / 169 =
/// 72,519 B, while the server sent at most 62,264–66,608 B within an RTT from frame 489
/// (0.557592 s). The plateau's cited frames 489, 525, 579 and 623 are the first data of
/// the RTT-long intervals 11 to 14 after the first data (the handshake's 46.445 ms, frame
/// 3); by tshark's times the most sent within one RTT ending in each is 65,160, 65,160,
/// 66,608 and 66,608 B (the detector's eighths of an RTT read 0–4,344 B less). The
/// data ran from frame 4 (0.046697 s) to frame 903 (0.983531 s).
/// tcp_info: sndbuf_limited 364 ms of busy 968 (the chrono a lower bound, the label's up
/// to 555 ms). Before, the window's least value was the largest flight itself (66,608 B),
/// which the plateau reached, and nothing was named.
#[test]
fn a_send_buffer_is_seen_under_a_cut_scale_bounded_by_the_largest_flight() {
    let f = findings(sweep_path("s67-056-bulk-server.pcap"));
    let s = one(&f, "sndbuf.limited");
    assert_eq!(frames(s)[..4], [489, 525, 579, 623]);
    assert!(
        s.explanation.contains("at least 72,519 B"),
        "{}",
        s.explanation
    );
    assert!(
        s.explanation.contains("838,656 B in 937 ms"),
        "{}",
        s.explanation
    );
    assert!((364.0..=555.0).contains(&s.cost_ms), "{}", s.cost_ms);
}

/// Issue 12, s49-032 at the server (BBR, 31 ms, snaplen 128, TSO, SO_SNDBUF 87,040: 174,080
/// B of buffer; 3,879,936 B in 1,448-byte writes). In tshark the handshake's RTT at the
/// server is 31.344 ms (frames 2 → 3) and the data runs from frame 4 (0.036122 s) to frame
/// 2351 (1.252085 s): 1,215.96 ms. The most sent within one RTT ending in each RTT-long
/// interval from the first data, intervals 11 to 24 (first frames 741, 796, 854, 929, …):
/// 111,496, 137,560, 133,216, 102,808, 131,768, 133,216, 131,768, 133,216, 92,672,
/// 131,768 ×3, 115,840, 131,768 B; then 159,280. No retransmission, no duplicate ACK,
/// the client's window 1.5 MB. The flight comes back to 91–92 segments (131,768–133,216 B)
/// in 11 of the 14 and dips below it by up to a third: the writer, asleep on a full
/// buffer, is woken only when a third of it is free (`sk_stream_write_space`), and BBR's
/// drain round paces at 0.75. ss: cwnd 206–288 segments with 39–98 unacked, `notsent`
/// often empty, tcp_info's sndbuf_limited 388 ms of busy 1,224 (the label's up to 944 ms).
/// The ceiling the finding reports, 133,216 B, is the most its eighths of an RTT read in
/// those intervals; by tshark's times 133,216 B is reached in intervals 13, 16 and 18 and
/// 137,560 B once (interval 12, three segments more, within the slice the measure
/// documents). The spread (×1.6) exceeded the plateau's ×1.25, and nothing was named even
/// at `--min-cost 0`. Cost: the span less slow start's 9 rounds from 10 segments (8 × 31.344
/// = 250.8 ms) = 965.2 ms.
#[test]
fn a_flight_dipping_below_its_send_buffers_ceiling_is_held_by_it() {
    let f = findings(sweep_path("s49-032-bulk-server.pcap"));
    let s = one(&f, "sndbuf.limited");
    assert_eq!(s.vantage, "server");
    assert_eq!(frames(s)[..4], [741, 796, 854, 929]);
    assert!(
        s.explanation
            .contains("back within one ACK's release of 133,216 B"),
        "{}",
        s.explanation
    );
    assert!(
        (s.cost_ms - (1_215.96 - 250.75)).abs() < 2.0,
        "{}",
        s.cost_ms
    );
}

/// Control s55-023 at the client (CUBIC, 21 ms, snaplen 128, no send buffer set, 4 MiB):
/// ss on the server shows cwnd 92 → 221 over 450 ms with `unacked` equal to cwnd and data
/// unsent, ssthresh 89 (HyStart's exit). Through an RTT that moves (24.1 ms at the
/// handshake, 21.5–27.1 ms in tcp_info) the most sent within one handshake RTT jumps
/// between 140,456 and 291,048 B from one RTT to the next (tshark: intervals 5 to 13 from
/// the first data, frame 4 at 0.050755 s), within the send buffer's ×1.71 band but never
/// back at one level: a congestion window, not a ceiling. A first version of the ceiling
/// rule, without the rounds coming back to it, named 358 ms.
#[test]
fn a_congestion_window_read_through_a_moving_rtt_is_no_ceiling() {
    not_at_any_cost(sweep_path("s55-023-control-client.pcap"), "sndbuf.limited");
}

/// Issue 12, sweep s90-008 at the client, cut to 96 bytes a frame with `editcap -s 96`
/// (tests/data/sweep/README.md): BBR through a 15 Mbit/s link with a 252-packet FIFO at
/// 98 ms, no send buffer set; tcp_info's sndbuf_limited 0 in all 47 samples. In tshark
/// the server's data from frame 232 to 2000 arrive one every 0.807 ms (median gap; p10
/// 0.742, p90 0.869 ms), a 1,514-byte frame's time at 15 Mbit/s: 176,808 B per 98.5 ms RTT
/// is the link's payload rate, and only 6.5 % of the gaps are shorter than 8/9 of that
/// spacing. BBR keeps no queue, so the level flight came without loss or RTT growth and
/// was read as a send buffer's, costing 1,596 ms. The buffer-held flights of the tests
/// above leave in bursts or pacing slots (s49-032, s57-040: BBR's two-segment slots),
/// and stay named.
#[test]
fn a_flight_spaced_evenly_at_a_links_rate_is_the_link_not_the_buffer() {
    not_at_any_cost(sweep_path("s90-008-bulk-client-96.pcap"), "sndbuf.limited");
}
