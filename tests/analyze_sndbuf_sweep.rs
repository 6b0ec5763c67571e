//! `sndbuf.limited` on captures of the kernel-labelled sweep (issue 12): a flight held
//! below the window by an application writing in chunks on a timer, which the detector
//! had called a send-buffer limit (tcp_info's `sndbuf_limited` 0). Numbers checked by
//! hand in tcpdump (tests/data/sweep/README.md).

mod common;

use common::analyze::{findings, none_of, sweep_path};

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
