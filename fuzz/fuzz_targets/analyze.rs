//! Fuzz target for the detectors: the tracker's events and finished connections for
//! arbitrary segments (see synth.rs) fed through every detector must never panic, the
//! findings must stay bounded by the input, and holding the segments of connections
//! without data must change none of them.
#![no_main]

mod synth;

use libfuzzer_sys::fuzz_target;
use tcpwhy_detect::Config;
use tcpwhy_pipeline::Pass;

fuzz_target!(|data: &[u8]| {
    // The pass `tcpwhy analyze` makes on one thread, on segments built from the input;
    // and the same with every detector seeing every segment as it comes: the findings
    // must be the same (`Detector::JUDGES_DATALESS`, crates/pipeline/tests/dataless.rs).
    let run = |unfiltered: bool| {
        let mut pass = Pass::new(Config {
            keep_exchanges: true,
            unfiltered,
            ..Config::default()
        });
        synth::segments(data, |frame, ts, p| {
            pass.packet(frame, ts, p);
        });
        pass.finish().1.findings
    };
    let findings = run(false);
    let segments = data.len() / synth::SEGMENT_BYTES;
    // No detector reports more than a handful of findings per connection, and a
    // connection needs at least one segment.
    assert!(findings.len() <= 32 * (segments + 1));
    assert_eq!(format!("{findings:?}"), format!("{:?}", run(true)));
});
