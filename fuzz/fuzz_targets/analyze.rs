//! Fuzz target for the detectors: the tracker's events and finished connections for
//! arbitrary segments (see synth.rs) fed through every detector must never panic, and the
//! findings must stay bounded by the input.
#![no_main]

mod synth;

use libfuzzer_sys::fuzz_target;
use tcpwhy_detect::{Analyzer, Config};
use tcpwhy_track::{merge_by_stream, Tracker};

fuzz_target!(|data: &[u8]| {
    let mut t = Tracker::new();
    let mut a = Analyzer::new(Config { vantage: None, keep_exchanges: true });
    let mut summaries = Vec::new();
    // As `tcpwhy analyze` does: segments first, then the connections merged by stream.
    synth::segments(data, |frame, ts, p| {
        let ev = t.process(frame, ts, p);
        a.on_segment(frame, ts, p, &ev);
        summaries.extend(t.drain_finished());
    });
    summaries.extend(t.finish());
    for c in merge_by_stream(summaries) {
        a.on_connection(&c);
    }
    let out = a.finish();
    let segments = data.len() / synth::SEGMENT_BYTES;
    // No detector reports more than a handful of findings per connection, and a
    // connection needs at least one segment.
    assert!(out.findings.len() <= 32 * (segments + 1));
});
