//! Every detector on random input: the segments the `analyze` fuzz target explores
//! (fuzz/fuzz_targets/synth.rs), from a fixed-seed generator so that CI runs the same
//! few thousand cases on every commit without a nightly toolchain. Nothing may panic and
//! the findings stay bounded by the input.

mod common;
#[path = "../../../fuzz/fuzz_targets/synth.rs"]
mod synth;

use common::Rng;
use tcpwhy_detect::Config;
use tcpwhy_pipeline::Pass;

/// Cases per run, and the largest number of segments in one case.
const CASES: usize = 3000;
const MAX_SEGMENTS: usize = 300;

fn run(data: &[u8], vantage: Option<tcpwhy_track::Vantage>) -> usize {
    let mut pass = Pass::new(Config {
        vantage,
        keep_exchanges: true,
        ..Config::default()
    });
    synth::segments(data, |frame, ts, p| {
        pass.packet(frame, ts, p);
    });
    pass.finish().1.findings.len()
}

#[test]
fn random_segments_never_panic_any_detector() {
    let mut rng = Rng(0x7463_7077_6879_0001);
    let vantages = [
        None,
        Some(tcpwhy_track::Vantage::Client),
        Some(tcpwhy_track::Vantage::Server),
    ];
    let mut total = 0;
    for case in 0..CASES {
        let n = 1 + (rng.next() as usize % MAX_SEGMENTS);
        let mut data = vec![0u8; n * synth::SEGMENT_BYTES];
        for chunk in data.chunks_mut(8) {
            let r = rng.next().to_le_bytes();
            chunk.copy_from_slice(&r[..chunk.len()]);
        }
        // Mostly forward time steps of up to 16 ms (byte 10 is the high byte of a µs
        // count), plausible flags, and sequence numbers that continue each direction's
        // previous segment, as real captures have; every eighth case keeps the raw bytes.
        if case % 8 != 0 {
            let mut next = [0u32; 2];
            for seg in data.chunks_mut(synth::SEGMENT_BYTES) {
                seg[0] &= 0x7f; // small sequence numbers (synth.rs)
                seg[10] &= 0x3f;
                seg[21] = 0;
                seg[20] = [0x10, 0x18, 0x02, 0x12, 0x11, 0x10, 0x18, 0x04][seg[20] as usize & 7];
                let dir = usize::from(seg[0] & 2 != 0);
                if seg[1] & 0xc0 != 0 {
                    seg[1..5].copy_from_slice(&next[dir].to_le_bytes());
                }
                let len = u32::from(seg[23] >> 3) * 100;
                next[dir] = (next[dir] + len) & 0xffff;
                if seg[5] & 0xc0 != 0 {
                    seg[5..9].copy_from_slice(&next[1 - dir].to_le_bytes());
                }
            }
        }
        let found = run(&data, vantages[case % 3]);
        assert!(
            found <= 32 * (n + 1),
            "case {case}: {found} findings for {n} segments"
        );
        total += found;
    }
    // The inputs must reach the detectors' reporting paths, or the test proves little.
    eprintln!("{total} findings in {CASES} cases");
    assert!(total > 0);
}
