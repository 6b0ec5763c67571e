//! The "parse headers + hash the 4-tuple" loop tcpwhy's throughput is measured against.
//!
//! It memory-maps a legacy pcap file, walks the records by hand, parses Ethernet (with
//! 802.1Q tags), IPv4 and IPv6 (no extension headers) and the TCP ports, and counts packets
//! per connection (both directions on one key). Nothing more: no sequence analysis, no
//! output per flow. Usage: `bareloop FILE.pcap`.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::process::ExitCode;

/// pcap global header and record header sizes (libpcap savefile format).
const GLOBAL_HEADER_LEN: usize = 24;
const RECORD_HEADER_LEN: usize = 16;
/// Link types (tcpdump.org/linktypes.html).
const LINKTYPE_ETHERNET: u32 = 1;
const LINKTYPE_RAW: u32 = 101;
const LINKTYPE_LINUX_SLL: u32 = 113;

const ETHERTYPE_IPV4: u16 = 0x0800;
const ETHERTYPE_IPV6: u16 = 0x86dd;
const ETHERTYPE_VLAN: u16 = 0x8100;
const ETHERTYPE_QINQ: u16 = 0x88a8;
const IPPROTO_TCP: u8 = 6;

/// Both endpoints of a connection, lower (address, port) first, so that both directions
/// count under one key. IPv4 addresses are stored in the first 4 bytes.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct FlowKey {
    lo_addr: [u8; 16],
    hi_addr: [u8; 16],
    lo_port: u16,
    hi_port: u16,
}

/// A multiply-rotate hasher (the FxHash idea): the key is fixed-size and not adversarial
/// here, so SipHash's cost would only measure the hasher.
#[derive(Default)]
struct FastHasher(u64);

impl Hasher for FastHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes(c.try_into().unwrap()));
        }
        for &b in chunks.remainder() {
            self.add(u64::from(b));
        }
    }
    fn write_u16(&mut self, n: u16) {
        self.add(u64::from(n));
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

impl FastHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

#[derive(Default)]
struct Counts {
    packets: u64,
    tcp: u64,
    not_tcp: u64,
    truncated: u64,
}

fn main() -> ExitCode {
    let Some(path) = std::env::args_os().nth(1) else {
        eprintln!("usage: bareloop FILE.pcap");
        return ExitCode::from(2);
    };
    let file = match std::fs::File::open(&path) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("bareloop: {}: {e}", path.to_string_lossy());
            return ExitCode::from(2);
        }
    };
    // SAFETY: the file is only read; a concurrent writer could change the bytes under
    // us, which for a benchmark input is not a concern.
    let map = match unsafe { memmap2::Mmap::map(&file) } {
        Ok(m) => m,
        Err(e) => {
            eprintln!("bareloop: mmap: {e}");
            return ExitCode::from(2);
        }
    };
    #[cfg(unix)]
    let _ = map.advise(memmap2::Advice::Sequential);
    match run(&map) {
        Ok((counts, flows)) => {
            println!(
                "packets={} tcp={} not_tcp={} truncated={} flows={}",
                counts.packets, counts.tcp, counts.not_tcp, counts.truncated, flows
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("bareloop: {e}");
            ExitCode::from(2)
        }
    }
}

fn run(data: &[u8]) -> Result<(Counts, usize), String> {
    let header = data
        .get(..GLOBAL_HEADER_LEN)
        .ok_or("file shorter than a pcap header")?;
    let magic = u32::from_le_bytes(header[0..4].try_into().unwrap());
    let swapped = match magic {
        0xa1b2_c3d4 | 0xa1b2_3c4d => false,
        0xd4c3_b2a1 | 0x4d3c_b2a1 => true,
        _ => return Err(format!("not a legacy pcap file (magic {magic:#010x})")),
    };
    let rd32 = |b: &[u8]| {
        let v = u32::from_le_bytes(b.try_into().unwrap());
        if swapped {
            v.swap_bytes()
        } else {
            v
        }
    };
    let linktype = rd32(&header[20..24]) & 0x0fff_ffff;
    let l3_offset = match linktype {
        LINKTYPE_ETHERNET => None, // variable: VLAN tags
        LINKTYPE_RAW => Some(0),
        LINKTYPE_LINUX_SLL => Some(16),
        other => return Err(format!("unsupported link type {other}")),
    };

    let mut flows: HashMap<FlowKey, u64, BuildHasherDefault<FastHasher>> = HashMap::default();
    let mut counts = Counts::default();
    let mut pos = GLOBAL_HEADER_LEN;
    while let Some(rec) = data.get(pos..pos + RECORD_HEADER_LEN) {
        let incl_len = rd32(&rec[8..12]) as usize;
        let start = pos + RECORD_HEADER_LEN;
        let Some(frame) = data.get(start..start + incl_len) else {
            counts.truncated += 1; // last record cut short
            break;
        };
        pos = start + incl_len;
        counts.packets += 1;
        match parse(frame, l3_offset) {
            Some(key) => {
                counts.tcp += 1;
                *flows.entry(key).or_insert(0) += 1;
            }
            None => counts.not_tcp += 1,
        }
    }
    Ok((counts, flows.len()))
}

/// Returns the connection key of a TCP packet, or None for anything else (or too short).
#[inline]
fn parse(frame: &[u8], l3_offset: Option<usize>) -> Option<FlowKey> {
    let (ethertype, l3) = match l3_offset {
        None => {
            let mut off = 12;
            let mut ethertype = u16::from_be_bytes(frame.get(off..off + 2)?.try_into().ok()?);
            while ethertype == ETHERTYPE_VLAN || ethertype == ETHERTYPE_QINQ {
                off += 4;
                ethertype = u16::from_be_bytes(frame.get(off..off + 2)?.try_into().ok()?);
            }
            (ethertype, frame.get(off + 2..)?)
        }
        Some(off) => {
            let l3 = frame.get(off..)?;
            let ethertype = match l3.first()? >> 4 {
                4 => ETHERTYPE_IPV4,
                6 => ETHERTYPE_IPV6,
                _ => return None,
            };
            (ethertype, l3)
        }
    };
    let mut a = [0u8; 16];
    let mut b = [0u8; 16];
    let l4 = match ethertype {
        ETHERTYPE_IPV4 => {
            let ip = l3.get(..20)?;
            let ihl = usize::from(ip[0] & 0x0f) * 4;
            // Non-first fragments carry no TCP header.
            let frag_offset = u16::from_be_bytes([ip[6], ip[7]]) & 0x1fff;
            if ip[9] != IPPROTO_TCP || frag_offset != 0 || ihl < 20 {
                return None;
            }
            a[..4].copy_from_slice(&ip[12..16]);
            b[..4].copy_from_slice(&ip[16..20]);
            l3.get(ihl..)?
        }
        ETHERTYPE_IPV6 => {
            let ip = l3.get(..40)?;
            if ip[6] != IPPROTO_TCP {
                return None;
            }
            a.copy_from_slice(&ip[8..24]);
            b.copy_from_slice(&ip[24..40]);
            &l3[40..]
        }
        _ => return None,
    };
    let ports = l4.get(..4)?;
    let pa = u16::from_be_bytes([ports[0], ports[1]]);
    let pb = u16::from_be_bytes([ports[2], ports[3]]);
    Some(if (a, pa) <= (b, pb) {
        FlowKey {
            lo_addr: a,
            hi_addr: b,
            lo_port: pa,
            hi_port: pb,
        }
    } else {
        FlowKey {
            lo_addr: b,
            hi_addr: a,
            lo_port: pb,
            hi_port: pa,
        }
    })
}
