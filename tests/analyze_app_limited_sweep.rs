//! `app.limited` on captures of the kernel-labelled sweep (issue 12). Two where the
//! application wrote more often than once per round trip, so the sender's flight never
//! emptied (s3-024, s3-048: until the detector judged pauses with data in flight it
//! found nothing in either), and two where the application always had data and the
//! sender's pauses were its stack's (s6-072 and s74-080: a writer asleep on a full send
//! buffer; s2-005: BBR's pacing), which the detector had called application-limited. Numbers
//! checked by hand in tshark (tests/data/sweep/README.md).

mod common;

use common::analyze::{findings, frames, ids_at_any_cost, not_at_any_cost, one, sweep_path};

const APP_LIMITED: &str = "app.limited";

/// s3-024, the client's capture of an upload (293 ms RTT, 7 Mbit/s, 5,120 B written
/// every 59 ms). Frame 90 (1.179447 s): the server's ACK 45,201 advances by a segment
/// with 36,512 B still in flight (the client's highest byte 81,713, frame 89) and the
/// same 65,535-byte window; eight more ACKs arrive and the client sends nothing until
/// frame 100 (1.238166 s, 58.7 ms later, the next write's 59 ms cadence). Ten cited
/// frames = the five longest of 21 pauses, 876 ms in all. (The pause from frame 159 to
/// 161, 57.3 ms, is not counted: frame 161 left 0.97 ms after the ACK of frame 160, as
/// data an ACK releases does — a write that happened to follow an ACK by less than the
/// sender's reaction to one.)
#[test]
fn paced_upload_whose_flight_never_empties_is_app_limited_at_the_sender() {
    let f = findings(sweep_path("s3-024-bulk-client.pcap"));
    let a = one(&f, APP_LIMITED);
    assert_eq!(a.vantage, "client");
    assert_eq!(frames(a), [90, 100, 112, 115, 119, 122, 187, 189, 215, 217]);
    assert!((a.cost_ms - 876.3).abs() < 0.1, "{}", a.cost_ms);
    assert!(a.explanation.contains("21 pause(s)"), "{}", a.explanation);
    assert!(a.explanation.contains("data still in flight"));
}

/// s3-048, the server's capture of a BBR download (113 ms RTT, 5 Mbit/s, TSO, snaplen
/// 64 so the window scale is cut; 20 KB written every 96 ms). Frame 136 (0.808138 s):
/// ACK 128,673, 2,896 B (two segments) past frame 134's, raw window 139 as before, so
/// the right edge moved by two segments; 34,960 B still in flight (highest byte 163,633
/// after frame 135); five more ACKs (137–141) and no data until frame 142 at
/// 0.882074 s: 73.9 ms, and the next write's data leave in 2,896-byte slots 1.6–3.2 ms
/// apart (frames 142–151). 9 such pauses, 610.5 ms (ACKs of one segment, as frame 54's
/// 416 B, prove no room for a burst and open none). Each write's last 208 B leave
/// 10–30 µs after an ACK (frames 94, 111, 127, 173, 189, 205: the sub-MSS tail Nagle
/// held until the data before it was acknowledged): the ACK released them, so the
/// pauses they end are not counted.
#[test]
fn paced_download_at_snaplen_64_is_app_limited_at_the_sender() {
    let f = findings(sweep_path("s3-048-bulk-server.pcap"));
    // Each write's 208 B tail is a write end: the application, not the send buffer,
    // even with the SYNs' MSS cut by the snaplen.
    assert!(f.iter().all(|x| x.id != "sndbuf.limited"));
    let a = one(&f, APP_LIMITED);
    assert_eq!(a.vantage, "server");
    assert_eq!(frames(a)[..2], [136, 142]);
    assert_eq!(a.evidence.len(), 10);
    assert!((a.cost_ms - 610.5).abs() < 0.1, "{}", a.cost_ms);
    assert!(a.explanation.contains("9 pause(s)"), "{}", a.explanation);
}

/// s6-072, the server's capture (frames 1–250) of a download written in 1,448-byte
/// calls as fast as the socket took them, into a 32 KB send buffer (RTT 3 ms, 9 Mbit/s).
/// Frame 91 (0.048178 s): ACK 47,785 with 31,856 B in flight, then eight more ACKs and
/// no data for 17.5 ms, until frame 100, 59 µs after the ACK of frame 99, and nine
/// segments within 71 µs: the writer, asleep in sk_stream_wait_memory, woke when that
/// ACK freed a third of the buffer (tcp_check_space). Likewise 109 → 113 (30 µs after
/// frame 112) and 199 → 207 (57 µs after 206). tcp_info: nothing unsent or in flight
/// for 0 ms of the transfer; the detector had called the three pauses 46.3 ms of
/// app.limited.
#[test]
fn writer_woken_by_an_ack_is_not_app_limited() {
    not_at_any_cost(sweep_path("s6-072-bulk-server.pcap"), APP_LIMITED);
}

/// s2-005, the server's capture of a slow-reader download through BBR (RTT 191 ms,
/// snaplen 64, TSO): STARTUP paces 2,896 B (two segments, tcp_tso_autosize's minimum)
/// every 13.4 ms with no ACK in between (frames 20–28), and every 8–13 ms later with ACKs in
/// between: frame 39's ACK frees room, the next data is frame 41 11.4 ms later, two
/// segments, then 12.3 ms of silence. The detector had called 11 such pauses 91.8 ms
/// of app.limited; tcp_info: nothing unsent or in flight for 0 ms.
#[test]
fn bbr_pacing_two_segments_per_slot_is_not_app_limited() {
    not_at_any_cost(sweep_path("s2-005-slow_reader-server.pcap"), APP_LIMITED);
}

/// s11-016, the server's capture of a paced download at snaplen 64 (RTT 7 ms, 24 Mbit/s,
/// 17,408 B written every 64 ms): the SYNs' options are cut, so the client's window is a
/// raw field (63 at the handshake, 80 later) of unknown scale. Frame 54 (0.084461 s):
/// the client's ACK 34,817 covers everything sent, window field 80; the server's next
/// data is frame 55 at 0.135659 s, 51.2 ms later; likewise 371 → 372 (ACK 313,345, 51.1
/// ms). Frames 4–13 left as one burst of 14,480 B after the handshake's ACK with window
/// field 63, so a field of 63 or more, scaled, holds a burst (one shift per direction).
/// Labels: nothing unsent or in flight for 2,154 ms of the transfer's 2,850 ms. Before
/// the rule the detector read the field as 80 bytes (no room) and found nothing.
#[test]
fn paced_download_with_the_window_scale_cut_is_app_limited() {
    let f = findings(sweep_path("s11-016-bulk-server.pcap"));
    let a = one(&f, APP_LIMITED);
    assert_eq!(a.vantage, "server");
    assert_eq!(frames(a)[..4], [54, 55, 371, 372]);
    assert!(a.explanation.contains("45 pause(s)"), "{}", a.explanation);
    // Within 25 % of the kernel's 2,154 ms (the same bound the sweep scores with).
    assert!((a.cost_ms - 2154.0).abs() <= 0.25 * 2154.0, "{}", a.cost_ms);
    assert!(
        a.evidence[0]
            .note
            .contains("window field 80 (its scale unknown: the snaplen cut"),
        "{}",
        a.evidence[0].note
    );
}

/// s12-085, the client's capture of a slow reader (RTT 29 ms, 4 KB read every 46 ms
/// into a 78 KB SO_RCVBUF, TSO at the server): frame 122 (0.351690 s) ACKs everything
/// (128,811) with a zero window; frame 123 (0.397654 s) reopens it to 8,750 B and the
/// server's 8,750 B (frames 124–130) arrive 39.0 ms later, 9.6 ms more than the
/// handshake's 29.4 ms round trip. The server's own capture has them leave 20 µs after
/// the update arrived (its frames 76, 77): they were late on their way, not in the
/// application (tcp_info: nothing unsent or in flight for 0 ms of 400). A pause that begins at a
/// reopened window is the window's release and is judged only at the sender; the
/// detector had called this and frame 132 → 135 15.1 ms of app.limited.
#[test]
fn a_reopened_window_is_not_app_limited_away_from_the_sender() {
    let ids = ids_at_any_cost(sweep_path("s12-085-slow_reader-client.pcap"));
    assert!(!ids.iter().any(|i| i == APP_LIMITED), "{ids:?}");
    assert!(ids.iter().any(|i| i == "rwnd.zero_window"), "{ids:?}");
}

/// s11-000, the server's capture of a BBR download (RTT 1 ms, 18 Mbit/s into a
/// 599-packet FIFO, TSO, snaplen 64): BBR paces 17,376-byte slots every 7–9 ms. Frame
/// 641 (0.533496 s): the client's ACK 1,084,361 frees room with 34,752 B in flight (the
/// server's highest byte 1,119,113, frame 640); six more ACKs of two segments arrive and
/// the next data is frame 648 at 0.542821 s, 9.3 ms later, with no ACK before it. But
/// the flight's last byte was ACKed only at frame 655 (0.550826 s, ACK 1,120,561), 8.0
/// ms after frame 648 left, on a path whose quickest data → ACK took 3.5 ms (frame 4 →
/// 12): the queue ahead of the new data never drained, so the path never waited for the
/// application. tcp_info: nothing unsent or in flight for 0 ms of 1,756; the detector
/// had called 16 such pauses 103 ms of app.limited.
#[test]
fn a_pause_that_the_senders_own_queue_spans_is_not_app_limited() {
    not_at_any_cost(sweep_path("s11-000-bulk-server.pcap"), APP_LIMITED);
}

/// s11-029, the client's capture of a slow reader (RTT 32 ms, 11,264 B read every
/// 76 ms, SO_RCVBUF 75,776, snaplen 64 so the window scale is cut). Frame 300 ACKs
/// 349,871 with raw window 8,574; the server's data stop at 367,019 (frame 312),
/// exactly 8,574 << 1 past it: the window's edge. Frame 313 (1.627824 s) ACKs it all
/// with raw window 3,148 and the next data arrive at frame 315, 104 ms later. In the
/// server's capture that ACK arrived 66 ms after the client sent it (16 ms one way) and
/// the data left 31 µs later (its frames 313, 314): the emulator's jitter on a window
/// update's round trip, not the application (tcp_info: nothing unsent or in flight for
/// 1 ms of 3,273). The detector had called this and two such releases (237 → 238,
/// 500 → 501) 108.6 ms of app.limited.
#[test]
fn a_window_release_with_the_scale_cut_is_not_app_limited_away_from_the_sender() {
    not_at_any_cost(sweep_path("s11-029-slow_reader-client.pcap"), APP_LIMITED);
}

/// s12-072, the client's capture of a paced download (37 ms path, BBR, the server
/// writing 15,360 B every 62 ms through a 36 KB send buffer). Frame 201 ACKs everything
/// with an 81,920-byte window; the next data arrive at frame 202, 53.9 ms later, of
/// which one round trip to the server is the path: the shortest echo of the client's
/// TSvals, 37.4 ms, not the handshake's 41.8 ms (the emulator's slow first packet).
/// 28 such pauses, 391 ms; the server's tcp_info: nothing unsent or in flight for
/// 392 ms. With the handshake's leg taken off each, they were 268 ms.
#[test]
fn a_receiver_takes_the_paths_round_trip_off_each_pause() {
    let f = findings(sweep_path("s12-072-bulk-client.pcap"));
    let a = one(&f, APP_LIMITED);
    assert_eq!(a.vantage, "client");
    assert_eq!(frames(a)[..2], [201, 202]);
    assert!(a.explanation.contains("28 pause(s)"), "{}", a.explanation);
    assert!(
        a.explanation.contains("minus the 37.4 ms of path"),
        "{}",
        a.explanation
    );
    assert!((a.cost_ms - 391.3).abs() < 0.1, "{}", a.cost_ms);
}

/// s12-087, a router's capture (frames 1–600) of a control download on a loaded
/// machine (3 ms path; the server's srtt reached 21.8 ms). Frame 267 ACKs everything
/// (client TSval 3,078,361,128); the server's next data, frame 268, arrive 9.6 ms later
/// but echo TSval 3,078,361,116, 12 ms older: the server sent them before that ACK
/// reached it, answering an earlier ACK on a slower path. Likewise 271 → 272. tcp_info:
/// nothing unsent or in flight. Judged with the path's shortest round trip (3.7 ms) and
/// without the echo, these were two "pauses" of 5.3 ms.
#[test]
fn data_that_echo_an_older_ack_end_no_pause() {
    not_at_any_cost(sweep_path("s12-087-control-router.pcap"), APP_LIMITED);
}

/// Issue 12, fresh sweep s71-034 at the router (Reno, 2 ms, snaplen 128; every 41st data
/// packet held 19 ms by the emulator; the first 1,300 frames; tests/data/sweep/README.md).
/// In tshark frame 1037 (0.236111 s) ACKs 868,801, everything the tap had seen; the next
/// data, frame 1038 (0.245552 s), starts at 870,249, and the client's next ACK (frame
/// 1039) SACKs it above a hole at 868,801: the server had sent that segment during the
/// "pause", held upstream of the tap. Its TSval moved 2 ms (426593128 → 426593130) in
/// those 9.4 ms. tcp_info: nothing unsent or in flight for 0 ms. Before, the rule that
/// the data ending a pause continues the highest byte seen applied only to pauses with
/// data in flight, and 15.0 ms were named in two pauses; the other one (frames 1216 →
/// 1219, 10.0 ms, the server's TSval moving 8 ms) continues the highest byte, and one
/// pause alone is no application's rate (`MIN_GAPS`).
#[test]
fn a_pause_whose_data_skips_unseen_bytes_is_no_application_pause() {
    not_at_any_cost(
        sweep_path("s71-034-reorder-router-1300.pcap"),
        "app.limited",
    );
}

/// Issue 12, sweep s74-080 at the server (BBR at 116 ms, snaplen 96; the server's
/// SO_SNDBUF 35,840 B, written in 1,448 B calls as fast as the socket took them;
/// tests/data/sweep/README.md). tcp_info: sndbuf_limited 2,436 ms, nothing unsent or in
/// flight for 0 ms. In tshark the server's data stop at frame 473 (1.229791 s) with
/// 66,608 B in flight; ACKs arrive every ≈ 5 ms from frame 474 (65,160 B still out) and
/// the next data leave at frame 485 (1.282955 s), 2.35 ms after frame 484, whose ACK had
/// freed 28,960 B (44 %); likewise frames 2360 → 2370 (5.644918 → 5.684580 s, 26,064 B
/// of 62,264 freed, 1.78 ms after frame 2369). The writer slept on its full buffer until
/// a third was free (sk_stream_write_space) and took its scheduler's time to write: the
/// send buffer's pauses, not the application's, although they end more than a
/// millisecond after the ACK. Named app.limited (88 ms) beside sndbuf.limited before;
/// now sndbuf.limited alone.
#[test]
fn a_send_buffers_wakeups_are_not_the_applications_pauses() {
    let path = sweep_path("s74-080-bulk-server.pcap");
    let ids = ids_at_any_cost(&path);
    assert!(ids.iter().any(|i| i == "sndbuf.limited"), "{ids:?}");
    assert!(!ids.iter().any(|i| i == APP_LIMITED), "{ids:?}");
}
