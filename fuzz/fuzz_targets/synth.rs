//! Synthetic TCP segments from fuzzer bytes, shared by the `tracker` and `analyze` fuzz
//! targets and by the detectors' random-input test (crates/detect/tests), so all three
//! explore the same space: a few endpoints, arbitrary flags, sequence and ACK numbers,
//! lengths, windows, options and times (including time going backwards).

use std::net::{IpAddr, Ipv4Addr};
use tcpwhy_capture::{Packet, TcpFlags, TcpOptions, Timestamp};

/// Bytes consumed per synthetic segment.
pub const SEGMENT_BYTES: usize = 24;

fn u32_at(b: &[u8], i: usize) -> u32 {
    u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]])
}

/// Turns `data` into segments, calling `f(frame, ts, packet)` for each; `now` carries the
/// clock across calls.
pub fn segments(data: &[u8], mut f: impl FnMut(u64, Timestamp, &Packet<'_>)) {
    let mut now: i64 = 0;
    for (n, b) in data.chunks_exact(SEGMENT_BYTES).enumerate() {
        // Small sequence steps most of the time so that the analysis paths are reached;
        // the top bit of the selector makes them absolute.
        let sel = b[0];
        let a = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1 + (sel & 1)));
        let z = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 3));
        let (src, dst) = if sel & 2 == 0 { (a, z) } else { (z, a) };
        let client_port = 1000 + u16::from(sel >> 5 & 1);
        let (sp, dp) = if sel & 2 == 0 {
            (client_port, 80)
        } else {
            (80, client_port)
        };
        let base = if sel & 0x80 != 0 { 0 } else { 1_000_000 };
        let mask = if sel & 0x80 != 0 { u32::MAX } else { 0xffff };
        let seq = base + (u32_at(b, 1) & mask);
        let ack = base + (u32_at(b, 5) & mask);
        let dt = i64::from(i16::from_le_bytes([b[9], b[10]])) * 1000;
        now = now.saturating_add(dt);
        let mut o = TcpOptions::default();
        if b[11] & 1 != 0 {
            o.timestamps = Some((u32::from(b[12]), u32::from(b[13])));
        }
        if b[11] & 2 != 0 {
            o.wscale = Some(b[14]);
        }
        if b[11] & 4 != 0 {
            o.sack[0] = (
                seq.wrapping_sub(u32::from(b[15])),
                seq.wrapping_add(u32::from(b[16])),
            );
            o.sack[1] = (ack.wrapping_sub(u32::from(b[17])), ack);
            o.sack_count = 1 + (b[11] >> 3 & 1);
        }
        if b[11] & 0x10 != 0 {
            o.mss = Some(u16::from(b[13]) << 4);
        }
        o.sack_permitted = b[11] & 0x20 != 0;
        // Options cut by a snaplen: a SYN's kept MSS is then a bound (`SynSeen::Cut`).
        o.truncated = b[11] & 0x40 != 0;
        let p = Packet {
            src,
            dst,
            ip_id: Some(u16::from_le_bytes([b[18], b[19]])),
            ttl: 64,
            src_port: sp,
            dst_port: dp,
            seq,
            ack,
            flags: TcpFlags(u16::from_le_bytes([b[20], b[21]]) & 0x1ff),
            window: u16::from(b[22]) << (b[23] & 7),
            urgent: 0,
            options: o,
            payload_len: u32::from(b[23] >> 3) * 100,
            payload: &[],
        };
        f(n as u64 + 1, Timestamp::from_nanos(now), &p);
    }
}
