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
