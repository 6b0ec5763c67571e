//! Fuzz target for the detectors: the tracker's events and finished connections for
//! arbitrary segments (see synth.rs) fed through every detector must never panic, and the
//! findings must stay bounded by the input.
#![no_main]

mod synth;

use libfuzzer_sys::fuzz_target;
use tcpwhy_detect::Config;
use tcpwhy_pipeline::Pass;

fuzz_target!(|data: &[u8]| {
    // The pass `tcpwhy analyze` makes on one thread, on segments built from the input.
    let mut pass = Pass::new(Config { vantage: None, keep_exchanges: true });
    synth::segments(data, |frame, ts, p| {
        pass.packet(frame, ts, p);
    });
    let (_, out) = pass.finish();
    let segments = data.len() / synth::SEGMENT_BYTES;
    // No detector reports more than a handful of findings per connection, and a
    // connection needs at least one segment.
    assert!(out.findings.len() <= 32 * (segments + 1));
});
