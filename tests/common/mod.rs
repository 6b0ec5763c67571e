//! What the integration tests share: reading a capture into connection summaries.

use std::path::Path;
use tcpwhy_capture::{decode, Capture};
use tcpwhy_track::{merge_by_stream, ConnSummary, SegmentCounts, Tracker};

/// Every connection of the capture at `path`, sorted by stream.
pub fn connections(path: &Path) -> Vec<ConnSummary> {
    let mut cap = Capture::open(path).expect("open");
    let mut t = Tracker::new();
    while let Ok(Some(f)) = cap.next_frame() {
        if let Ok(p) = decode(&f) {
            t.process(f.number, f.ts, &p);
        }
    }
    merge_by_stream(t.finish())
}

/// Segment counts of both directions of every connection, added up.
#[allow(dead_code)] // not every test file uses it
pub fn total(conns: &[ConnSummary]) -> SegmentCounts {
    let mut s = SegmentCounts::default();
    for d in conns.iter().flat_map(|c| c.dirs.iter()) {
        s.add(&d.counts);
    }
    s
}
