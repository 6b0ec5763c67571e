//! A connection summary's bytes in the rows' spill store (`connections::Row`), written
//! and read by hand.
//!
//! Why not postcard, as before: through serde it cost ≈ 3,950 instructions to encode a
//! summary and ≈ 4,550 to decode it (callgrind, `flows -j 1` on the first 2 M packets
//! of the bench's mixed capture: 26,504 rows, every one of them encoded once the held
//! rows' bound was reached, ≈ 7 % of the run), and the bench's 10 M-packet capture
//! spills ≈ 134,000 rows. The bytes live only in one run's memory and temporary files,
//! so the format needs no version.
//!
//! The format: unsigned integers as LEB128 varints, times zigzagged, each `Option` a
//! presence bit, each enum a small tag, a direction's counters after a mask of the
//! nonzero ones. Every struct is taken apart without `..`, so a
//! field added to a summary does not compile here until it is written and read.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use tcpwhy_capture::Timestamp;
use tcpwhy_track::{
    ClientBy, ConnSummary, DirSummary, Endpoint, LimitTimes, RttStats, SegmentCounts, SynOptions,
    Vantage, WindowScale,
};

/// More than a summary's longest encoding (IPv6 endpoints, every field present and
/// at its widest varint), reserved once per row.
const MAX_BYTES: usize = 2 * 19 + 1 + 3 * 10 + 2 * 10 + 2 * (2 + 4 + 46 * 10 + 4);

/// Appends `c`'s bytes, all but `stream`, `first_frame` and `continuation` (the row's
/// key holds them).
pub(crate) fn encode(c: &ConnSummary, out: &mut Vec<u8>) {
    let ConnSummary {
        stream: _,
        endpoints,
        client_by,
        first_frame: _,
        last_frame,
        start,
        end,
        dirs,
        syn_to_synack_ns,
        synack_to_ack_ns,
        vantage,
        reused_port,
        continuation: _,
    } = c;
    out.reserve(MAX_BYTES);
    let mut w = Writer(out);
    endpoints.iter().for_each(|e| w.endpoint(e));
    let by = match client_by {
        ClientBy::Syn => 0,
        ClientBy::SynAck => 1,
        ClientBy::KnownServer => 2,
        ClientBy::PortGuess => 3,
    };
    let vantage = match vantage {
        Vantage::Client => 0,
        Vantage::Server => 1,
        Vantage::Middle => 2,
        Vantage::Unknown => 3,
    };
    w.0.push(
        by | vantage << 2
            | u8::from(*reused_port) << 4
            | u8::from(syn_to_synack_ns.is_some()) << 5
            | u8::from(synack_to_ack_ns.is_some()) << 6,
    );
    w.varint(*last_frame);
    w.time(*start);
    w.time(*end);
    syn_to_synack_ns.iter().for_each(|&v| w.varint(v));
    synack_to_ack_ns.iter().for_each(|&v| w.varint(v));
    dirs.iter().for_each(|d| w.dir(d));
}

/// The summary [`encode`] wrote, `stream`, `first_frame` and `continuation` left at
/// 0 and false; None for bytes it did not write.
pub(crate) fn decode(b: &[u8]) -> Option<ConnSummary> {
    let mut r = Reader(b);
    let endpoints = [r.endpoint()?, r.endpoint()?];
    let head = r.u8()?;
    let client_by = match head & 3 {
        0 => ClientBy::Syn,
        1 => ClientBy::SynAck,
        2 => ClientBy::KnownServer,
        _ => ClientBy::PortGuess,
    };
    let vantage = match head >> 2 & 3 {
        0 => Vantage::Client,
        1 => Vantage::Server,
        2 => Vantage::Middle,
        _ => Vantage::Unknown,
    };
    let last_frame = r.varint()?;
    let start = r.time()?;
    let end = r.time()?;
    let syn_to_synack_ns = r.opt_varint(head & 1 << 5 != 0)?;
    let synack_to_ack_ns = r.opt_varint(head & 1 << 6 != 0)?;
    let dirs = [r.dir()?, r.dir()?];
    r.0.is_empty().then_some(ConnSummary {
        stream: 0,
        endpoints,
        client_by,
        first_frame: 0,
        last_frame,
        start,
        end,
        dirs,
        syn_to_synack_ns,
        synack_to_ack_ns,
        vantage,
        reused_port: head & 1 << 4 != 0,
        continuation: false,
    })
}

/// Presence bits of a direction's optional fields (and its two flags).
const ISN: u16 = 1;
const SYN: u16 = 1 << 1;
const SYN_CUT: u16 = 1 << 2;
const WSCALE: u16 = 1 << 3;
const MAX_WINDOW: u16 = 1 << 4;
const MAX_IN_FLIGHT: u16 = 1 << 5;
const RTT_ACK: u16 = 1 << 6;
const RTT_TS: u16 = 1 << 7;
const FIN: u16 = 1 << 8;
const RST: u16 = 1 << 9;
/// A direction's counters (packets, bytes, [`SegmentCounts`], [`LimitTimes`]), in this
/// order after a mask of the nonzero ones: most are 0 for most connections.
const NUMBERS: usize = 22;
/// A SYN's options: presence of the MSS and the window scale, and the two flags.
const SYN_MSS: u8 = 1;
const SYN_WSCALE: u8 = 1 << 1;
const SYN_SACK: u8 = 1 << 2;
const SYN_TIMESTAMPS: u8 = 1 << 3;
/// [`WindowScale`]'s tags; a shift's follows it.
const WS_UNKNOWN: u8 = 0;
const WS_NOT_NEGOTIATED: u8 = 1;
const WS_SHIFT: u8 = 2;

struct Writer<'a>(&'a mut Vec<u8>);

impl Writer<'_> {
    #[inline(always)]
    fn varint(&mut self, mut v: u64) {
        // Most numbers take one byte or a few.
        while v >= 0x80 {
            self.0.push(v as u8 | 0x80);
            v >>= 7;
        }
        self.0.push(v as u8);
    }

    fn time(&mut self, t: Timestamp) {
        let v = t.0;
        self.varint(((v << 1) ^ (v >> 63)) as u64);
    }

    fn endpoint(&mut self, e: &Endpoint) {
        match e.addr {
            IpAddr::V4(a) => {
                self.0.push(4);
                self.0.extend_from_slice(&a.octets());
            }
            IpAddr::V6(a) => {
                self.0.push(6);
                self.0.extend_from_slice(&a.octets());
            }
        }
        self.0.extend_from_slice(&e.port.to_le_bytes());
    }

    fn rtt(&mut self, r: &RttStats) {
        let RttStats {
            samples,
            min_ns,
            median_ns,
            p95_ns,
            max_ns,
        } = *r;
        for v in [samples, min_ns, median_ns, p95_ns, max_ns] {
            self.varint(v);
        }
    }

    fn dir(&mut self, d: &DirSummary) {
        let DirSummary {
            packets,
            data_packets,
            bytes,
            unique_bytes,
            isn,
            syn,
            syn_cut,
            wscale,
            max_window_bytes,
            max_in_flight,
            rtt_ack,
            rtt_ts,
            counts,
            limits,
            fin,
            rst,
        } = d;
        let bit = |on: bool, b: u16| if on { b } else { 0 };
        let present = bit(isn.is_some(), ISN)
            | bit(syn.is_some(), SYN)
            | bit(*syn_cut, SYN_CUT)
            | bit(wscale.is_some(), WSCALE)
            | bit(max_window_bytes.is_some(), MAX_WINDOW)
            | bit(max_in_flight.is_some(), MAX_IN_FLIGHT)
            | bit(rtt_ack.is_some(), RTT_ACK)
            | bit(rtt_ts.is_some(), RTT_TS)
            | bit(*fin, FIN)
            | bit(*rst, RST);
        self.0.extend_from_slice(&present.to_le_bytes());
        if let Some(isn) = isn {
            self.varint(u64::from(*isn));
        }
        if let Some(s) = syn {
            let SynOptions {
                mss,
                wscale,
                sack_permitted,
                timestamps,
            } = *s;
            let flag = |on: bool, b: u8| if on { b } else { 0 };
            self.0.push(
                flag(mss.is_some(), SYN_MSS)
                    | flag(wscale.is_some(), SYN_WSCALE)
                    | flag(sack_permitted, SYN_SACK)
                    | flag(timestamps, SYN_TIMESTAMPS),
            );
            mss.iter().for_each(|&m| self.varint(u64::from(m)));
            wscale.iter().for_each(|&s| self.0.push(s));
        }
        if let Some(ws) = wscale {
            match ws {
                WindowScale::Unknown => self.0.push(WS_UNKNOWN),
                WindowScale::NotNegotiated => self.0.push(WS_NOT_NEGOTIATED),
                WindowScale::Shift(s) => self.0.extend_from_slice(&[WS_SHIFT, *s]),
            }
        }
        max_window_bytes.iter().for_each(|&v| self.varint(v));
        max_in_flight.iter().for_each(|&v| self.varint(v));
        rtt_ack.iter().for_each(|r| self.rtt(r));
        rtt_ts.iter().for_each(|r| self.rtt(r));
        let SegmentCounts {
            retransmissions,
            fast_retransmissions,
            spurious_retransmissions,
            out_of_order,
            dup_acks,
            zero_windows,
            zero_window_probes,
            window_full,
            window_updates,
            keep_alives,
            dsacks,
            previous_segment_not_captured,
            acked_unseen,
            capture_duplicates,
        } = *counts;
        let LimitTimes {
            rwnd_ns,
            zero_window_ns,
            sender_ns,
            app_ns,
        } = *limits;
        let numbers: [u64; NUMBERS] = [
            *packets,
            *data_packets,
            *bytes,
            *unique_bytes,
            retransmissions,
            fast_retransmissions,
            spurious_retransmissions,
            out_of_order,
            dup_acks,
            zero_windows,
            zero_window_probes,
            window_full,
            window_updates,
            keep_alives,
            dsacks,
            previous_segment_not_captured,
            acked_unseen,
            capture_duplicates,
            rwnd_ns,
            zero_window_ns,
            sender_ns,
            app_ns,
        ];
        let nonzero = (0..NUMBERS).fold(0u32, |m, i| m | u32::from(numbers[i] != 0) << i);
        self.0.extend_from_slice(&nonzero.to_le_bytes());
        for v in numbers.into_iter().filter(|&v| v != 0) {
            self.varint(v);
        }
    }
}

struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    #[inline]
    fn u8(&mut self) -> Option<u8> {
        let (&x, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(x)
    }

    fn array<const N: usize>(&mut self) -> Option<[u8; N]> {
        let (x, rest) = self.0.split_first_chunk::<N>()?;
        self.0 = rest;
        Some(*x)
    }

    #[inline(always)]
    fn varint(&mut self) -> Option<u64> {
        match self.0 {
            [x, rest @ ..] if *x < 0x80 => {
                self.0 = rest;
                Some(u64::from(*x))
            }
            _ => self.long_varint(),
        }
    }

    fn long_varint(&mut self) -> Option<u64> {
        let mut v = 0u64;
        // At most 10 bytes: 7 bits each.
        for (i, &x) in self.0.iter().enumerate().take(10) {
            v |= u64::from(x & 0x7f) << (7 * i);
            if x < 0x80 {
                self.0 = self.0.get(i + 1..)?;
                return Some(v);
            }
        }
        None
    }

    /// The varint that follows when `present`; Some(None) when not.
    fn opt_varint(&mut self, present: bool) -> Option<Option<u64>> {
        if present {
            self.varint().map(Some)
        } else {
            Some(None)
        }
    }

    fn time(&mut self) -> Option<Timestamp> {
        let u = self.varint()?;
        Some(Timestamp((u >> 1) as i64 ^ -((u & 1) as i64)))
    }

    fn endpoint(&mut self) -> Option<Endpoint> {
        let addr = match self.u8()? {
            4 => IpAddr::V4(Ipv4Addr::from(self.array::<4>()?)),
            6 => IpAddr::V6(Ipv6Addr::from(self.array::<16>()?)),
            _ => return None,
        };
        let port = u16::from_le_bytes(self.array::<2>()?);
        Some(Endpoint { addr, port })
    }

    fn rtt(&mut self) -> Option<RttStats> {
        Some(RttStats {
            samples: self.varint()?,
            min_ns: self.varint()?,
            median_ns: self.varint()?,
            p95_ns: self.varint()?,
            max_ns: self.varint()?,
        })
    }

    fn dir(&mut self) -> Option<DirSummary> {
        let present = u16::from_le_bytes(self.array::<2>()?);
        let has = |b: u16| present & b != 0;
        let isn = match self.opt_varint(has(ISN))? {
            Some(v) => Some(u32::try_from(v).ok()?),
            None => None,
        };
        let syn = if has(SYN) {
            let flags = self.u8()?;
            let mss = if flags & SYN_MSS != 0 {
                Some(u16::try_from(self.varint()?).ok()?)
            } else {
                None
            };
            let wscale = if flags & SYN_WSCALE != 0 {
                Some(self.u8()?)
            } else {
                None
            };
            Some(SynOptions {
                mss,
                wscale,
                sack_permitted: flags & SYN_SACK != 0,
                timestamps: flags & SYN_TIMESTAMPS != 0,
            })
        } else {
            None
        };
        let wscale = if has(WSCALE) {
            Some(match self.u8()? {
                WS_UNKNOWN => WindowScale::Unknown,
                WS_NOT_NEGOTIATED => WindowScale::NotNegotiated,
                WS_SHIFT => WindowScale::Shift(self.u8()?),
                _ => return None,
            })
        } else {
            None
        };
        let max_window_bytes = self.opt_varint(has(MAX_WINDOW))?;
        let max_in_flight = self.opt_varint(has(MAX_IN_FLIGHT))?;
        let rtt_ack = if has(RTT_ACK) {
            Some(self.rtt()?)
        } else {
            None
        };
        let rtt_ts = if has(RTT_TS) { Some(self.rtt()?) } else { None };
        let nonzero = u32::from_le_bytes(self.array::<4>()?);
        let mut numbers = [0u64; NUMBERS];
        for (i, v) in numbers.iter_mut().enumerate() {
            if nonzero & 1 << i != 0 {
                *v = self.varint()?;
            }
        }
        let [packets, data_packets, bytes, unique_bytes, retransmissions, fast_retransmissions, spurious_retransmissions, out_of_order, dup_acks, zero_windows, zero_window_probes, window_full, window_updates, keep_alives, dsacks, previous_segment_not_captured, acked_unseen, capture_duplicates, rwnd_ns, zero_window_ns, sender_ns, app_ns] =
            numbers;
        let counts = SegmentCounts {
            retransmissions,
            fast_retransmissions,
            spurious_retransmissions,
            out_of_order,
            dup_acks,
            zero_windows,
            zero_window_probes,
            window_full,
            window_updates,
            keep_alives,
            dsacks,
            previous_segment_not_captured,
            acked_unseen,
            capture_duplicates,
        };
        let limits = LimitTimes {
            rwnd_ns,
            zero_window_ns,
            sender_ns,
            app_ns,
        };
        Some(DirSummary {
            packets,
            data_packets,
            bytes,
            unique_bytes,
            isn,
            syn,
            syn_cut: has(SYN_CUT),
            wscale,
            max_window_bytes,
            max_in_flight,
            rtt_ack,
            rtt_ts,
            counts,
            limits,
            fin: has(FIN),
            rst: has(RST),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every field set, none to its default, at the widest values it can hold: the
    /// summary comes back equal, and every shorter prefix of its bytes is refused.
    #[test]
    fn a_summary_with_every_field_set_comes_back_whole() {
        let rtt = |k: u64| RttStats {
            samples: k,
            min_ns: k + 1,
            median_ns: u64::MAX - k,
            p95_ns: 1 << 40,
            max_ns: u64::MAX,
        };
        let dir = |k: u64| DirSummary {
            packets: k,
            data_packets: k + 1,
            bytes: u64::MAX,
            unique_bytes: 127,
            isn: Some(u32::MAX - k as u32),
            syn: Some(SynOptions {
                mss: Some(u16::MAX),
                wscale: Some(14),
                sack_permitted: true,
                timestamps: k == 0,
            }),
            syn_cut: true,
            wscale: Some(WindowScale::Shift(u8::MAX)),
            max_window_bytes: Some(1 << 30),
            max_in_flight: Some(128),
            rtt_ack: Some(rtt(k)),
            rtt_ts: Some(rtt(k + 7)),
            counts: SegmentCounts {
                retransmissions: 1,
                fast_retransmissions: 2,
                spurious_retransmissions: 3,
                out_of_order: 4,
                dup_acks: 5,
                zero_windows: 6,
                zero_window_probes: 7,
                window_full: 8,
                window_updates: 9,
                keep_alives: 10,
                dsacks: 11,
                previous_segment_not_captured: 12,
                acked_unseen: 13,
                capture_duplicates: u64::MAX,
            },
            limits: LimitTimes {
                rwnd_ns: 1,
                zero_window_ns: 2,
                sender_ns: 3,
                app_ns: u64::MAX,
            },
            fin: true,
            rst: k == 1,
        };
        let c = ConnSummary {
            stream: 0,
            endpoints: [
                Endpoint {
                    addr: IpAddr::V6(Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 1)),
                    port: u16::MAX,
                },
                Endpoint {
                    addr: IpAddr::V4(Ipv4Addr::new(192, 0, 2, 7)),
                    port: 443,
                },
            ],
            client_by: ClientBy::PortGuess,
            first_frame: 0,
            last_frame: u64::MAX,
            start: Timestamp(i64::MIN),
            end: Timestamp(-1),
            dirs: [dir(0), dir(1)],
            syn_to_synack_ns: Some(u64::MAX),
            synack_to_ack_ns: Some(0),
            vantage: Vantage::Middle,
            reused_port: true,
            continuation: false,
        };
        let mut bytes = Vec::new();
        encode(&c, &mut bytes);
        assert!(bytes.len() <= MAX_BYTES, "{}", bytes.len());
        assert_eq!(
            format!("{:?}", decode(&bytes)),
            format!("{:?}", Some(c.clone()))
        );
        for n in 0..bytes.len() {
            assert!(decode(&bytes[..n]).is_none(), "{n}");
        }
        // Nothing trailing either.
        bytes.push(0);
        assert!(decode(&bytes).is_none());
    }

    /// The other values of each enum and every `None`.
    #[test]
    fn a_summary_with_nothing_optional_comes_back_whole() {
        for (by, vantage, ws) in [
            (ClientBy::Syn, Vantage::Client, None),
            (
                ClientBy::SynAck,
                Vantage::Server,
                Some(WindowScale::Unknown),
            ),
            (
                ClientBy::KnownServer,
                Vantage::Unknown,
                Some(WindowScale::NotNegotiated),
            ),
        ] {
            let ep = Endpoint {
                addr: IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)),
                port: 0,
            };
            let dir = DirSummary {
                wscale: ws,
                syn: Some(SynOptions::default()),
                ..DirSummary::default()
            };
            let c = ConnSummary {
                stream: 0,
                endpoints: [ep, ep],
                client_by: by,
                first_frame: 0,
                last_frame: 3,
                start: Timestamp(1_700_000_000_123_456_789),
                end: Timestamp(1_700_000_001_000_000_000),
                dirs: [dir.clone(), DirSummary::default()],
                syn_to_synack_ns: None,
                synack_to_ack_ns: None,
                vantage,
                reused_port: false,
                continuation: false,
            };
            let mut bytes = Vec::new();
            encode(&c, &mut bytes);
            assert_eq!(
                format!("{:?}", decode(&bytes)),
                format!("{:?}", Some(c.clone()))
            );
        }
    }
}
