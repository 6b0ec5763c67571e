//! A reader that hands frames to other threads by position (`Capture::open_handing_out`,
//! `FrameAt`): every frame read back from the shared map through a holder is the frame
//! the reader saw, in pcap and pcapng alike; inputs that are not mapped get no holders.

use std::path::{Path, PathBuf};
use tcpwhy_capture::{Capture, FrameAt};

fn public(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/captures/public")
        .join(name)
}

/// (frames, frames with bytes) of `name`, each compared with its copy read back from
/// the holders' map.
fn read_back(name: &str) -> (u64, u64) {
    let (mut cap, holders) = Capture::open_handing_out(&public(name), 2).unwrap();
    assert_eq!(holders.len(), 2, "{name}");
    let (mut frames, mut with_bytes) = (0, 0);
    while let Ok(Some(f)) = cap.next_frame() {
        frames += 1;
        let Some(start) = holders[0].offset_of(f.data) else {
            panic!("{name}: frame {} not in the map", f.number);
        };
        with_bytes += u64::from(!f.data.is_empty());
        let at = FrameAt::new(&f, start);
        let again = at.frame(holders[1].bytes());
        assert_eq!(again.data, f.data, "{name}: frame {}", f.number);
        assert_eq!(
            (
                again.number,
                again.ts,
                again.link,
                again.interface,
                again.orig_len
            ),
            (f.number, f.ts, f.link, f.interface, f.orig_len)
        );
        // The holders are done with what came before: pages may go.
        holders[frames as usize % 2].hold_from(start);
    }
    (frames, with_bytes)
}

#[test]
fn frames_read_back_by_position_equal_the_readers() {
    // Counts as tshark gives them (tshark-reference.json).
    // Classic pcap (big-endian: the in-place path), pcapng, modified pcap (24-byte
    // record headers: the stepped path).
    assert_eq!(read_back("tcptrace-http.pcap"), (1_270, 1_270));
    assert_eq!(read_back("sharkfest20-trace1.pcapng"), (3_120, 3_120));
    assert_eq!(read_back("pcap-parser-modified-format.pcap"), (1, 1));
}

#[test]
fn bytes_outside_the_map_have_no_offset() {
    let (_cap, holders) = Capture::open_handing_out(&public("tcptrace-http.pcap"), 1).unwrap();
    let elsewhere = vec![1u8, 2, 3];
    assert_eq!(holders[0].offset_of(&elsewhere), None);
    let map = holders[0].bytes();
    assert_eq!(holders[0].offset_of(&map[24..40]), Some(24));
    let n = map.len();
    assert_eq!(holders[0].offset_of(&map[n - 4..]), Some(n - 4));
}

#[test]
fn streamed_inputs_get_no_holders() {
    // gzip is decompressed as a stream: its frames must be copied.
    let (mut cap, holders) =
        Capture::open_handing_out(&public("zeek-echo-connections.pcap.gz"), 2).unwrap();
    assert!(holders.is_empty());
    assert!(cap.next_frame().unwrap().is_some());
}
