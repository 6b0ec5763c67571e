//! `rwnd.limited` on a capture of the kernel-labelled sweep (issue 12): how long the
//! receiver's window held the sender, against the sender's own tcp_info
//! (tcpi_rwnd_limited, tcpi_busy_time). Numbers checked by hand in tshark
//! (tests/data/sweep/README.md).

mod common;

use common::analyze::{findings, frames, one, sweep_path};

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
/// rwnd_limited 4,532 ms of busy 4,700. With the lag fixed at the shortest echo, each
/// ACK took effect at the sender 78 ms before the data it released could show it, so
/// the server's answers never reached the window's edge "in time" and the 4.7 s were
/// all the sender's own: neither rwnd.limited nor not_growing was named. With the lag
/// the shortest of the last four echoes, the window is full 796 times from frame 287
/// on, 2,013 ms (43 %; the rest is lost to ACKs whose answers arrive within a
/// millisecond of the time the lag gives them, either side).
#[test]
fn a_window_behind_a_queue_is_seen_from_the_receiver() {
    let f = findings(sweep_path("s10-064-bulk-client.pcap"));
    let r = one(&f, "rwnd.limited");
    assert_eq!(r.vantage, "client");
    assert_eq!(frames(r)[..4], [287, 290, 293, 296]);
    assert!((r.cost_ms - 2012.5).abs() < 0.1, "{}", r.cost_ms);
    assert!(r.explanation.contains("796 time(s)"), "{}", r.explanation);
    let g = one(&f, "rwnd.not_growing");
    assert!(
        g.explanation.contains("59,368 B at most"),
        "{}",
        g.explanation
    );
    one(&f, "network.bufferbloat");
}
