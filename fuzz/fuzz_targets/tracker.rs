//! Fuzz target for the connection tracker: arbitrary segments between a few endpoints
//! (see synth.rs) must never panic, and memory must stay bounded.
#![no_main]

mod synth;

use libfuzzer_sys::fuzz_target;
use tcpwhy_track::Tracker;

fuzz_target!(|data: &[u8]| {
    let mut t = Tracker::new();
    synth::segments(data, |frame, ts, p| {
        let _ = t.process(frame, ts, p);
    });
    let all = t.finish();
    assert!(all.len() <= data.len() / synth::SEGMENT_BYTES + 1);
});
