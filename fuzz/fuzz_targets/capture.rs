//! Fuzz target: arbitrary bytes as a capture file (both the in-memory path used for
//! memory-mapped files and the streaming path used for stdin), every frame given its
//! analysis time and decoded (an ICMP error's quoted header too); and arbitrary bytes as
//! one frame on each link type.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tcpwhy_capture::{
    decode, icmp_error, Capture, Frame, LinkType, SkipCounts, SkipReason, Timestamp,
};

/// Link types the decoder knows, plus one it does not. Ethernet twice: the tunnels
/// (GRE, VXLAN, GENEVE, GTP-U, Teredo, MPLS, PPPoE) are reached through it.
const LINKS: [u32; 18] = [
    0, 1, 1, 9, 10, 50, 101, 104, 105, 108, 113, 127, 228, 229, 239, 242, 276, 147,
];

fn drain(cap: Result<Capture, tcpwhy_capture::CaptureError>) -> (u64, bool) {
    let Ok(mut cap) = cap else {
        return (0, true);
    };
    let mut frames = 0;
    let mut times = SkipCounts::default();
    loop {
        match cap.next_frame() {
            Ok(Some(mut frame)) => {
                frames += 1;
                assert_eq!(frame.number, frames);
                times.observe_time(&mut frame);
                match decode(&frame) {
                    Ok(p) => assert!(p.payload.len() as u64 <= u64::from(p.payload_len)),
                    Err(SkipReason::NotTcp) => {
                        let _ = icmp_error(&frame);
                    }
                    Err(_) => {}
                }
            }
            Ok(None) => break,
            Err(_) => {
                // Finished for good after an error.
                assert!(matches!(cap.next_frame(), Ok(None)));
                return (frames, true);
            }
        }
    }
    (frames, false)
}

fuzz_target!(|data: &[u8]| {
    let whole = drain(Capture::from_bytes(data.to_vec()));
    let streamed = drain(Capture::from_reader(Box::new(std::io::Cursor::new(
        data.to_vec(),
    ))));
    // Both paths read the same frames and end the same way.
    assert_eq!(whole, streamed);

    if let Some((&selector, rest)) = data.split_first() {
        let link = LinkType::from_linktype(LINKS[usize::from(selector) % LINKS.len()]);
        // Half the time claim a longer wire length, as a snaplen would.
        let orig_len = if selector & 0x80 != 0 {
            rest.len() as u32
        } else {
            u32::from(selector) << 8
        };
        let frame = Frame {
            number: 1,
            ts: Timestamp(0),
            ts_untrusted: false,
            link,
            interface: 0,
            data: rest,
            orig_len,
        };
        match decode(&frame) {
            Ok(p) => {
                assert!(p.payload.len() as u64 <= u64::from(p.payload_len));
                assert!(p.options.sack_blocks().len() <= tcpwhy_capture::MAX_SACK_BLOCKS);
            }
            // ICMP errors reach the quoted header's decoder.
            Err(SkipReason::NotTcp) => {
                if let Some(e) = icmp_error(&frame) {
                    assert!(e.next_hop_mtu.is_none() || e.kind.too_big());
                }
            }
            Err(_) => {}
        }
    }
});
