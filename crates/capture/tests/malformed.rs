//! A corpus of broken inputs generated from real captures: cut at every record boundary
//! and inside records, absurd lengths, wrong magic, odd snaplens, IP and TCP headers whose
//! length fields point past the packet, bad option lengths, VLAN stacks running off the
//! end, hostile nesting (1,000 tags or labels, GRE in GRE), every tunnel and link layer
//! cut at every byte. Each must give counted skips or one clear error: never a panic, a hang, or an
//! allocation above the named bound (checked by a counting allocator).

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::Read;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use tcpwhy_capture::bounds::MAX_BLOCK_LEN;
use tcpwhy_capture::{decode, Capture, CaptureErrorKind, SkipReason};

/// Records the largest single allocation, to prove lengths from headers are bounded.
struct MaxAlloc;
static LARGEST_ALLOC: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for MaxAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LARGEST_ALLOC.fetch_max(layout.size(), Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LARGEST_ALLOC.fetch_max(new_size, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: MaxAlloc = MaxAlloc;

fn public(name: &str) -> Vec<u8> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/captures/public");
    std::fs::read(dir.join(name)).unwrap()
}

/// A reader handing out a few bytes per call, so the stream path refills often.
struct Dribble {
    data: Vec<u8>,
    pos: usize,
    chunk: usize,
}

impl Read for Dribble {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = buf.len().min(self.chunk).min(self.data.len() - self.pos);
        buf[..n].copy_from_slice(&self.data[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

/// What reading and decoding one input gave.
#[derive(Debug, PartialEq, Eq)]
enum End {
    Clean,
    NotACapture,
    Truncated { frame: u64 },
    Damaged { frame: u64 },
    OpenTruncated,
}

#[derive(Debug, PartialEq, Eq)]
struct Outcome {
    frames: u64,
    /// Decode result per frame: Ok(payload_len) or the skip reason.
    decoded: Vec<Result<u32, SkipReason>>,
    /// Captured bytes of every frame, to compare the two paths.
    data_len: u64,
    end: End,
}

fn drain(cap: Result<Capture, tcpwhy_capture::CaptureError>) -> Outcome {
    let mut out = Outcome {
        frames: 0,
        decoded: Vec::new(),
        data_len: 0,
        end: End::Clean,
    };
    let mut cap = match cap {
        Ok(c) => c,
        Err(e) => {
            out.end = match e.kind {
                CaptureErrorKind::NotACapture => End::NotACapture,
                CaptureErrorKind::Truncated => End::OpenTruncated,
                other => panic!("open: {other:?}"),
            };
            return out;
        }
    };
    loop {
        match cap.next_frame() {
            Ok(Some(f)) => {
                out.frames += 1;
                out.data_len += f.data.len() as u64;
                out.decoded.push(decode(&f).map(|p| {
                    assert!(p.payload.len() as u64 <= u64::from(p.payload_len));
                    p.payload_len
                }));
            }
            Ok(None) => break,
            Err(e) => {
                assert!(!e.to_string().is_empty());
                out.end = match e.kind {
                    CaptureErrorKind::Truncated => End::Truncated { frame: e.frame },
                    CaptureErrorKind::Damaged(_) => End::Damaged { frame: e.frame },
                    other => panic!("{other:?}"),
                };
                assert_eq!(e.frame, out.frames + 1);
                break;
            }
        }
    }
    assert!(cap.next_frame().unwrap().is_none());
    out
}

/// Reads `bytes` through both paths (whole-buffer and a dribbling stream); they must
/// agree, and no allocation may exceed the bound.
fn exercise(bytes: &[u8]) -> Outcome {
    let whole = drain(Capture::from_bytes(bytes.to_vec()));
    let stream = drain(Capture::from_reader(Box::new(Dribble {
        data: bytes.to_vec(),
        pos: 0,
        chunk: 7,
    })));
    assert_eq!(whole, stream);
    let largest = LARGEST_ALLOC.load(Ordering::Relaxed);
    assert!(
        largest <= MAX_BLOCK_LEN + bytes.len(),
        "allocation of {largest} bytes"
    );
    whole
}

/// Offsets where each frame's record ends (the mmap path's progress after each frame).
fn record_ends(bytes: &[u8]) -> Vec<usize> {
    let mut cap = Capture::from_bytes(bytes.to_vec()).unwrap();
    let mut ends = Vec::new();
    while let Ok(Some(_)) = cap.next_frame() {
        ends.push(cap.bytes_read() as usize);
    }
    ends
}

#[test]
fn truncated_at_every_byte_of_small_files() {
    for name in [
        "tcpdump-tcp-handshake-nano.pcap",
        "pcapplusplus-sll2.pcap",
        "pcap-parser-modified-format.pcap",
        "wireshark-sample-win-scale-examples.pcapng",
    ] {
        let full = public(name);
        let all = exercise(&full);
        let ends = record_ends(&full);
        for cut in 0..full.len() {
            let o = exercise(&full[..cut]);
            // The frames read are a prefix of the full read.
            assert_eq!(
                o.decoded[..],
                all.decoded[..o.frames as usize],
                "{name} cut {cut}"
            );
            let complete = ends.iter().filter(|&&e| e <= cut).count() as u64;
            assert_eq!(o.frames, complete, "{name} cut {cut}");
            match o.end {
                End::Damaged { .. } => panic!("{name} cut at {cut}: {o:?}"),
                End::Clean if ends.contains(&cut) => {}
                // A pcap global header and nothing else: no frames, no error.
                End::Clean if cut == 24 && !name.ends_with(".pcapng") => {}
                // pcapng: a cut between blocks that are not packets ends cleanly too.
                End::Clean => assert!(name.ends_with(".pcapng"), "{name} cut {cut}"),
                _ => {}
            }
        }
    }
}

#[test]
fn truncated_at_and_inside_every_record_of_a_larger_file() {
    let full = public("arkime-wireshark-retrans.pcap");
    let ends = record_ends(&full);
    assert_eq!(ends.len(), 108);
    let mut start = 24;
    for (k, &end) in ends.iter().enumerate() {
        let k = k as u64;
        for cut in [
            start + 1,
            start + 15,
            start + 16,
            (start + end) / 2,
            end - 1,
        ] {
            let o = exercise(&full[..cut]);
            assert_eq!(
                (o.frames, o.end),
                (k, End::Truncated { frame: k + 1 }),
                "cut {cut}"
            );
        }
        assert_eq!(exercise(&full[..end]).end, End::Clean);
        start = end;
    }
}

#[test]
fn absurd_caplen_is_reported_as_damage() {
    let full = public("tcpdump-tcp-handshake-nano.pcap");
    let ends = record_ends(&full);
    // Second record's caplen (after the 24-byte header, first record, ts fields).
    let at = ends[0] + 8;
    for caplen in [u32::MAX, 256 * 1024 * 1024, 1024 * 1024 + 1] {
        let mut bad = full.clone();
        bad[at..at + 4].copy_from_slice(&caplen.to_le_bytes());
        let o = exercise(&bad);
        assert_eq!(
            (o.frames, o.end),
            (1, End::Damaged { frame: 2 }),
            "caplen {caplen}"
        );
    }
    // A caplen a little past the end of the file is a cut-short record.
    let mut bad = full.clone();
    bad[at..at + 4].copy_from_slice(&4000u32.to_le_bytes());
    assert_eq!(exercise(&bad).end, End::Truncated { frame: 2 });
}

#[test]
fn absurd_pcapng_block_lengths_are_damage() {
    let full = public("wireshark-sample-win-scale-examples.pcapng");
    let ends = record_ends(&full);
    // The block after the third frame: overwrite both its length fields' first copy.
    let at = ends[2] + 4;
    for len in [0u32, 4, 13, 30, 0xffff_fff0, (MAX_BLOCK_LEN as u32) + 4] {
        let mut bad = full.clone();
        bad[at..at + 4].copy_from_slice(&len.to_le_bytes());
        let o = exercise(&bad);
        assert_eq!(o.frames, 3, "len {len}");
        assert_eq!(o.end, End::Damaged { frame: 4 }, "len {len}");
    }
    // A length that disagrees with the trailing copy.
    let mut bad = full.clone();
    let len = u32::from_le_bytes(bad[at..at + 4].try_into().unwrap());
    bad[at..at + 4].copy_from_slice(&(len + 4).to_le_bytes());
    assert!(matches!(
        exercise(&bad).end,
        End::Damaged { .. } | End::Truncated { .. }
    ));
}

#[test]
fn wrong_magic_and_odd_snaplen() {
    let full = public("arkime-wireshark-retrans.pcap");
    let mut bad = full.clone();
    bad[0] ^= 0xff;
    assert_eq!(exercise(&bad).end, End::NotACapture);
    let all = exercise(&full);
    for snaplen in [0u32, u32::MAX, 1] {
        let mut odd = full.clone();
        odd[16..20].copy_from_slice(&snaplen.to_le_bytes());
        assert_eq!(exercise(&odd), all, "snaplen {snaplen}");
    }
    let ng = public("sharkfest20-trace1.pcapng");
    let mut bad = ng.clone();
    bad[8..12].copy_from_slice(&[1, 2, 3, 4]); // byte-order magic
    assert!(matches!(exercise(&bad).end, End::Damaged { frame: 1 }));
}

/// A little-endian µs pcap of `frames` on `link`; each frame's original length is at
/// least `ORIG_LEN`, so cutting a frame short acts like a snaplen.
fn pcap(link: u32, frames: &[Vec<u8>]) -> Vec<u8> {
    const ORIG_LEN: usize = 74;
    let mut f = Vec::new();
    for v in [0xa1b2_c3d4u32, 0x0004_0002, 0, 0, 65535, link] {
        f.extend_from_slice(&v.to_le_bytes());
    }
    for (i, d) in frames.iter().enumerate() {
        for v in [i as u32, 0, d.len() as u32, d.len().max(ORIG_LEN) as u32] {
            f.extend_from_slice(&v.to_le_bytes());
        }
        f.extend_from_slice(d);
    }
    f
}

/// Ethernet + IPv4 + TCP SYN with MSS, SACK-permitted, TS, NOP, wscale (tcpdump's
/// handshake capture re-framed as Ethernet).
fn ethernet_syn() -> Vec<u8> {
    let mut f = vec![0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0x08, 0x00];
    f.extend_from_slice(&[0x45, 0, 0, 60, 0x12, 0x34, 0x40, 0, 64, 6, 0, 0]);
    f.extend_from_slice(&[192, 0, 2, 1, 192, 0, 2, 2]);
    f.extend_from_slice(&[
        0xc7, 0x38, 0, 80, 0, 0, 0, 1, 0, 0, 0, 0, 0xa0, 0x02, 0xff, 0xff, 0, 0, 0, 0,
    ]);
    f.extend_from_slice(&[
        2, 4, 5, 0xb4, 4, 2, 8, 10, 0, 0, 0, 9, 0, 0, 0, 0, 1, 3, 3, 7,
    ]);
    f
}

const IP: usize = 14;
const TCP: usize = 34;

#[test]
fn header_length_fields_pointing_past_the_packet() {
    let good = ethernet_syn();
    let mut cases: Vec<(Vec<u8>, Result<(), SkipReason>, &str)> = Vec::new();
    let mut patch = |f: &dyn Fn(&mut Vec<u8>), want, what| {
        let mut v = good.clone();
        f(&mut v);
        cases.push((v, want, what));
    };
    patch(&|_| {}, Ok(()), "unchanged");
    patch(
        &|v| v[IP] = 0x4f,
        Err(SkipReason::TruncatedTcpHeader),
        "IHL 15: the TCP header is inside the IP 'options', no TCP bytes left",
    );
    patch(
        &|v| v.truncate(IP + 40),
        Ok(()),
        "IHL 5, cut inside TCP options",
    );
    patch(
        &|v| {
            v[IP] = 0x4f;
            v.truncate(IP + 50)
        },
        Err(SkipReason::TruncatedIpHeader),
        "IHL 15 past the capture",
    );
    patch(&|v| v[IP] = 0x43, Err(SkipReason::BadIpHeader), "IHL 3");
    patch(&|v| v[IP] = 0x40, Err(SkipReason::BadIpHeader), "IHL 0");
    patch(
        &|v| v[IP + 3] = 10,
        Err(SkipReason::BadIpHeader),
        "total length 10",
    );
    patch(
        &|v| {
            v[IP + 2] = 0xff;
            v[IP + 3] = 0xff
        },
        Ok(()),
        "total length 65535: capped by the frame",
    );
    patch(
        &|v| v[IP + 3] = 30,
        Err(SkipReason::TruncatedTcpHeader),
        "total length leaves 10 TCP bytes",
    );
    patch(
        &|v| v[TCP + 12] = 0xf0,
        Err(SkipReason::BadTcpHeader),
        "data offset 15 past the segment",
    );
    patch(
        &|v| v[TCP + 12] = 0x30,
        Err(SkipReason::BadTcpHeader),
        "data offset 3",
    );
    patch(
        &|v| v.truncate(TCP + 19),
        Err(SkipReason::TruncatedTcpHeader),
        "19 bytes of TCP",
    );
    patch(
        &|v| v.truncate(IP + 19),
        Err(SkipReason::TruncatedIpHeader),
        "19 bytes of IP",
    );
    patch(
        &|v| v.truncate(13),
        Err(SkipReason::TruncatedLinkHeader),
        "13 bytes of Ethernet",
    );
    patch(
        &|v| v[IP + 6] = 0x01,
        Err(SkipReason::IpFragment),
        "fragment offset 256",
    );
    patch(&|v| v[IP + 9] = 17, Err(SkipReason::NotTcp), "UDP");
    let frames: Vec<Vec<u8>> = cases.iter().map(|c| c.0.clone()).collect();
    let o = exercise(&pcap(1, &frames));
    assert_eq!(o.end, End::Clean);
    for ((_, want, what), got) in cases.iter().zip(&o.decoded) {
        assert_eq!(got.map(|_| ()), *want, "{what}");
    }
}

#[test]
fn option_lengths_zero_and_255() {
    let good = ethernet_syn();
    let opts = TCP + 20;
    for (len_byte, at) in [(0u8, 1), (255, 1), (1, 5), (0, 7)] {
        let mut v = good.clone();
        v[opts + at] = len_byte;
        let mut cap = Capture::from_bytes(pcap(1, &[v])).unwrap();
        let f = cap.next_frame().unwrap().unwrap();
        let p = decode(&f).unwrap();
        assert!(p.options.malformed, "len {len_byte} at {at}");
        // Options before the bad one are kept.
        if at > 1 {
            assert_eq!(p.options.mss, Some(1460));
        }
    }
}

#[test]
fn vlan_stacks_running_off_the_end() {
    let mut frames = Vec::new();
    for tags in 0..40 {
        let mut f = vec![0; 12];
        for _ in 0..tags {
            f.extend_from_slice(&[0x81, 0x00, 0x00, 0x05]);
        }
        f.extend_from_slice(&[0x81, 0x00]);
        frames.push(f);
    }
    let o = exercise(&pcap(1, &frames));
    assert!(o
        .decoded
        .iter()
        .all(|d| *d == Err(SkipReason::TruncatedLinkHeader)));
}

/// Deterministic byte flips over real captures of each format: the reader and decoder
/// must stay total (no panic, both paths agree).
#[test]
fn random_byte_flips() {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for name in [
        "tcpdump-tcp-handshake-nano.pcap",
        "wireshark-sample-win-scale-examples.pcapng",
        "pcapplusplus-sll2.pcap",
        "zeek-tcp-truncated-header-snaplen68.pcap",
    ] {
        let full = public(name);
        for _ in 0..150 {
            let mut v = full.clone();
            for _ in 0..(next() % 8 + 1) {
                let i = (next() as usize) % v.len();
                v[i] = next() as u8;
            }
            exercise(&v);
        }
    }
}

/// IPv4 192.0.2.1 → 192.0.2.2 carrying `payload` as protocol `proto`.
fn ipv4_around(proto: u8, payload: &[u8]) -> Vec<u8> {
    let mut p = vec![0x45, 0];
    p.extend_from_slice(&(20 + payload.len() as u16).to_be_bytes());
    p.extend_from_slice(&[0, 1, 0x40, 0, 64, proto, 0, 0, 192, 0, 2, 1, 192, 0, 2, 2]);
    p.extend_from_slice(payload);
    p
}

fn udp_around(dport: u16, payload: &[u8]) -> Vec<u8> {
    let mut u = vec![0xc3, 0x50];
    u.extend_from_slice(&dport.to_be_bytes());
    u.extend_from_slice(&(8 + payload.len() as u16).to_be_bytes());
    u.extend_from_slice(&[0, 0]);
    u.extend_from_slice(payload);
    u
}

/// Issue 19: 1,000 VLAN tags, 1,000 MPLS labels, IPv4 in GRE 100 times, VXLAN in VXLAN 20
/// times: bounded, each counted as too deeply nested, not walked to the end.
#[test]
fn hostile_nesting_is_bounded_and_counted() {
    let syn = ethernet_syn();
    let inner_ip = &syn[IP..];
    let mut vlan = syn[..12].to_vec();
    for _ in 0..1000 {
        vlan.extend_from_slice(&[0x81, 0x00, 0x00, 0x05]);
    }
    vlan.extend_from_slice(&[0x08, 0x00]);
    vlan.extend_from_slice(inner_ip);
    let mut mpls = syn[..12].to_vec();
    mpls.extend_from_slice(&[0x88, 0x47]);
    for i in 0..1000 {
        mpls.extend_from_slice(&[0, 0x10, if i == 999 { 0x01 } else { 0 }, 64]);
    }
    mpls.extend_from_slice(inner_ip);
    let mut gre = inner_ip.to_vec();
    for _ in 0..100 {
        let mut g = vec![0x00, 0x00, 0x08, 0x00];
        g.extend_from_slice(&gre);
        gre = ipv4_around(47, &g);
    }
    let mut vxlan = syn.clone();
    for _ in 0..20 {
        let mut v = vec![0x08, 0, 0, 0, 0, 0, 1, 0];
        v.extend_from_slice(&vxlan);
        let mut e = syn[..14].to_vec();
        e.extend_from_slice(&ipv4_around(17, &udp_around(4789, &v)));
        vxlan = e;
    }
    let mut gre_eth = syn[..14].to_vec();
    gre_eth.extend_from_slice(&gre);
    let o = exercise(&pcap(1, &[vlan, mpls, gre_eth, vxlan]));
    assert_eq!(o.decoded, vec![Err(SkipReason::TooDeeplyNested); 4]);
    // Within the bounds the same shapes decode: 3 GRE layers, 5 MPLS labels.
    let mut gre = inner_ip.to_vec();
    for _ in 0..3 {
        let mut g = vec![0x00, 0x00, 0x08, 0x00];
        g.extend_from_slice(&gre);
        gre = ipv4_around(47, &g);
    }
    let mut gre_eth = syn[..14].to_vec();
    gre_eth.extend_from_slice(&gre);
    let o = exercise(&pcap(1, &[gre_eth]));
    assert_eq!(o.decoded, vec![Ok(0)]);
}

/// Every tunnel and link layer of issue 19 cut at every byte and with random bytes
/// flipped: counted skips or a decoded segment, never a panic; the payload never claims
/// more than the frame holds.
#[test]
fn tunnels_and_link_types_cut_and_flipped() {
    let syn = ethernet_syn();
    let inner_ip = syn[IP..].to_vec();
    let eth = |ty: [u8; 2], p: &[u8]| {
        let mut e = syn[..12].to_vec();
        e.extend_from_slice(&ty);
        e.extend_from_slice(p);
        e
    };
    let cat = |a: &[u8], b: &[u8]| [a, b].concat();
    let vxlan = eth(
        [0x08, 0x00],
        &ipv4_around(17, &udp_around(8472, &cat(&[8, 0, 0, 0, 0, 0, 1, 0], &syn))),
    );
    let geneve = eth(
        [0x08, 0x00],
        &ipv4_around(
            17,
            &udp_around(
                6081,
                &cat(&[1, 0, 0x65, 0x58, 0, 0, 1, 0, 1, 2, 0x80, 0], &syn),
            ),
        ),
    );
    let gtp = eth(
        [0x08, 0x00],
        &ipv4_around(
            17,
            &udp_around(
                2152,
                &cat(
                    &[0x34, 0xff, 0, 68, 0, 0, 0, 1, 0, 0, 0, 0x85, 1, 0, 0, 0],
                    &inner_ip,
                ),
            ),
        ),
    );
    let teredo = eth(
        [0x08, 0x00],
        &ipv4_around(
            17,
            &udp_around(3544, &cat(&[0, 0, 0, 0, 0, 0, 0, 0], &[0x60; 60])),
        ),
    );
    let erspan3 = eth(
        [0x08, 0x00],
        &ipv4_around(
            47,
            &cat(
                &[
                    0x10, 0, 0x22, 0xeb, 0, 0, 0, 1, 0x20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1,
                ],
                &[0; 8],
            )
            .into_iter()
            .chain(syn.iter().copied())
            .collect::<Vec<u8>>(),
        ),
    );
    let pptp = eth(
        [0x08, 0x00],
        &ipv4_around(
            47,
            &cat(
                &[
                    0x30, 0x81, 0x88, 0x0b, 0, 60, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0xff, 0x03, 0,
                    0x21,
                ],
                &inner_ip,
            ),
        ),
    );
    let pppoe = eth(
        [0x88, 0x64],
        &cat(&[0x11, 0, 0, 1, 0, 62, 0, 0x21], &inner_ip),
    );
    let mpls_pw = eth([0x88, 0x47], &cat(&[0, 0x10, 0x01, 64, 0, 0, 0, 0], &syn));
    let wlan_qos_amsdu = cat(
        &[
            0x88, 0x01, 0, 0, 2, 0, 0, 0, 0, 10, 2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2, 0, 0,
        ],
        &cat(
            &[0x80, 0, 2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0, 68],
            &[0xaa, 0xaa, 3, 0, 0, 0, 8, 0],
        ),
    );
    let aruba = eth(
        [0x08, 0x00],
        &ipv4_around(
            47,
            &cat(&cat(&[0, 0, 0x82, 0x40], &wlan_qos_amsdu), &inner_ip),
        ),
    );
    let ayiya = eth(
        [0x08, 0x00],
        &ipv4_around(
            17,
            &udp_around(
                5072,
                &cat(
                    &[0x41, 0x50, 0x21, 4, 0, 0, 0, 0],
                    &cat(&[0; 36], &inner_ip),
                ),
            ),
        ),
    );
    let ethernet_cases = [
        vxlan, geneve, gtp, teredo, erspan3, pptp, pppoe, mpls_pw, aruba, ayiya,
    ];
    // Intact, each reaches the SYN (payload 0), but Teredo, whose IPv6 packet here
    // carries protocol 0x60, not TCP.
    let o = exercise(&pcap(1, &ethernet_cases));
    let mut want = vec![Ok(0); ethernet_cases.len()];
    want[3] = Err(SkipReason::NotTcp);
    assert_eq!(o.decoded, want);
    let wlan = cat(
        &[
            0x08, 0x01, 0, 0, 2, 0, 0, 0, 0, 10, 2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2, 0, 0,
        ],
        &cat(&[0xaa, 0xaa, 3, 0, 0, 0, 8, 0], &inner_ip),
    );
    let links: [(u32, Vec<u8>); 7] = [
        (9, cat(&[0xff, 0x03, 0, 0x21], &inner_ip)),
        (50, cat(&[0x8f, 0, 0x08, 0], &inner_ip)),
        (104, cat(&[0x0f, 0, 0x86, 0xdd], &[0x60; 60])),
        (105, wlan.clone()),
        (127, cat(&[0, 0, 8, 0, 0, 0, 0, 0], &wlan)),
        (239, cat(&[2, 0, 0, 0, 44, 0, 9, 0], &inner_ip)),
        (242, cat(&[0; 40], &cat(&[8, 0, 0, 0], &inner_ip))),
    ];
    let mut all: Vec<(u32, Vec<u8>)> = ethernet_cases.iter().map(|f| (1, f.clone())).collect();
    all.extend(links.iter().cloned());
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for (link, f) in &all {
        let cuts: Vec<Vec<u8>> = (0..f.len()).map(|n| f[..n].to_vec()).collect();
        exercise(&pcap(*link, &cuts));
        let flips: Vec<Vec<u8>> = (0..200)
            .map(|_| {
                let mut v = f.clone();
                for _ in 0..(next() % 4 + 1) {
                    let i = (next() as usize) % v.len();
                    v[i] = next() as u8;
                }
                v
            })
            .collect();
        exercise(&pcap(*link, &flips));
    }
    // The link types decode their intact frame (Cisco HDLC's IPv6 carries 0x60: not TCP).
    for (link, f) in &links {
        let o = exercise(&pcap(*link, std::slice::from_ref(f)));
        let want = if *link == 104 {
            Err(SkipReason::NotTcp)
        } else {
            Ok(0)
        };
        assert_eq!(o.decoded, vec![want], "link type {link}");
    }
}
