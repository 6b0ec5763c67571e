//! The reader and decoder against the public captures in shared/captures/public, checked
//! against tshark's counts (tshark-reference.json) and against tshark's field values.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use tcpwhy_capture::{decode, Capture, CaptureErrorKind, FileFormat, LinkType, SkipCounts};

fn captures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/captures/public")
}

/// What one pass over a file gave.
#[derive(Debug, PartialEq, Eq)]
struct Tally {
    frames: u64,
    tcp: u64,
    skips: SkipCounts,
    /// Error at the end, as (frame number, kind name).
    error: Option<(u64, String)>,
    payload_bytes: u64,
}

fn tally(mut cap: Capture) -> Tally {
    let mut t = Tally {
        frames: 0,
        tcp: 0,
        skips: SkipCounts::default(),
        error: None,
        payload_bytes: 0,
    };
    loop {
        match cap.next_frame() {
            Ok(Some(frame)) => {
                t.frames += 1;
                assert_eq!(frame.number, t.frames);
                match decode(&frame) {
                    Ok(p) => {
                        t.tcp += 1;
                        t.payload_bytes += u64::from(p.payload_len);
                    }
                    Err(reason) => t.skips.add(reason),
                }
            }
            Ok(None) => break,
            Err(e) => {
                let kind = match e.kind {
                    CaptureErrorKind::Truncated => "truncated".to_string(),
                    CaptureErrorKind::Damaged(_) => "damaged".to_string(),
                    ref other => format!("{other:?}"),
                };
                assert!(!e.to_string().is_empty());
                t.error = Some((e.frame, kind));
                break;
            }
        }
    }
    // After the end or an error, the reader stays finished.
    assert!(cap.next_frame().unwrap().is_none());
    t
}

fn reference() -> serde_json::Value {
    let text = std::fs::read_to_string(captures_dir().join("tshark-reference.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Frames tshark dissects as TCP that we do not, and why. Every entry was looked at by
/// hand with tshark (see docs/capture.md, "Differences from tshark").
fn known_tcp_differences() -> BTreeMap<&'static str, (u64, &'static str)> {
    BTreeMap::from([(
        "wireshark-sample-obsolete-packets-sll.pcap",
        (
            3,
            // Frames 3207, 3218, 3232: ICMP destination unreachable (type 3 code 1)
            // quoting the IP + TCP header of a segment that could not be delivered.
            // tshark dissects the quoted TCP header; it is not a segment of the
            // connection, so tcpwhy counts the frame as not TCP.
            "ICMP errors quoting a TCP header",
        ),
    )])
}

#[test]
fn every_public_capture_matches_tshark_counts() {
    let reference = reference();
    let files = reference["files"].as_object().unwrap();
    let known = known_tcp_differences();
    let mut problems = Vec::new();
    for (name, r) in files {
        let path = captures_dir().join(name);
        let mapped = tally(Capture::open(&path).unwrap_or_else(|e| panic!("{name}: {e}")));
        let file = std::fs::File::open(&path).unwrap();
        let streamed = tally(Capture::from_reader(Box::new(file)).unwrap());
        if mapped != streamed {
            problems.push(format!("{name}: mmap {mapped:?} != stream {streamed:?}"));
        }
        let want_frames = r["packet_count"].as_u64().unwrap();
        let want_tcp = r["tcp_packet_count"].as_u64().unwrap();
        let damaged = r["damaged_or_truncated"].as_bool().unwrap();
        if mapped.frames != want_frames {
            problems.push(format!(
                "{name}: {} frames, tshark {want_frames}",
                mapped.frames
            ));
        }
        let (missing, _why) = known.get(name.as_str()).copied().unwrap_or((0, ""));
        if mapped.tcp + missing != want_tcp {
            problems.push(format!(
                "{name}: {} TCP frames (+{missing} known), tshark {want_tcp}; skips {:?}",
                mapped.tcp,
                mapped.skips.iter().collect::<Vec<_>>()
            ));
        }
        if damaged != mapped.error.is_some() {
            problems.push(format!(
                "{name}: error {:?}, tshark damaged={damaged}",
                mapped.error
            ));
        }
    }
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

/// Runs `check` on frame `number` of `file` (read through the memory-mapped path).
fn with_frame(file: &str, number: u64, check: impl FnOnce(&tcpwhy_capture::Frame<'_>)) {
    let mut cap = Capture::open(&captures_dir().join(file)).unwrap();
    while let Some(frame) = cap.next_frame().unwrap() {
        if frame.number == number {
            check(&frame);
            return;
        }
    }
    panic!("{file} has no frame {number}");
}

fn ts(secs: i64, nanos: i64) -> tcpwhy_capture::Timestamp {
    tcpwhy_capture::Timestamp::from_nanos(secs * 1_000_000_000 + nanos)
}

fn ip(s: &str) -> std::net::IpAddr {
    s.parse().unwrap()
}

// Expected values below were read with tshark 4.0.17, e.g.
// `tshark -r F -T fields -e frame.number -e frame.time_epoch -e tcp.seq_raw
//  -e tcp.options.mss_val ...`.

#[test]
fn sll2_frame_1() {
    with_frame("pcapplusplus-sll2.pcap", 1, |f| {
        assert_eq!(f.link, LinkType::LinuxSll2);
        assert_eq!(f.ts, ts(1_668_510_343, 193_355_000));
        assert_eq!(f.orig_len, 91);
        let p = decode(f).unwrap();
        assert_eq!(p.src, ip("116.63.66.108"));
        assert_eq!(p.ip_id, Some(0x872c));
        assert_eq!((p.src_port, p.dst_port), (443, 57292));
        assert_eq!((p.seq, p.ack), (2_865_673_674, 2_813_042_623));
        assert_eq!(p.flags.0, 0x018);
        assert_eq!(p.window, 63);
        assert_eq!(p.payload_len, 31);
        assert_eq!(p.payload.len(), 31);
    });
}

#[test]
fn raw_ipv6_syn_frame_1() {
    with_frame("pcapplusplus-four-ipv6-http-streams-rawip.pcap", 1, |f| {
        assert_eq!(f.link, LinkType::RawIp);
        assert_eq!(f.ts, ts(1_147_551_795, 526_632_000));
        let p = decode(f).unwrap();
        assert_eq!(p.src, ip("2001:618:400::5199:cc70"));
        assert_eq!(p.ip_id, None);
        assert_eq!((p.src_port, p.dst_port, p.seq), (35995, 80, 1_793_525_558));
        assert!(p.flags.syn() && !p.flags.ack());
        assert_eq!(p.window, 5680);
        assert_eq!(p.options.mss, Some(1420));
        assert_eq!(p.options.wscale, Some(2));
        assert!(p.options.sack_permitted);
        assert_eq!(p.options.timestamps, Some((14_490_169, 0)));
    });
}

#[test]
fn pcapng_many_interfaces() {
    // Frame 3 is on interface 10, a BSD null/loopback interface, and carries UDP.
    with_frame("pcapplusplus-many-interfaces-1.pcapng", 3, |f| {
        assert_eq!(f.interface, 10);
        assert_eq!(f.link, LinkType::Null);
        assert_eq!(f.ts, ts(1_439_753_725, 701_568_000));
        assert_eq!(f.orig_len, 168);
        assert_eq!(decode(f).unwrap_err(), tcpwhy_capture::SkipReason::NotTcp);
    });
    with_frame("pcapplusplus-many-interfaces-1.pcapng", 40, |f| {
        assert_eq!((f.interface, f.link), (0, LinkType::Ethernet));
        assert_eq!(f.ts, ts(1_439_753_728, 32_923_000));
        let p = decode(f).unwrap();
        assert_eq!((p.src_port, p.dst_port), (50981, 443));
        assert_eq!((p.seq, p.ack, p.window), (734_934_504, 1_129_612_283, 4114));
        assert_eq!(p.options.timestamps, Some((1_261_080_964, 3_830_938_509)));
    });
}

#[test]
fn nanosecond_big_endian_frame_1() {
    let cap = Capture::open(&captures_dir().join("pcapplusplus-nanosecs-big-endian.pcap")).unwrap();
    assert_eq!(
        cap.format(),
        FileFormat::Pcap {
            nanosecond: true,
            big_endian: true,
            modified: false
        }
    );
    with_frame("pcapplusplus-nanosecs-big-endian.pcap", 1, |f| {
        assert_eq!(f.ts, ts(1_766_361_926, 167_647_291));
        let p = decode(f).unwrap();
        assert_eq!(
            (p.src_port, p.dst_port, p.seq),
            (43030, 8000, 1_593_692_744)
        );
        assert_eq!(p.options.mss, Some(65495));
        assert_eq!(p.options.wscale, Some(7));
        assert_eq!(p.options.timestamps, Some((2_689_063_127, 0)));
    });
}

#[test]
fn modified_pcap_frame_1() {
    let cap = Capture::open(&captures_dir().join("pcap-parser-modified-format.pcap")).unwrap();
    assert_eq!(
        cap.format(),
        FileFormat::Pcap {
            nanosecond: false,
            big_endian: false,
            modified: true
        }
    );
    with_frame("pcap-parser-modified-format.pcap", 1, |f| {
        assert_eq!(f.ts, ts(1_712_763_541, 734_807_000));
        assert_eq!((f.data.len(), f.orig_len), (98, 98));
        // An ICMP echo request from 10.154.0.3.
        assert_eq!(decode(f).unwrap_err(), tcpwhy_capture::SkipReason::NotTcp);
    });
}

#[test]
fn qinq_syn_frame_1() {
    with_frame("zeek-http-qinq-0.pcap", 1, |f| {
        let p = decode(f).unwrap();
        assert_eq!(p.src, ip("141.142.228.5"));
        assert_eq!(p.ip_id, Some(0xdf8e));
        assert_eq!((p.src_port, p.dst_port, p.seq), (59856, 80, 4_263_588_410));
        assert_eq!(p.window, 65535);
        assert_eq!(p.options.mss, Some(1460));
        assert_eq!(p.options.wscale, Some(4));
        assert_eq!(p.options.timestamps, Some((374_005_024, 0)));
    });
}

#[test]
fn fddi_syn_frame_1() {
    with_frame("tcptrace-single-byte-rexmit-fddi.pcap", 1, |f| {
        assert_eq!(f.link, LinkType::Fddi);
        assert_eq!(f.ts, ts(975_340_709, 650_694_000));
        let p = decode(f).unwrap();
        assert_eq!(p.src, ip("30.229.118.67"));
        assert_eq!((p.src_port, p.dst_port, p.seq), (37143, 80, 3_663_133_704));
        assert_eq!(p.window, 8760);
        assert_eq!(p.options.mss, Some(1460));
    });
}

#[test]
fn snaplen_68_cuts_syn_options() {
    with_frame("zeek-tcp-truncated-header-snaplen68.pcap", 1, |f| {
        assert_eq!((f.data.len(), f.orig_len), (68, 74));
        let p = decode(f).unwrap();
        assert_eq!((p.src_port, p.dst_port, p.seq), (60827, 25, 1_041_724_894));
        // SYN with ECE and CWR: an ECN-setup SYN.
        assert_eq!(p.flags.0, 0x0c2);
        assert_eq!(p.window, 5840);
        // tshark shows MSS and SACK-permitted, then a Timestamps option of length 8
        // ("option length should be 10"); the 40-byte header is cut at 34 bytes.
        assert_eq!(p.options.mss, Some(1460));
        assert!(p.options.sack_permitted);
        assert_eq!(p.options.timestamps, None);
        assert!(p.options.truncated && p.options.malformed);
        assert_eq!(p.payload_len, 0);
    });
}

#[test]
fn big_tcp_ipv4_total_length_zero() {
    with_frame("tcpdump-bigtcp-ipv4.pcap", 1, |f| {
        assert_eq!(f.orig_len, 80066);
        let p = decode(f).unwrap();
        // tshark: ip.len 80052 (from the frame), tcp.len 80000.
        assert_eq!(p.payload_len, 80_000);
        assert_eq!(p.payload.len(), 80_000);
        assert_eq!((p.seq, p.ack, p.window), (4_155_358_606, 17_023_525, 635));
        assert_eq!(p.options.timestamps, Some((3_921_144_597, 3_152_931_631)));
    });
}

#[test]
fn gzip_last_frame() {
    let path = captures_dir().join("zeek-echo-connections.pcap.gz");
    with_frame("zeek-echo-connections.pcap.gz", 82582, |f| {
        assert_eq!(f.ts, ts(1_627_225_027, 180_797_000));
        let p = decode(f).unwrap();
        assert_eq!((p.src_port, p.dst_port), (38130, 7000));
        assert_eq!((p.seq, p.ack), (2_681_545_915, 2_155_432_983));
        assert_eq!(p.options.timestamps, Some((1_048_992_953, 1_048_992_953)));
    });
    // Progress counts compressed bytes and ends at the file size.
    let mut cap = Capture::open(&path).unwrap();
    while cap.next_frame().unwrap().is_some() {}
    assert_eq!(Some(cap.bytes_read()), cap.total_bytes());
}

#[test]
fn dsack_block_frame_2530() {
    with_frame("tcptrace-dsack.pcap", 2530, |f| {
        let p = decode(f).unwrap();
        assert_eq!((p.seq, p.ack), (449_216_002, 40_357_426));
        // Raw values: `tshark -o tcp.relative_sequence_numbers:FALSE`.
        assert_eq!(p.options.sack_blocks(), &[(40_361_770, 40_363_218)]);
    });
}

#[test]
fn win_scale_pcapng_syn() {
    with_frame("wireshark-sample-win-scale-examples.pcapng", 1, |f| {
        assert_eq!(f.ts, ts(1_595_449_345, 360_596_000));
        let p = decode(f).unwrap();
        assert_eq!((p.src_port, p.dst_port, p.seq), (6711, 2000, 3_714_759_466));
        assert_eq!(p.options.mss, Some(1460));
        assert_eq!(p.options.wscale, Some(8));
        assert!(p.options.sack_permitted);
    });
}

/// Damaged and cut-short files: the frames before the damage, then one clear error.
#[test]
fn damaged_files_report_where() {
    for (file, frames, kind) in [
        // tshark: "File has 3925868813-byte packet, bigger than maximum of 262144".
        ("suricata-verify-smtp-to-comma-damaged.pcap", 18, "damaged"),
        (
            "wireshark-sample-emergesync-cut-short.pcap",
            2587,
            "truncated",
        ),
        (
            "suricata-verify-http-mime-truncated.pcap",
            2696,
            "truncated",
        ),
    ] {
        let t = tally(Capture::open(&captures_dir().join(file)).unwrap());
        assert_eq!(t.frames, frames, "{file}");
        assert_eq!(t.error, Some((frames + 1, kind.to_string())), "{file}");
    }
    with_frame("suricata-verify-smtp-to-comma-damaged.pcap", 18, |f| {
        let p = decode(f).unwrap();
        assert_eq!(
            (p.seq, p.ack, p.payload_len),
            (151_704_817, 1_832_067_978, 1460)
        );
    });
}

#[test]
fn empty_and_header_only() {
    let t = tally(Capture::open(&captures_dir().join("zeek-empty.pcap")).unwrap());
    assert_eq!((t.frames, t.error), (0, None));
    let e = Capture::from_bytes(Vec::new()).err().unwrap();
    assert!(e.to_string().contains("empty"), "{e}");
    let e = Capture::from_bytes(b"GET / HTTP/1.1".to_vec())
        .err()
        .unwrap();
    assert!(matches!(e.kind, CaptureErrorKind::NotACapture));
    // The pcap magic and half a header.
    let e = Capture::from_bytes(vec![0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0])
        .err()
        .unwrap();
    assert!(matches!(e.kind, CaptureErrorKind::Truncated));
    assert!(e.to_string().contains("header"), "{e}");
}
