//! `app.limited` on two captures of the kernel-labelled sweep (issue 12) where the
//! application wrote more often than once per round trip, so the sender's flight never
//! emptied: the ss record says `app_limited` in 51 of 51 (s3-024) and 51 of 53 (s3-048)
//! sender samples, and until the detector judged pauses with data in flight it found
//! nothing in either. Numbers checked by hand in tshark (tests/data/sweep/README.md).

mod common;

use common::analyze::{findings, frames, one};
use std::path::PathBuf;

const APP_LIMITED: &str = "app.limited";

fn sweep(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/sweep")
        .join(name)
}

/// s3-024, the client's capture of an upload (293 ms RTT, 7 Mbit/s, 5,120 B written
/// every 59 ms). Frame 90 (1.179447 s): the server's ACK 45,201 advances by a segment
/// with 36,512 B still in flight (the client's highest byte 81,713, frame 89) and the
/// same 65,535-byte window; eight more ACKs arrive and the client sends nothing until
/// frame 100 (1.238166 s, 58.7 ms later, the next write's 59 ms cadence). Ten cited
/// frames = the five longest of 22 pauses, 934 ms in all.
#[test]
fn paced_upload_whose_flight_never_empties_is_app_limited_at_the_sender() {
    let f = findings(sweep("s3-024-bulk-client.pcap"));
    let a = one(&f, APP_LIMITED);
    assert_eq!(a.vantage, "client");
    assert_eq!(frames(a), [90, 100, 112, 115, 119, 122, 159, 161, 215, 217]);
    assert!((a.cost_ms - 933.6).abs() < 0.1, "{}", a.cost_ms);
    assert!(a.explanation.contains("22 pause(s)"), "{}", a.explanation);
    assert!(a.explanation.contains("data still in flight"));
}

/// s3-048, the server's capture of a BBR download (113 ms RTT, 5 Mbit/s, TSO, snaplen
/// 64 so the window scale is cut; 20 KB written every 96 ms). Frame 136 (0.808138 s):
/// ACK 128,673, 2,896 B (two segments) past frame 134's, raw window 139 as before, so
/// the right edge moved by two segments; 34,960 B still in flight (highest byte 163,633
/// after frame 135); five more ACKs (137–141) and no data until frame 142 at
/// 0.882074 s: 73.9 ms. 23 such pauses, 1,226.5 ms (ACKs of one segment, as frame 54's
/// 416 B, prove no room for a burst and open none).
#[test]
fn paced_download_at_snaplen_64_is_app_limited_at_the_sender() {
    let f = findings(sweep("s3-048-bulk-server.pcap"));
    let a = one(&f, APP_LIMITED);
    assert_eq!(a.vantage, "server");
    assert_eq!(frames(a)[..2], [136, 142]);
    assert_eq!(a.evidence.len(), 10);
    assert!((a.cost_ms - 1226.5).abs() < 0.1, "{}", a.cost_ms);
    assert!(a.explanation.contains("23 pause(s)"), "{}", a.explanation);
}
