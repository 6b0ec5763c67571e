//! One row of `tcpwhy flows --format json`, written straight into a byte buffer.
//!
//! The rows are almost all of the document and its schema is fixed, so each field's
//! line break, indentation and key are one `&'static str` here, numbers go through the
//! crates serde_json itself uses (itoa for integers, zmij for floats, NaN and ±∞ as
//! `null`), and strings through serde_json's own escaping whenever they hold a byte it
//! would escape. The bytes are those serde_json writes for the same row through
//! `json::to_writer_pretty_at`: the tests below render every row of the public captures
//! both ways and compare them.
//!
//! Why by hand (style.md: only where a measurement shows the crate is the bottleneck):
//! `flows -j 1 --format json` on /tmp/speed-1m.pcap (1 M packets of the bench's mixed
//! capture, 13,163 rows, 48 MB of JSON) took 2,114 M instructions, 700 M of them in
//! `write_json_threads` (reading the rows back included, 160 M), most of the rest
//! serde's: `format_escaped_str_contents` escaping every key byte by byte 177 M,
//! `memcpy` of small pieces 126 M, `Compound::serialize_key` 51 M (callgrind). With this
//! writer: `flows` 1,715 M, `write_json_threads` 302 M; with IPv4 endpoints and times
//! written without `core::fmt` (35 M of it): 1,680 M and 265 M.

use crate::flows::path_rtt;
use crate::units::ns_to_ms;
use std::fmt::Display;
use std::io::Write;
use std::net::IpAddr;
use tcpwhy_capture::Timestamp;
use tcpwhy_track::{ClientBy, ConnSummary, DirSummary, Endpoint, RttStats, WindowScale};

/// A row's bytes, appended to a buffer (also a finding's: `finding_json`).
pub(crate) struct Out<'a>(pub(crate) &'a mut Vec<u8>);

impl Out<'_> {
    #[inline(always)]
    pub(crate) fn raw(&mut self, s: &'static str) {
        self.0.extend_from_slice(s.as_bytes());
    }

    #[inline(always)]
    pub(crate) fn u64(&mut self, v: u64) {
        if v < 10 {
            // Most of a row's counters are 0: one byte, without itoa's buffer and the
            // call to copy its variable length out (≈ 60 numbers a row took 28 M
            // instructions of `memcpy` calls on the 1 M-packet bench prefix).
            self.0.push(b'0' + v as u8);
        } else {
            self.0
                .extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
        }
    }

    /// As serde_json writes an `f64`: `null` unless finite.
    #[inline(always)]
    pub(crate) fn f64(&mut self, v: f64) {
        if v.is_finite() {
            self.0
                .extend_from_slice(zmij::Buffer::new().format_finite(v).as_bytes());
        } else {
            self.raw("null");
        }
    }

    #[inline(always)]
    pub(crate) fn bool(&mut self, v: bool) {
        self.raw(if v { "true" } else { "false" });
    }

    #[inline(always)]
    pub(crate) fn opt_u64(&mut self, v: Option<u64>) {
        match v {
            Some(v) => self.u64(v),
            None => self.raw("null"),
        }
    }

    #[inline(always)]
    pub(crate) fn opt_ms(&mut self, ns: Option<u64>) {
        match ns {
            Some(ns) => self.ms(ns),
            None => self.raw("null"),
        }
    }

    /// `ns` as `f64(ns_to_ms(ns))` writes it, from integers: the microseconds, a dot and
    /// their last three digits without trailing zeros (at least one). That is zmij's
    /// text for these values: below [`EXACT_MS_NS`] the float is the nearest to
    /// microseconds / 1000, a decimal of at most 13 significant digits, so the
    /// shortest text that reads back as it is that decimal, and from 0.001 to 10^10 it
    /// is written without an exponent (tested against zmij below). zmij took ≈ 380 instructions a number,
    /// 12 numbers a row (callgrind, `flows` on the bench's mixed capture).
    #[inline(always)]
    pub(crate) fn ms(&mut self, ns: u64) {
        if ns >= EXACT_MS_NS {
            return self.f64(ns_to_ms(ns));
        }
        // `ns_to_ms` rounds half away from zero; exact for these magnitudes.
        let us = (ns + 500) / 1000;
        let frac = (us % 1000) as u32;
        self.u64(us / 1000);
        let digits = [
            b'.',
            b'0' + (frac / 100) as u8,
            b'0' + (frac / 10 % 10) as u8,
            b'0' + (frac % 10) as u8,
        ];
        let len = if frac % 100 == 0 {
            2
        } else if frac % 10 == 0 {
            3
        } else {
            4
        };
        self.0.extend_from_slice(&digits[..len]);
    }

    /// `v`'s text as a JSON string. Written as is, then handed to serde_json's escaping
    /// when it holds a byte that needs it (never for addresses, times and names).
    pub(crate) fn str(&mut self, v: impl Display) {
        self.0.push(b'"');
        let start = self.0.len();
        // Writing to a Vec cannot fail.
        let _ = write!(self.0, "{v}");
        if self.0[start..].iter().any(|&b| needs_escape(b)) {
            let text = String::from_utf8_lossy(&self.0[start..]).into_owned();
            self.0.truncate(start - 1);
            let _ = serde_json::to_writer(&mut *self.0, &text);
        } else {
            self.0.push(b'"');
        }
    }

    /// An endpoint as `Endpoint`'s Display writes it ("10.0.0.1:443"), IPv4 without
    /// the formatting machinery (a third of the rows' cost went to it); IPv6 through it.
    pub(crate) fn endpoint(&mut self, e: Endpoint) {
        let IpAddr::V4(a) = e.addr else {
            return self.str(e);
        };
        let [a, b, c, d] = a.octets();
        self.0.push(b'"');
        self.u64(a.into());
        self.0.push(b'.');
        self.u64(b.into());
        self.0.push(b'.');
        self.u64(c.into());
        self.0.push(b'.');
        self.u64(d.into());
        self.0.push(b':');
        self.u64(e.port.into());
        self.0.push(b'"');
    }

    /// A time as `Timestamp`'s Display writes it: seconds, a dot, 9 digits of ns.
    pub(crate) fn time(&mut self, t: Timestamp) {
        let ns = t.nanos();
        let (secs, nanos) = (ns.div_euclid(1_000_000_000), ns.rem_euclid(1_000_000_000));
        self.0.push(b'"');
        self.0
            .extend_from_slice(itoa::Buffer::new().format(secs).as_bytes());
        self.0.push(b'.');
        let mut buf = itoa::Buffer::new();
        let nanos = buf.format(nanos).as_bytes();
        // Zero-padded to 9 digits; `nanos` < 10^9 has at most 9.
        self.0
            .extend_from_slice(&b"000000000"[nanos.len().min(9)..]);
        self.0.extend_from_slice(nanos);
        self.0.push(b'"');
    }

    /// An RTT summary's object, its fields at indentation `I` (the object's own + 2).
    pub(crate) fn rtt(
        &mut self,
        r: Option<RttStats>,
        fields: &[&'static str; 5],
        close: &'static str,
    ) {
        let Some(r) = r else {
            return self.raw("null");
        };
        self.raw(fields[0]);
        self.u64(r.samples);
        for (&key, ns) in fields[1..]
            .iter()
            .zip([r.min_ns, r.median_ns, r.p95_ns, r.max_ns])
        {
            self.raw(key);
            self.ms(ns);
        }
        self.raw(close);
    }
}

/// Below this, [`Out::ms`] writes milliseconds from integers (2^50 ns, 13 days): the
/// float `ns / 1e3` then has a rounding error far below the 0.5 µs that could move
/// `round()` to another microsecond.
const EXACT_MS_NS: u64 = 1 << 50;

/// The bytes serde_json escapes in a string: `"`, `\` and the control characters.
pub(crate) fn needs_escape(b: u8) -> bool {
    b < 0x20 || b == b'"' || b == b'\\'
}

/// The fields of an RTT object under a row (`rtt_ms`), 14 spaces in.
const RTT_AT_ROW: [&str; 5] = [
    "{\n            \"samples\": ",
    ",\n            \"min\": ",
    ",\n            \"median\": ",
    ",\n            \"p95\": ",
    ",\n            \"max\": ",
];
/// The fields of an RTT object under a direction (`rtt_ack_ms`, `rtt_ts_ms`).
const RTT_AT_DIR: [&str; 5] = [
    "{\n              \"samples\": ",
    ",\n              \"min\": ",
    ",\n              \"median\": ",
    ",\n              \"p95\": ",
    ",\n              \"max\": ",
];

/// Bytes reserved for a row: more than the longest one with every field at its
/// widest (u64::MAX everywhere, IPv6 endpoints), so that appending rarely grows the buffer.
const ROW_BYTES: usize = 6 * 1024;

/// One row as an element of a file's `connections` (4 levels deep), after its
/// separator (`first`: none but the line break).
pub(crate) fn write_row(buf: &mut Vec<u8>, c: &ConnSummary, first: bool) {
    // A row is 2-4 kB: one reservation, not one per piece.
    buf.reserve(ROW_BYTES);
    let mut o = Out(buf);
    o.raw(if first {
        "\n        {\n          \"stream\": "
    } else {
        ",\n        {\n          \"stream\": "
    });
    o.u64(c.stream);
    o.raw(",\n          \"client\": ");
    o.endpoint(c.endpoints[0]);
    o.raw(",\n          \"server\": ");
    o.endpoint(c.endpoints[1]);
    o.raw(",\n          \"client_by\": ");
    o.raw(match c.client_by {
        ClientBy::Syn => "\"syn\"",
        ClientBy::SynAck => "\"syn_ack\"",
        ClientBy::KnownServer => "\"known_server\"",
        ClientBy::PortGuess => "\"port_guess\"",
    });
    o.raw(",\n          \"first_frame\": ");
    o.u64(c.first_frame);
    o.raw(",\n          \"last_frame\": ");
    o.u64(c.last_frame);
    o.raw(",\n          \"start\": ");
    o.time(c.start);
    o.raw(",\n          \"duration_ms\": ");
    o.ms(c.duration_ns());
    o.raw(",\n          \"vantage\": ");
    o.str(c.vantage.name());
    o.raw(",\n          \"handshake_rtt_ms\": ");
    o.opt_ms(c.handshake_rtt_ns());
    o.raw(",\n          \"syn_to_synack_ms\": ");
    o.opt_ms(c.syn_to_synack_ns);
    o.raw(",\n          \"synack_to_ack_ms\": ");
    o.opt_ms(c.synack_to_ack_ns);
    o.raw(",\n          \"rtt_ms\": ");
    o.rtt(path_rtt(c), &RTT_AT_ROW, "\n          }");
    o.raw(",\n          \"reused_port\": ");
    o.bool(c.reused_port);
    o.raw(",\n          \"icmp_errors\": ");
    match &c.icmp_errors {
        None => o.raw("null"),
        Some(e) => {
            o.raw("{\n            \"count\": ");
            o.u64(e.count);
            o.raw(",\n            \"first_frame\": ");
            o.u64(e.first_frame);
            o.raw(",\n            \"first\": ");
            o.str(e.first.name());
            o.raw(",\n            \"too_big_frame\": ");
            o.opt_u64(e.too_big_frame);
            o.raw(",\n            \"next_hop_mtu\": ");
            o.opt_u64(e.next_hop_mtu.map(u64::from));
            o.raw("\n          }");
        }
    }
    o.raw(",\n          \"client_to_server\": ");
    dir(&mut o, &c.dirs[0]);
    o.raw(",\n          \"server_to_client\": ");
    dir(&mut o, &c.dirs[1]);
    o.raw("\n        }");
}

/// A direction's object, its fields 12 spaces in.
fn dir(o: &mut Out<'_>, d: &DirSummary) {
    o.raw("{\n            \"packets\": ");
    o.u64(d.packets);
    o.raw(",\n            \"data_packets\": ");
    o.u64(d.data_packets);
    o.raw(",\n            \"bytes\": ");
    o.u64(d.bytes);
    o.raw(",\n            \"unique_bytes\": ");
    o.u64(d.unique_bytes);
    o.raw(",\n            \"isn\": ");
    o.opt_u64(d.isn.map(u64::from));
    o.raw(",\n            \"syn\": ");
    match d.syn {
        None => o.raw("null"),
        Some(s) => {
            o.raw("{\n              \"mss\": ");
            o.opt_u64(s.mss.map(u64::from));
            o.raw(",\n              \"wscale\": ");
            o.opt_u64(s.wscale.map(u64::from));
            o.raw(",\n              \"sack_permitted\": ");
            o.bool(s.sack_permitted);
            o.raw(",\n              \"timestamps\": ");
            o.bool(s.timestamps);
            // Written only when true (docs/json.md).
            if d.syn_cut {
                o.raw(",\n              \"cut\": true");
            }
            o.raw("\n            }");
        }
    }
    o.raw(",\n            \"window_scale\": ");
    match d.wscale {
        Some(WindowScale::Shift(s)) => o.u64(u64::from(s)),
        Some(WindowScale::NotNegotiated) => o.raw("\"not_negotiated\""),
        Some(WindowScale::Unknown) | None => o.raw("\"unknown\""),
    }
    o.raw(",\n            \"max_window_bytes\": ");
    o.opt_u64(d.max_window_bytes);
    o.raw(",\n            \"max_in_flight_bytes\": ");
    o.opt_u64(d.max_in_flight);
    o.raw(",\n            \"rtt_ack_ms\": ");
    o.rtt(d.rtt_ack, &RTT_AT_DIR, "\n            }");
    o.raw(",\n            \"rtt_ts_ms\": ");
    o.rtt(d.rtt_ts, &RTT_AT_DIR, "\n            }");
    let c = &d.counts;
    o.raw(",\n            \"retransmissions\": ");
    o.u64(c.retransmissions);
    o.raw(",\n            \"fast_retransmissions\": ");
    o.u64(c.fast_retransmissions);
    o.raw(",\n            \"spurious_retransmissions\": ");
    o.u64(c.spurious_retransmissions);
    o.raw(",\n            \"out_of_order\": ");
    o.u64(c.out_of_order);
    o.raw(",\n            \"dup_acks\": ");
    o.u64(c.dup_acks);
    o.raw(",\n            \"zero_windows\": ");
    o.u64(c.zero_windows);
    o.raw(",\n            \"zero_window_probes\": ");
    o.u64(c.zero_window_probes);
    o.raw(",\n            \"window_full\": ");
    o.u64(c.window_full);
    o.raw(",\n            \"window_updates\": ");
    o.u64(c.window_updates);
    o.raw(",\n            \"keep_alives\": ");
    o.u64(c.keep_alives);
    o.raw(",\n            \"dsacks\": ");
    o.u64(c.dsacks);
    o.raw(",\n            \"previous_segment_not_captured\": ");
    o.u64(c.previous_segment_not_captured);
    o.raw(",\n            \"acked_unseen\": ");
    o.u64(c.acked_unseen);
    o.raw(",\n            \"capture_duplicates\": ");
    o.u64(c.capture_duplicates);
    o.raw(",\n            \"limited_ms\": {\n              \"rwnd\": ");
    o.ms(d.limits.rwnd_ns);
    o.raw(",\n              \"zero_window\": ");
    o.ms(d.limits.zero_window_ns);
    o.raw(",\n              \"sender\": ");
    o.ms(d.limits.sender_ns);
    o.raw(",\n              \"app\": ");
    o.ms(d.limits.app_ns);
    o.raw("\n            },\n            \"fin\": ");
    o.bool(d.fin);
    o.raw(",\n            \"rst\": ");
    o.bool(d.rst);
    o.raw("\n          }");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flows::json_conn;
    use tcpwhy_capture::IcmpErrorKind;
    use tcpwhy_track::{LimitTimes, SegmentCounts, SynOptions, Vantage};

    /// The row as serde_json writes it through the document's pretty formatter.
    fn by_serde(c: &ConnSummary, first: bool) -> String {
        let sep: &[u8] = if first { b"\n        " } else { b",\n        " };
        let mut v = sep.to_vec();
        crate::json::to_writer_pretty_at(&mut v, &json_conn(c), 4).unwrap();
        String::from_utf8(v).unwrap()
    }

    fn by_hand(c: &ConnSummary, first: bool) -> String {
        let mut v = Vec::new();
        write_row(&mut v, c, first);
        String::from_utf8(v).unwrap()
    }

    /// Every row of every public capture, written both ways, as the first row and after
    /// another: the same text.
    #[test]
    fn rows_of_the_public_captures_are_serde_jsons_bytes() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/captures/public");
        let (mut files, mut rows) = (0, 0);
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.to_string_lossy().into_owned();
            if !(name.ends_with(".pcap") || name.ends_with(".pcapng")) {
                continue;
            }
            let Ok(report) = tcpwhy_pipeline::flows(&name, &Default::default()) else {
                continue;
            };
            files += 1;
            for c in report.connections.iter() {
                let c = c.unwrap();
                for first in [true, false] {
                    assert_eq!(by_hand(&c, first), by_serde(&c, first), "{name}");
                }
                rows += 1;
            }
        }
        // The corpus holds 59 captures with 859 connections (when this was written): a
        // test that compared nothing would fail here.
        assert!(files >= 59 && rows >= 859, "{files} files, {rows} rows");
    }

    fn counts(v: u64) -> SegmentCounts {
        SegmentCounts {
            retransmissions: v,
            fast_retransmissions: v,
            spurious_retransmissions: v,
            out_of_order: v,
            dup_acks: v,
            zero_windows: v,
            zero_window_probes: v,
            window_full: v,
            window_updates: v,
            keep_alives: v,
            dsacks: v,
            previous_segment_not_captured: v,
            acked_unseen: v,
            capture_duplicates: v,
        }
    }

    fn rtt(ns: u64) -> RttStats {
        RttStats {
            samples: ns,
            min_ns: ns,
            median_ns: ns / 3,
            p95_ns: ns.saturating_add(499),
            max_ns: ns.saturating_add(500),
        }
    }

    /// A direction with `v` in every integer and `ns` in every time.
    fn dir(
        v: u64,
        ns: u64,
        syn: Option<SynOptions>,
        cut: bool,
        w: Option<WindowScale>,
    ) -> DirSummary {
        DirSummary {
            packets: v,
            data_packets: v,
            bytes: v,
            unique_bytes: v,
            isn: Some(v as u32),
            syn,
            syn_cut: cut,
            wscale: w,
            max_window_bytes: Some(v),
            max_in_flight: (v % 2 == 0).then_some(v),
            rtt_ack: Some(rtt(ns)),
            rtt_ts: (ns % 2 == 1).then(|| rtt(ns / 7)),
            counts: counts(v),
            limits: LimitTimes {
                rwnd_ns: ns,
                zero_window_ns: ns / 10,
                sender_ns: ns.saturating_mul(3),
                app_ns: ns / 1000,
            },
            window_floor: (v % 2 == 1).then_some(v),
            scale_floor: (v % 2 == 1).then_some((v, 3)),
            fin: v % 2 == 0,
            rst: v % 3 == 0,
        }
    }

    /// Extremes and every variant: 0 and u64::MAX counts, times from 0 ns to u64::MAX
    /// ns (floats from 0.0 through the exponent form zmij switches to), rounding of
    /// half microseconds, IPv6 and IPv4 endpoints, every client_by, vantage, window
    /// scale and SYN option shape, `cut` present and absent.
    #[test]
    fn edge_values_are_serde_jsons_bytes() {
        let times = [
            0,
            1,
            499,
            500,
            1_500,
            999_999,
            1_000_000,
            123_456_789,
            9_007_199_254_740_993,
            1 << 62,
            u64::MAX / 3,
            u64::MAX,
        ];
        let values = [
            0,
            1,
            255,
            65_535,
            u64::from(u32::MAX),
            u64::MAX - 1,
            u64::MAX,
        ];
        let syns = [
            None,
            Some(SynOptions::default()),
            Some(SynOptions {
                mss: Some(u16::MAX),
                wscale: Some(u8::MAX),
                sack_permitted: true,
                timestamps: true,
            }),
        ];
        let scales = [
            None,
            Some(WindowScale::Unknown),
            Some(WindowScale::NotNegotiated),
            Some(WindowScale::Shift(0)),
            Some(WindowScale::Shift(14)),
        ];
        let bys = [
            ClientBy::Syn,
            ClientBy::SynAck,
            ClientBy::KnownServer,
            ClientBy::PortGuess,
        ];
        let vantages = [
            Vantage::Client,
            Vantage::Server,
            Vantage::Middle,
            Vantage::Unknown,
        ];
        let addrs: [IpAddr; 3] = [
            IpAddr::from([0, 0, 0, 0]),
            IpAddr::from([255, 255, 255, 255]),
            "2001:db8::ffff:1.2.3.4".parse().unwrap(),
        ];
        let mut n = 0usize;
        for (i, &ns) in times.iter().enumerate() {
            for (j, &v) in values.iter().enumerate() {
                let k = i * values.len() + j;
                let pick = |len: usize, salt: usize| (k + salt) % len;
                let c = ConnSummary {
                    stream: v,
                    endpoints: [
                        Endpoint {
                            addr: addrs[pick(3, 0)],
                            port: v as u16,
                        },
                        Endpoint {
                            addr: addrs[pick(3, 1)],
                            port: u16::MAX,
                        },
                    ],
                    client_by: bys[pick(4, 0)],
                    first_frame: v,
                    last_frame: v,
                    start: Timestamp::from_nanos(
                        [i64::MIN, -1, 0, 5, 1_795_556_566_158_753_000, i64::MAX][pick(6, 1)],
                    ),
                    end: Timestamp::from_nanos([i64::MAX, 0, 1_500, i64::MIN][pick(4, 2)]),
                    dirs: [
                        dir(v, ns, syns[pick(3, 0)], k % 2 == 0, scales[pick(5, 0)]),
                        dir(!v, ns / 2, syns[pick(3, 1)], k % 3 == 0, scales[pick(5, 2)]),
                    ],
                    // Two halves that cannot overflow when handshake_rtt_ns adds them.
                    syn_to_synack_ns: (k % 4 != 0).then_some(ns / 2),
                    synack_to_ack_ns: (k % 5 != 0).then_some(ns / 3),
                    vantage: vantages[pick(4, 3)],
                    reused_port: k % 2 == 1,
                    continuation: false,
                    icmp_errors: (k % 3 != 0).then_some(tcpwhy_track::IcmpErrors {
                        count: v,
                        first_frame: v,
                        first: [
                            IcmpErrorKind::FragmentationNeeded,
                            IcmpErrorKind::TimeExceeded,
                        ][pick(2, 0)],
                        too_big_frame: (k % 2 == 0).then_some(v),
                        next_hop_mtu: (k % 4 != 1).then_some(v as u32),
                    }),
                };
                assert_eq!(by_hand(&c, k % 2 == 0), by_serde(&c, k % 2 == 0), "{k}");
                n += 1;
            }
        }
        assert_eq!(n, times.len() * values.len());
    }

    /// Floats the document cannot hold are `null`, as serde_json writes them; finite
    /// ones are zmij's text, as serde_json's.
    #[test]
    fn floats_as_serde_json_writes_them() {
        let mut x = 0x9e37_79b9_7f4a_7c15_u64;
        let mut cases = vec![f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -0.0, 0.0, 1e-7];
        for _ in 0..10_000 {
            // xorshift: spread over all magnitudes, as microseconds and as raw bits.
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            cases.push(ns_to_ms(x >> (x % 64)));
            cases.push(f64::from_bits(x));
        }
        for v in cases {
            let mut buf = Vec::new();
            Out(&mut buf).f64(v);
            assert_eq!(
                String::from_utf8(buf).unwrap(),
                serde_json::to_string(&v).unwrap()
            );
        }
        assert_eq!(serde_json::to_string(&f64::NAN).unwrap(), "null");
    }

    /// Milliseconds written from integers are zmij's text for the same float: every
    /// value to 0.2 s, the half-microsecond edges, and random ones of every magnitude
    /// (past [`EXACT_MS_NS`] the float path itself).
    #[test]
    fn milliseconds_as_zmij_writes_them() {
        let via_float = |ns: u64| {
            let mut buf = Vec::new();
            Out(&mut buf).f64(ns_to_ms(ns));
            buf
        };
        let by_hand = |ns: u64| {
            let mut buf = Vec::new();
            Out(&mut buf).ms(ns);
            buf
        };
        let mut cases: Vec<u64> = (0..200_000).collect();
        for us in [1u64, 999, 1_000, 123_456_789, (EXACT_MS_NS / 1000) - 1] {
            cases.extend([
                us * 1000 - 501,
                us * 1000 - 500,
                us * 1000 + 499,
                us * 1000 + 500,
            ]);
        }
        cases.extend([EXACT_MS_NS - 1, EXACT_MS_NS, u64::MAX]);
        let mut x = 0x2545_f491_4f6c_dd1d_u64;
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            cases.push(x >> (x % 64));
        }
        for ns in cases {
            assert_eq!(
                String::from_utf8(by_hand(ns)).unwrap(),
                String::from_utf8(via_float(ns)).unwrap(),
                "{ns}"
            );
        }
        assert_eq!(by_hand(1_234_567), b"1.235");
        assert_eq!(by_hand(0), b"0.0");
        assert_eq!(by_hand(5_000_000), b"5.0");
        assert_eq!(by_hand(1_500), b"0.002");
    }

    /// Text with bytes JSON must escape (a quote, a backslash, control characters, as a
    /// file name could hold) goes through serde_json's escaping; plain text as is.
    #[test]
    fn strings_as_serde_json_writes_them() {
        for s in [
            "",
            "10.0.0.1:443",
            "a\"b",
            "back\\slash",
            "tab\tnew\nline\r",
            "\u{1}\u{1f}\u{7f}",
            "µs ünïcode",
            "\"",
        ] {
            let mut buf = b"x".to_vec();
            Out(&mut buf).str(s);
            assert_eq!(
                String::from_utf8(buf).unwrap(),
                format!("x{}", serde_json::to_string(s).unwrap()),
                "{s:?}"
            );
        }
    }
}
