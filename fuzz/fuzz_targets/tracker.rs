//! Fuzz target for the connection tracker: arbitrary segments between a few endpoints
//! (see synth.rs), some at untrusted times and some quoted back by ICMP errors (which may
//! open a stream of their own, reversed), must never panic, and memory must stay bounded,
//! also when open handshakes or live connections are finalised, or tombstones forgotten,
//! past the tracker's caps.
#![no_main]

mod synth;

use libfuzzer_sys::fuzz_target;
use tcpwhy_capture::{FlowAddrs, IcmpError, IcmpErrorKind};
use tcpwhy_track::Tracker;

fuzz_target!(|data: &[u8]| {
    // A cap of two open handshakes: the few endpoints' handshakes reach it, so the oldest
    // are finalised while other segments of theirs may still come. The smallest cap on
    // live connections (32, cutting from 8) and on the tombstones forgotten after 5 min
    // (32): the 4-tuples the ICMP errors quote reach them.
    let mut t = Tracker::new().with_handshake_cap(2).with_live_cap(32);
    let mut errors = 0;
    synth::segments(data, |frame, ts, p| {
        // Derived from the segment, so the fuzzer steers it with the same bytes.
        t.time_untrusted(p.window & 1 != 0);
        if p.urgent & 3 == 0 {
            let mut quoted = FlowAddrs::of(p);
            if p.urgent & 4 != 0 {
                // The peer's direction, or a 4-tuple no segment has.
                std::mem::swap(&mut quoted.src, &mut quoted.dst);
                quoted.src_port = p.urgent;
            }
            let e = IcmpError {
                kind: if p.urgent & 8 != 0 {
                    IcmpErrorKind::FragmentationNeeded
                } else {
                    IcmpErrorKind::TimeExceeded
                },
                quoted,
                quoted_seq: p.seq,
                next_hop_mtu: Some(u32::from(p.window)),
            };
            t.icmp_error(frame, ts, &e);
            errors += 1;
        }
        let _ = t.process(frame, ts, p);
    });
    let all = t.finish();
    assert!(all.len() <= data.len() / synth::SEGMENT_BYTES + errors + 1);
});
