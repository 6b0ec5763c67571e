//! A [`ConnSummary`] as the few bytes `tcpwhy flows` keeps of a connection it cannot hold
//! whole (`tcpwhy-pipeline`'s sorted store, spilled to temporary files beyond its
//! budget), and back.
//!
//! Every integer is an unsigned LEB128 varint, but the start time (8 bytes; the end is a
//! zigzag varint of its distance from it) and the addresses; each group's `Option`s and
//! `bool`s are the bits of one varint ahead of the fields present, a direction's 22
//! counters the bits of one varint ahead of those that are not 0, and an RTT summary's
//! quantiles steps from the one below: a short connection's row is a few dozen bytes.
//!
//! Why by hand (style.md: only where a measurement shows the crate is the bottleneck):
//! postcard through serde took ≈ 2,900 instructions to encode a row and ≈ 3,900 to decode
//! it on the bench's many-connections capture (`flows -j 1` on its first 300 k packets:
//! 86 k rows encoded, 28 % of the command's 2,082 M instructions), ≈ 4,200 and 4,900 on
//! the mixed capture's longer connections (its first 3 M packets: 27 k rows encoded),
//! most of it serde's visitors for a row's ≈ 90 fields and `Option`s. This encoding:
//! ≈ 1,700 and 2,000 (many connections: 2,082 M → 1,809 M instructions in all), ≈ 2,700
//! and 3,800 (mixed: 4,331 M → 4,260 M); callgrind, bench/README.md (session 26). The
//! rows are smaller too: 74 bytes on average for the many-connections capture's, 148 for
//! the mixed capture's (about 150 for a short connection with postcard).
//!
//! `stream`, `first_frame` and `continuation` are not encoded: the store's key holds them
//! (they change while rows are sorted and numbered); [`decode`] leaves them 0 and false.
//! Every field is named in both directions, so a field added to the summary does not
//! compile here until it is encoded.

use crate::limits::LimitTimes;
use crate::rtt::RttStats;
use crate::summary::{
    ClientBy, ConnSummary, DirSummary, Endpoint, IcmpErrors, SegmentCounts, SynOptions, Vantage,
    WindowScale,
};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use tcpwhy_capture::{IcmpErrorKind, Timestamp};

/// Appends `c`'s encoding to `out`.
pub fn encode(c: &ConnSummary, out: &mut Vec<u8>) {
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
        icmp_errors,
    } = c;
    let mut w = Writer(out);
    for e in endpoints {
        w.endpoint(e);
    }
    w.bits(&[
        syn_to_synack_ns.is_some(),
        synack_to_ack_ns.is_some(),
        *reused_port,
        icmp_errors.is_some(),
        icmp_errors.is_some_and(|i| i.too_big_frame.is_some()),
        icmp_errors.is_some_and(|i| i.next_hop_mtu.is_some()),
    ]);
    w.byte(client_by_code(*client_by));
    w.byte(vantage_code(*vantage));
    w.u64(*last_frame);
    w.0.extend_from_slice(&start.0.to_le_bytes());
    w.i64(end.0.wrapping_sub(start.0));
    w.opt(*syn_to_synack_ns);
    w.opt(*synack_to_ack_ns);
    if let Some(IcmpErrors {
        count,
        first_frame,
        first,
        too_big_frame,
        next_hop_mtu,
    }) = icmp_errors
    {
        w.u64(*count);
        w.u64(*first_frame);
        w.byte(icmp_code(*first));
        w.opt(*too_big_frame);
        w.opt(next_hop_mtu.map(u64::from));
    }
    for d in dirs {
        w.dir(d);
    }
}

/// The summary `bytes` encode (as [`encode`] wrote them, and nothing after them); `None`
/// for anything else, never a panic.
pub fn decode(bytes: &[u8]) -> Option<ConnSummary> {
    let mut r = Reader(bytes);
    let endpoints = [r.endpoint()?, r.endpoint()?];
    let [synack, ack, reused_port, icmp, too_big, mtu] = r.bits()?;
    let client_by = client_by_of(r.byte()?)?;
    let vantage = vantage_of(r.byte()?)?;
    let last_frame = r.u64()?;
    let start = i64::from_le_bytes(r.take::<8>()?);
    let end = start.wrapping_add(r.i64()?);
    let syn_to_synack_ns = r.opt(synack)?;
    let synack_to_ack_ns = r.opt(ack)?;
    if !icmp && (too_big || mtu) {
        return None;
    }
    let icmp_errors = if icmp {
        Some(IcmpErrors {
            count: r.u64()?,
            first_frame: r.u64()?,
            first: icmp_of(r.byte()?)?,
            too_big_frame: r.opt(too_big)?,
            next_hop_mtu: r.opt_as(mtu)?,
        })
    } else {
        None
    };
    let dirs = [r.dir()?, r.dir()?];
    if !r.0.is_empty() {
        return None;
    }
    Some(ConnSummary {
        stream: 0,
        endpoints,
        client_by,
        first_frame: 0,
        last_frame,
        start: Timestamp(start),
        end: Timestamp(end),
        dirs,
        syn_to_synack_ns,
        synack_to_ack_ns,
        vantage,
        reused_port,
        continuation: false,
        icmp_errors,
    })
}

/// The counters of a direction: its packets, data packets, bytes and unique bytes, its
/// segment counts and its limit times.
const COUNTERS: usize = 22;

struct Writer<'a>(&'a mut Vec<u8>);

impl Writer<'_> {
    fn byte(&mut self, b: u8) {
        self.0.push(b);
    }

    fn u64(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.0.push(v as u8 | 0x80);
            v >>= 7;
        }
        self.0.push(v as u8);
    }

    /// Zigzag: small magnitudes of either sign take few bytes.
    fn i64(&mut self, v: i64) {
        self.u64(((v << 1) ^ (v >> 63)) as u64);
    }

    /// The value of an `Option` whose presence a [`Self::bits`] already wrote.
    fn opt(&mut self, v: Option<u64>) {
        if let Some(v) = v {
            self.u64(v);
        }
    }

    /// Flags as one varint, the first the lowest bit.
    fn bits<const N: usize>(&mut self, flags: &[bool; N]) {
        let word = flags
            .iter()
            .enumerate()
            .fold(0u64, |w, (i, &f)| w | u64::from(f) << i);
        self.u64(word);
    }

    /// A direction's counters: which are not 0, as the bits of one varint, then those.
    /// Most of a row's counters are 0 and take no byte, nor any time to read back.
    fn counters(&mut self, values: &[u64; COUNTERS]) {
        let nonzero = values
            .iter()
            .enumerate()
            .fold(0u64, |w, (i, &v)| w | u64::from(v != 0) << i);
        self.u64(nonzero);
        for &v in values.iter().filter(|&&v| v != 0) {
            self.u64(v);
        }
    }

    fn endpoint(&mut self, e: &Endpoint) {
        match e.addr {
            IpAddr::V4(a) => {
                self.byte(4);
                self.0.extend_from_slice(&a.octets());
            }
            IpAddr::V6(a) => {
                self.byte(6);
                self.0.extend_from_slice(&a.octets());
            }
        }
        self.0.extend_from_slice(&e.port.to_le_bytes());
    }

    fn rtt(&mut self, r: &Option<RttStats>) {
        if let Some(RttStats {
            samples,
            min_ns,
            median_ns,
            p95_ns,
            max_ns,
        }) = *r
        {
            // Each quantile as its step from the one below (they are ordered: small steps).
            for v in [
                samples,
                min_ns,
                median_ns.wrapping_sub(min_ns),
                p95_ns.wrapping_sub(median_ns),
                max_ns.wrapping_sub(p95_ns),
            ] {
                self.u64(v);
            }
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
            window_floor,
            scale_floor,
            fin,
            rst,
        } = d;
        self.bits(&[
            isn.is_some(),
            syn.is_some(),
            syn.is_some_and(|s| s.mss.is_some()),
            syn.is_some_and(|s| s.wscale.is_some()),
            syn.is_some_and(|s| s.sack_permitted),
            syn.is_some_and(|s| s.timestamps),
            *syn_cut,
            wscale.is_some(),
            max_window_bytes.is_some(),
            max_in_flight.is_some(),
            rtt_ack.is_some(),
            rtt_ts.is_some(),
            window_floor.is_some(),
            scale_floor.is_some(),
            *fin,
            *rst,
        ]);
        self.opt(isn.map(u64::from));
        if let Some(s) = syn {
            self.opt(s.mss.map(u64::from));
            self.opt(s.wscale.map(u64::from));
        }
        match wscale {
            None => {}
            Some(WindowScale::Unknown) => self.byte(0),
            Some(WindowScale::NotNegotiated) => self.byte(1),
            Some(WindowScale::Shift(n)) => {
                self.byte(2);
                self.byte(*n);
            }
        }
        self.opt(*max_window_bytes);
        self.opt(*max_in_flight);
        self.rtt(rtt_ack);
        self.rtt(rtt_ts);
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
        self.counters(&[
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
        ]);
        self.opt(*window_floor);
        if let Some((flight, field)) = scale_floor {
            self.u64(*flight);
            self.u64(u64::from(*field));
        }
    }
}

struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn byte(&mut self) -> Option<u8> {
        let (&b, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(b)
    }

    fn take<const N: usize>(&mut self) -> Option<[u8; N]> {
        let (head, rest) = self.0.split_first_chunk::<N>()?;
        self.0 = rest;
        Some(*head)
    }

    /// A varint of at most 64 bits; `None` for one longer or cut short. One byte (most
    /// of a row's) inline, longer ones out of line.
    #[inline(always)]
    fn u64(&mut self) -> Option<u64> {
        match self.0.split_first() {
            Some((&b, rest)) if b < 0x80 => {
                self.0 = rest;
                Some(u64::from(b))
            }
            _ => self.long_u64(),
        }
    }

    #[inline(never)]
    fn long_u64(&mut self) -> Option<u64> {
        let mut v = 0u64;
        for (i, &b) in self.0.iter().enumerate().take(10) {
            v |= u64::from(b & 0x7f) << (7 * i);
            if b < 0x80 {
                // The tenth byte holds the 64th bit only.
                if i == 9 && b > 1 {
                    return None;
                }
                self.0 = &self.0[i + 1..];
                return Some(v);
            }
        }
        None
    }

    fn i64(&mut self) -> Option<i64> {
        let z = self.u64()?;
        Some((z >> 1) as i64 ^ -((z & 1) as i64))
    }

    /// An `Option`'s value when its flag says it is there.
    fn opt(&mut self, present: bool) -> Option<Option<u64>> {
        if present {
            self.u64().map(Some)
        } else {
            Some(None)
        }
    }

    /// [`Self::opt`] of a narrower field: a value too large for it is not ours.
    fn opt_as<T: TryFrom<u64>>(&mut self, present: bool) -> Option<Option<T>> {
        self.opt(present)?.map(T::try_from).transpose().ok()
    }

    fn bits<const N: usize>(&mut self) -> Option<[bool; N]> {
        let word = self.u64()?;
        if word >> N != 0 {
            return None;
        }
        Some(std::array::from_fn(|i| word >> i & 1 == 1))
    }

    /// [`Writer::counters`]' values.
    fn counters(&mut self) -> Option<[u64; COUNTERS]> {
        let mut nonzero = self.u64()?;
        if nonzero >> COUNTERS != 0 {
            return None;
        }
        let mut values = [0; COUNTERS];
        while nonzero != 0 {
            let i = nonzero.trailing_zeros() as usize;
            nonzero &= nonzero - 1;
            // A 0 written where the bit says it is not: not an encoding of ours.
            values[i] = self.u64().filter(|&v| v != 0)?;
        }
        Some(values)
    }

    fn endpoint(&mut self) -> Option<Endpoint> {
        let addr = match self.byte()? {
            4 => IpAddr::V4(Ipv4Addr::from(self.take::<4>()?)),
            6 => IpAddr::V6(Ipv6Addr::from(self.take::<16>()?)),
            _ => return None,
        };
        let port = u16::from_le_bytes(self.take::<2>()?);
        Some(Endpoint { addr, port })
    }

    fn rtt(&mut self, present: bool) -> Option<Option<RttStats>> {
        if !present {
            return Some(None);
        }
        let samples = self.u64()?;
        let min_ns = self.u64()?;
        let median_ns = min_ns.wrapping_add(self.u64()?);
        let p95_ns = median_ns.wrapping_add(self.u64()?);
        let max_ns = p95_ns.wrapping_add(self.u64()?);
        Some(Some(RttStats {
            samples,
            min_ns,
            median_ns,
            p95_ns,
            max_ns,
        }))
    }

    fn dir(&mut self) -> Option<DirSummary> {
        let [isn, syn, mss, syn_wscale, sack_permitted, timestamps, syn_cut, wscale, max_window, max_in_flight, rtt_ack, rtt_ts, window_floor, scale_floor, fin, rst] =
            self.bits()?;
        let isn = self.opt_as(isn)?;
        let syn = if syn {
            Some(SynOptions {
                mss: self.opt_as(mss)?,
                wscale: self.opt_as(syn_wscale)?,
                sack_permitted,
                timestamps,
            })
        } else if mss || syn_wscale || sack_permitted || timestamps {
            return None;
        } else {
            None
        };
        let wscale = if wscale {
            Some(match self.byte()? {
                0 => WindowScale::Unknown,
                1 => WindowScale::NotNegotiated,
                2 => WindowScale::Shift(self.byte()?),
                _ => return None,
            })
        } else {
            None
        };
        let max_window_bytes = self.opt(max_window)?;
        let max_in_flight = self.opt(max_in_flight)?;
        let rtt_ack = self.rtt(rtt_ack)?;
        let rtt_ts = self.rtt(rtt_ts)?;
        let [packets, data_packets, bytes, unique_bytes, retransmissions, fast_retransmissions, spurious_retransmissions, out_of_order, dup_acks, zero_windows, zero_window_probes, window_full, window_updates, keep_alives, dsacks, previous_segment_not_captured, acked_unseen, capture_duplicates, rwnd_ns, zero_window_ns, sender_ns, app_ns] =
            self.counters()?;
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
        let window_floor = self.opt(window_floor)?;
        let scale_floor = if scale_floor {
            Some((self.u64()?, u32::try_from(self.u64()?).ok()?))
        } else {
            None
        };
        Some(DirSummary {
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
            window_floor,
            scale_floor,
            fin,
            rst,
        })
    }
}

fn client_by_code(c: ClientBy) -> u8 {
    match c {
        ClientBy::Syn => 0,
        ClientBy::SynAck => 1,
        ClientBy::KnownServer => 2,
        ClientBy::PortGuess => 3,
    }
}

fn client_by_of(b: u8) -> Option<ClientBy> {
    Some(match b {
        0 => ClientBy::Syn,
        1 => ClientBy::SynAck,
        2 => ClientBy::KnownServer,
        3 => ClientBy::PortGuess,
        _ => return None,
    })
}

fn vantage_code(v: Vantage) -> u8 {
    match v {
        Vantage::Client => 0,
        Vantage::Server => 1,
        Vantage::Middle => 2,
        Vantage::Unknown => 3,
    }
}

fn vantage_of(b: u8) -> Option<Vantage> {
    Some(match b {
        0 => Vantage::Client,
        1 => Vantage::Server,
        2 => Vantage::Middle,
        3 => Vantage::Unknown,
        _ => return None,
    })
}

fn icmp_code(k: IcmpErrorKind) -> u8 {
    match k {
        IcmpErrorKind::DestinationUnreachable => 0,
        IcmpErrorKind::FragmentationNeeded => 1,
        IcmpErrorKind::PacketTooBig => 2,
        IcmpErrorKind::SourceQuench => 3,
        IcmpErrorKind::TimeExceeded => 4,
        IcmpErrorKind::ParameterProblem => 5,
    }
}

fn icmp_of(b: u8) -> Option<IcmpErrorKind> {
    Some(match b {
        0 => IcmpErrorKind::DestinationUnreachable,
        1 => IcmpErrorKind::FragmentationNeeded,
        2 => IcmpErrorKind::PacketTooBig,
        3 => IcmpErrorKind::SourceQuench,
        4 => IcmpErrorKind::TimeExceeded,
        5 => IcmpErrorKind::ParameterProblem,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// xorshift, and values of every size: 0 (most counters), one byte, several, the
    /// largest.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        fn value(&mut self) -> u64 {
            match self.next() % 5 {
                0 => 0,
                1 => self.next() % 128,
                2 => self.next() % 100_000_000,
                3 => u64::MAX - self.next() % 3,
                _ => self.next(),
            }
        }

        fn flag(&mut self) -> bool {
            self.next() % 2 == 0
        }

        fn opt(&mut self) -> Option<u64> {
            self.flag().then(|| self.value())
        }

        fn endpoint(&mut self) -> Endpoint {
            let addr = if self.flag() {
                IpAddr::from((self.next() as u32).to_be_bytes())
            } else {
                IpAddr::from(
                    (u128::from(self.next()) << 64 | u128::from(self.next())).to_be_bytes(),
                )
            };
            Endpoint {
                addr,
                port: self.next() as u16,
            }
        }

        fn rtt(&mut self) -> Option<RttStats> {
            self.flag().then(|| RttStats {
                samples: self.value(),
                min_ns: self.value(),
                median_ns: self.value(),
                p95_ns: self.value(),
                max_ns: self.value(),
            })
        }

        fn dir(&mut self) -> DirSummary {
            DirSummary {
                packets: self.value(),
                data_packets: self.value(),
                bytes: self.value(),
                unique_bytes: self.value(),
                isn: self.flag().then(|| self.next() as u32),
                syn: self.flag().then(|| SynOptions {
                    mss: self.flag().then(|| self.next() as u16),
                    wscale: self.flag().then(|| self.next() as u8),
                    sack_permitted: self.flag(),
                    timestamps: self.flag(),
                }),
                syn_cut: self.flag(),
                wscale: match self.next() % 4 {
                    0 => None,
                    1 => Some(WindowScale::Unknown),
                    2 => Some(WindowScale::NotNegotiated),
                    _ => Some(WindowScale::Shift(self.next() as u8)),
                },
                max_window_bytes: self.opt(),
                max_in_flight: self.opt(),
                rtt_ack: self.rtt(),
                rtt_ts: self.rtt(),
                counts: SegmentCounts {
                    retransmissions: self.value(),
                    fast_retransmissions: self.value(),
                    spurious_retransmissions: self.value(),
                    out_of_order: self.value(),
                    dup_acks: self.value(),
                    zero_windows: self.value(),
                    zero_window_probes: self.value(),
                    window_full: self.value(),
                    window_updates: self.value(),
                    keep_alives: self.value(),
                    dsacks: self.value(),
                    previous_segment_not_captured: self.value(),
                    acked_unseen: self.value(),
                    capture_duplicates: self.value(),
                },
                limits: LimitTimes {
                    rwnd_ns: self.value(),
                    zero_window_ns: self.value(),
                    sender_ns: self.value(),
                    app_ns: self.value(),
                },
                window_floor: self.opt(),
                scale_floor: self.flag().then(|| (self.value(), self.next() as u32)),
                fin: self.flag(),
                rst: self.flag(),
            }
        }

        fn summary(&mut self) -> ConnSummary {
            let kinds = [
                IcmpErrorKind::DestinationUnreachable,
                IcmpErrorKind::FragmentationNeeded,
                IcmpErrorKind::PacketTooBig,
                IcmpErrorKind::SourceQuench,
                IcmpErrorKind::TimeExceeded,
                IcmpErrorKind::ParameterProblem,
            ];
            ConnSummary {
                stream: 0,
                endpoints: [self.endpoint(), self.endpoint()],
                client_by: [
                    ClientBy::Syn,
                    ClientBy::SynAck,
                    ClientBy::KnownServer,
                    ClientBy::PortGuess,
                ][self.next() as usize % 4],
                first_frame: 0,
                last_frame: self.value(),
                start: Timestamp(self.value() as i64),
                end: Timestamp(self.value() as i64),
                dirs: [self.dir(), self.dir()],
                syn_to_synack_ns: self.opt(),
                synack_to_ack_ns: self.opt(),
                vantage: [
                    Vantage::Client,
                    Vantage::Server,
                    Vantage::Middle,
                    Vantage::Unknown,
                ][self.next() as usize % 4],
                reused_port: self.flag(),
                continuation: false,
                icmp_errors: self.flag().then(|| IcmpErrors {
                    count: self.value(),
                    first_frame: self.value(),
                    first: kinds[self.next() as usize % kinds.len()],
                    too_big_frame: self.opt(),
                    next_hop_mtu: self.flag().then(|| self.next() as u32),
                }),
            }
        }
    }

    /// Every field, each `Option` present and absent, each enum's every value and
    /// integers of every length (the largest too, and timestamps of either sign) come
    /// back as they were; and every encoding cut short, or with a byte more, is refused.
    #[test]
    fn summaries_come_back_as_they_were_and_cut_ones_are_refused() {
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        let mut bytes = Vec::new();
        for _ in 0..2_000 {
            let c = rng.summary();
            bytes.clear();
            encode(&c, &mut bytes);
            let back = decode(&bytes).expect("decodes");
            assert_eq!(format!("{back:?}"), format!("{c:?}"));
            for cut in 0..bytes.len() {
                assert!(
                    decode(&bytes[..cut]).is_none(),
                    "cut at {cut} of {}",
                    bytes.len()
                );
            }
            bytes.push(0);
            assert!(decode(&bytes).is_none());
        }
    }

    /// The stream, first frame and continuation flag are the store key's, not encoded.
    #[test]
    fn the_key_fields_are_left_out() {
        let mut c = Rng(7).summary();
        let mut a = Vec::new();
        encode(&c, &mut a);
        c.stream = 99;
        c.first_frame = 12;
        c.continuation = true;
        let mut b = Vec::new();
        encode(&c, &mut b);
        assert_eq!(a, b);
        let back = decode(&b).unwrap();
        assert_eq!(
            (back.stream, back.first_frame, back.continuation),
            (0, 0, false)
        );
    }

    /// A short connection's row is a few dozen bytes (postcard made it ≈ 150).
    #[test]
    fn a_short_connection_takes_few_bytes() {
        let side = DirSummary {
            packets: 3,
            ..DirSummary::default()
        };
        let c = ConnSummary {
            stream: 0,
            endpoints: [
                Endpoint {
                    addr: IpAddr::from([10, 0, 0, 1]),
                    port: 40_000,
                },
                Endpoint {
                    addr: IpAddr::from([10, 0, 0, 2]),
                    port: 80,
                },
            ],
            client_by: ClientBy::Syn,
            first_frame: 0,
            last_frame: 9,
            start: Timestamp(1_795_914_235_635_248_000),
            end: Timestamp(1_795_914_235_635_346_000),
            dirs: [side.clone(), side],
            syn_to_synack_ns: Some(40_000),
            synack_to_ack_ns: Some(9_000),
            vantage: Vantage::Client,
            reused_port: false,
            continuation: false,
            icmp_errors: None,
        };
        let mut b = Vec::new();
        encode(&c, &mut b);
        // Endpoints 2 × (1 + 4 + 2), flags, client, vantage, last frame 1 each, start 8,
        // end +98 µs 3, handshake legs 3 + 2, each direction its flags, counter bits and
        // packets 1 each.
        assert_eq!(b.len(), 14 + 4 + 8 + 3 + 5 + 2 * 3);
        assert_eq!(format!("{:?}", decode(&b).unwrap()), format!("{c:?}"));
    }

    /// A varint holds 64 bits at most: ten bytes whose last holds the 64th bit alone.
    #[test]
    fn varints_longer_than_64_bits_are_refused() {
        let max = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01];
        assert_eq!(Reader(&max).u64(), Some(u64::MAX));
        let mut over = max;
        over[9] = 0x02;
        assert_eq!(Reader(&over).u64(), None);
        let mut eleven = max.to_vec();
        eleven[9] = 0x81;
        eleven.push(0);
        assert_eq!(Reader(&eleven).u64(), None);
        assert_eq!(Reader(&[0x80, 0x01]).u64(), Some(128));
    }

    /// Any bytes: an answer, never a panic.
    #[test]
    fn any_bytes_decode_or_are_refused() {
        let mut rng = Rng(99);
        for len in 0..400 {
            let b: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
            let _ = decode(&b);
        }
    }
}
