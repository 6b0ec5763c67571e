//! Legacy pcap: the 24-byte global header and the per-packet records, µs or ns, either
//! byte order, and Kuznetzov's "modified" variant with 24-byte record headers.
//!
//! Record parsing goes through pcap-parser; this module adds what it leaves to callers:
//! a bound on the captured length before waiting for that many bytes, the big-endian
//! modified magic, and conversion to our frame metadata.

use crate::bounds::MAX_CAPTURED_LEN;
use crate::format::{ByteOrder, RecordMeta, Step};
use crate::frame::{LinkType, Timestamp};
use crate::reader::FileFormat;
use pcap_parser::{parse_pcap_frame, parse_pcap_frame_be, parse_pcap_frame_modified};

/// Size of the global header (magic, version, thiszone, sigfigs, snaplen, network).
pub(crate) const GLOBAL_HEADER_LEN: usize = 24;
/// Whether a record's fraction of a second, in units of `nanos_per_frac` ns, is a second
/// or more (see `PcapParser::timestamp`).
#[inline(always)]
fn frac_out_of_range(frac: u32, nanos_per_frac: u64) -> bool {
    u64::from(frac) * nanos_per_frac >= 1_000_000_000
}

/// Record header: ts_sec, ts_frac, caplen, orig_len.
const RECORD_HEADER_LEN: usize = 16;
/// Modified pcap adds ifindex (4), protocol (2), pkt_type (1) and padding (1).
const MODIFIED_RECORD_HEADER_LEN: usize = 24;
/// Offset of caplen in a record header.
const CAPLEN_OFFSET: usize = 8;

/// Magic numbers as read little-endian from the first four bytes.
const MAGIC_MICROS: u32 = 0xa1b2_c3d4;
const MAGIC_NANOS: u32 = 0xa1b2_3c4d;
const MAGIC_MODIFIED: u32 = 0xa1b2_cd34;

/// The low 16 bits of the header's network field are the LINKTYPE; the high bits carry
/// FCS information (pcap spec §"LinkType and additional information").
const LINKTYPE_MASK: u32 = 0xffff;

/// What the magic number says, if it is a pcap magic.
pub(crate) fn sniff(magic: [u8; 4]) -> Option<FileFormat> {
    let le = u32::from_le_bytes(magic);
    let be = u32::from_be_bytes(magic);
    let (value, big_endian) = if matches!(le, MAGIC_MICROS | MAGIC_NANOS | MAGIC_MODIFIED) {
        (le, false)
    } else if matches!(be, MAGIC_MICROS | MAGIC_NANOS | MAGIC_MODIFIED) {
        (be, true)
    } else {
        return None;
    };
    Some(FileFormat::Pcap {
        nanosecond: value == MAGIC_NANOS,
        big_endian,
        modified: value == MAGIC_MODIFIED,
    })
}

/// A classic record found by [`PcapParser::plain_record`]: `record_len` bytes, the
/// captured ones after the 16-byte header.
#[derive(Copy, Clone, Debug)]
pub(crate) struct PlainRecord {
    pub record_len: usize,
    pub meta: RecordMeta,
}

/// The header's length before a [`PlainRecord`]'s captured bytes.
pub(crate) const PLAIN_HEADER_LEN: usize = RECORD_HEADER_LEN;

/// State for reading records after the global header.
#[derive(Debug)]
pub(crate) struct PcapParser {
    pub(crate) order: ByteOrder,
    modified: bool,
    /// Nanoseconds per unit of the record's fraction field: 1000 (µs) or 1 (ns).
    nanos_per_frac: u64,
    link: LinkType,
    /// The header's snaplen and network fields as written, for a writer that describes
    /// the same interface in pcapng (`crate::annotate`).
    pub(crate) snaplen: u32,
    pub(crate) network: u32,
}

impl PcapParser {
    /// Parses the global header (`header` holds at least [`GLOBAL_HEADER_LEN`] bytes and
    /// starts with a magic [`sniff`] accepted). Reading ignores the snaplen field: only each
    /// record's caplen matters, and writers put 0 or nonsense there.
    pub(crate) fn new(format: FileFormat, header: &[u8]) -> PcapParser {
        let (nanosecond, big_endian, modified) = match format {
            FileFormat::Pcap {
                nanosecond,
                big_endian,
                modified,
            } => (nanosecond, big_endian, modified),
            FileFormat::PcapNg => (false, false, false),
        };
        let order = if big_endian {
            ByteOrder::Big
        } else {
            ByteOrder::Little
        };
        // pcap-parser reads the header too, but not the big-endian modified magic; the
        // only field we need is the link type, at a fixed place.
        const SNAPLEN_OFFSET: usize = 16;
        const NETWORK_OFFSET: usize = 20;
        let network = order.u32_at(header, NETWORK_OFFSET);
        PcapParser {
            order,
            modified,
            nanos_per_frac: if nanosecond { 1 } else { 1_000 },
            link: LinkType::from_linktype(network & LINKTYPE_MASK),
            snaplen: order.u32_at(header, SNAPLEN_OFFSET),
            network,
        }
    }

    /// The record at the start of `window` when it is a classic (not modified) record
    /// wholly in the window with a captured length within bounds: its length, captured
    /// bytes and metadata, read straight from its 16-byte header. `None` for anything
    /// else, which [`Self::step`] then reads or reports. The reader's path for a capture
    /// in memory: the `Step` it saves, and the enum matches and copies around it, were
    /// ≈ 100 of the 195 instructions a frame took to read (callgrind).
    #[inline(always)]
    pub(crate) fn plain_record(&self, window: &[u8]) -> Option<PlainRecord> {
        if self.modified {
            return None;
        }
        let header: &[u8; RECORD_HEADER_LEN] = window.get(..RECORD_HEADER_LEN)?.try_into().ok()?;
        // ts_sec, ts_frac, caplen, orig_len; the byte order tested once for all four.
        let le = |at: usize| {
            u32::from_le_bytes([header[at], header[at + 1], header[at + 2], header[at + 3]])
        };
        let [secs, frac, caplen, orig_len] = [le(0), le(4), le(CAPLEN_OFFSET), le(12)];
        let [secs, frac, caplen, orig_len] = match self.order {
            ByteOrder::Little => [secs, frac, caplen, orig_len],
            ByteOrder::Big => [secs, frac, caplen, orig_len].map(u32::swap_bytes),
        };
        if caplen > MAX_CAPTURED_LEN {
            return None;
        }
        // Bounded above, so this cannot overflow.
        let record_len = RECORD_HEADER_LEN + caplen as usize;
        if window.len() < record_len {
            return None;
        }
        Some(PlainRecord {
            record_len,
            meta: RecordMeta {
                ts: self.timestamp(secs, frac),
                ts_untrusted: frac_out_of_range(frac, self.nanos_per_frac),
                link: self.link,
                interface: 0,
                orig_len,
            },
        })
    }

    /// Looks at the record at the start of `window`.
    #[inline]
    pub(crate) fn step(&self, window: &[u8]) -> Step {
        let header_len = if self.modified {
            MODIFIED_RECORD_HEADER_LEN
        } else {
            RECORD_HEADER_LEN
        };
        if window.len() < header_len {
            return Step::NeedBytes(header_len);
        }
        let caplen = self.order.u32_at(window, CAPLEN_OFFSET);
        if caplen > MAX_CAPTURED_LEN {
            return Step::Damaged(format!(
                "record claims {caplen} captured bytes (more than the {MAX_CAPTURED_LEN}-byte bound)"
            ));
        }
        // Bounded above, so this cannot overflow.
        let record_len = header_len + caplen as usize;
        if window.len() < record_len {
            return Step::NeedBytes(record_len);
        }
        let record = &window[..record_len];
        let parsed = match (self.modified, self.order) {
            (false, ByteOrder::Little) => parse_pcap_frame(record),
            (false, ByteOrder::Big) => parse_pcap_frame_be(record),
            (true, ByteOrder::Little) => parse_pcap_frame_modified(record),
            (true, ByteOrder::Big) => return self.step_modified_be(record, caplen),
        };
        match parsed {
            Ok((_, block)) => Step::Packet {
                record_len,
                data_start: header_len,
                data_len: block.data.len(),
                meta: RecordMeta {
                    ts: self.timestamp(block.ts_sec, block.ts_usec),
                    ts_untrusted: frac_out_of_range(block.ts_usec, self.nanos_per_frac),
                    link: self.link,
                    interface: 0,
                    orig_len: block.origlen,
                },
            },
            // Lengths were checked above; anything else is pcap-parser disagreeing.
            Err(e) => Step::Damaged(format!("unreadable pcap record: {e:?}")),
        }
    }

    /// Seconds are unsigned (as libpcap reads them today). A fraction of a second out of
    /// range (µs ≥ 10^6, ns ≥ 10^9; Wireshark shows it as written, up to 71 minutes
    /// ahead) is dropped: the frame is at its whole second and marked
    /// ([`frac_out_of_range`], `Frame::ts_untrusted`), never rejected.
    #[inline]
    fn timestamp(&self, secs: u32, frac: u32) -> Timestamp {
        const NANOS_PER_SEC: i64 = 1_000_000_000;
        let frac_nanos = u64::from(frac) * self.nanos_per_frac;
        // Below 10^9, or dropped.
        let frac_nanos = if frac_nanos < NANOS_PER_SEC as u64 {
            frac_nanos as i64
        } else {
            0
        };
        Timestamp(
            i64::from(secs)
                .saturating_mul(NANOS_PER_SEC)
                .saturating_add(frac_nanos),
        )
    }

    /// The modified format written on a big-endian host, which pcap-parser does not read.
    fn step_modified_be(&self, record: &[u8], caplen: u32) -> Step {
        let ts_sec = self.order.u32_at(record, 0);
        let ts_usec = self.order.u32_at(record, 4);
        let orig_len = self.order.u32_at(record, 12);
        Step::Packet {
            record_len: record.len(),
            data_start: MODIFIED_RECORD_HEADER_LEN,
            data_len: caplen as usize,
            meta: RecordMeta {
                ts: self.timestamp(ts_sec, ts_usec),
                ts_untrusted: frac_out_of_range(ts_usec, self.nanos_per_frac),
                link: self.link,
                interface: 0,
                orig_len,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(magic: [u8; 4], big: bool, link: u32) -> Vec<u8> {
        let mut h = magic.to_vec();
        let w16 = |v: u16| {
            if big {
                v.to_be_bytes()
            } else {
                v.to_le_bytes()
            }
        };
        let w32 = |v: u32| {
            if big {
                v.to_be_bytes()
            } else {
                v.to_le_bytes()
            }
        };
        h.extend_from_slice(&w16(2));
        h.extend_from_slice(&w16(4));
        h.extend_from_slice(&w32(0));
        h.extend_from_slice(&w32(0));
        h.extend_from_slice(&w32(0)); // snaplen 0: must not matter
        h.extend_from_slice(&w32(link));
        h
    }

    #[test]
    fn big_endian_nanosecond_record() {
        let magic = MAGIC_NANOS.to_be_bytes();
        let format = sniff(magic).unwrap();
        assert_eq!(
            format,
            FileFormat::Pcap {
                nanosecond: true,
                big_endian: true,
                modified: false
            }
        );
        let p = PcapParser::new(format, &header(magic, true, 1));
        let mut rec = Vec::new();
        for v in [1_700_000_000u32, 123_456_789, 3, 60] {
            rec.extend_from_slice(&v.to_be_bytes());
        }
        rec.extend_from_slice(&[0xaa, 0xbb, 0xcc]);
        match p.step(&rec) {
            Step::Packet {
                record_len,
                data_start,
                data_len,
                meta,
            } => {
                assert_eq!((record_len, data_start, data_len), (19, 16, 3));
                assert_eq!(meta.ts.nanos(), 1_700_000_000_123_456_789);
                assert_eq!(meta.orig_len, 60);
                assert_eq!(meta.link, LinkType::Ethernet);
            }
            other => panic!("{other:?}"),
        }
        // Cut one byte short: the parser asks for the whole record.
        assert!(matches!(p.step(&rec[..18]), Step::NeedBytes(19)));
    }

    /// A fraction of a second out of range (2,100,000 µs; 10^9 ns) is dropped and the
    /// frame marked; the largest in-range one is kept, unmarked.
    #[test]
    fn out_of_range_fraction_is_dropped_and_marked() {
        for (nanos, frac, ts, untrusted) in [
            (false, 2_100_000u32, 1_700_000_000_000_000_000i64, true),
            (false, 999_999, 1_700_000_000_999_999_000, false),
            (true, 1_000_000_000, 1_700_000_000_000_000_000, true),
            (true, 999_999_999, 1_700_000_000_999_999_999, false),
        ] {
            let magic = if nanos { MAGIC_NANOS } else { MAGIC_MICROS };
            let p = PcapParser::new(
                sniff(magic.to_le_bytes()).unwrap(),
                &header(magic.to_le_bytes(), false, 1),
            );
            let mut rec = Vec::new();
            for v in [1_700_000_000u32, frac, 1, 1] {
                rec.extend_from_slice(&v.to_le_bytes());
            }
            rec.push(0);
            let meta = p.plain_record(&rec).unwrap().meta;
            assert_eq!(
                (meta.ts.nanos(), meta.ts_untrusted),
                (ts, untrusted),
                "{frac}"
            );
            match p.step(&rec) {
                Step::Packet { meta: m, .. } => {
                    assert_eq!((m.ts, m.ts_untrusted), (meta.ts, untrusted))
                }
                other => panic!("{other:?}"),
            }
        }
    }

    /// The in-place read of a classic record agrees with `step`, in either byte order,
    /// and leaves to `step` a record cut short, one over the length bound, and the
    /// modified format.
    #[test]
    fn plain_record_agrees_with_step_and_leaves_the_rest_to_it() {
        for big in [false, true] {
            let magic = if big {
                MAGIC_MICROS.to_be_bytes()
            } else {
                MAGIC_MICROS.to_le_bytes()
            };
            let p = PcapParser::new(sniff(magic).unwrap(), &header(magic, big, 1));
            let mut rec = Vec::new();
            for v in [1_700_000_000u32, 654_321, 3, 1514] {
                rec.extend_from_slice(&if big {
                    v.to_be_bytes()
                } else {
                    v.to_le_bytes()
                });
            }
            rec.extend_from_slice(&[0xaa, 0xbb, 0xcc, 0xdd]);
            let r = p.plain_record(&rec).unwrap();
            assert_eq!(r.record_len, 19);
            assert_eq!(r.meta.ts.nanos(), 1_700_000_000_654_321_000);
            assert_eq!((r.meta.orig_len, r.meta.link), (1514, LinkType::Ethernet));
            match p.step(&rec) {
                Step::Packet {
                    record_len, meta, ..
                } => assert_eq!((record_len, meta.ts, meta.orig_len), (19, r.meta.ts, 1514)),
                other => panic!("{other:?}"),
            }
            assert!(p.plain_record(&rec[..18]).is_none());
            assert!(p.plain_record(&rec[..15]).is_none());
            let over = MAX_CAPTURED_LEN + 1;
            rec[8..12].copy_from_slice(&if big {
                over.to_be_bytes()
            } else {
                over.to_le_bytes()
            });
            assert!(p.plain_record(&rec).is_none());
        }
        let magic = MAGIC_MODIFIED.to_le_bytes();
        let p = PcapParser::new(sniff(magic).unwrap(), &header(magic, false, 1));
        assert!(p.plain_record(&[0; 64]).is_none());
    }

    #[test]
    fn absurd_caplen_is_damage_not_a_wait() {
        let magic = MAGIC_MICROS.to_le_bytes();
        let p = PcapParser::new(sniff(magic).unwrap(), &header(magic, false, 1));
        let mut rec = Vec::new();
        for v in [0u32, 0, 0xea00_000d, 60] {
            rec.extend_from_slice(&v.to_le_bytes());
        }
        assert!(matches!(p.step(&rec), Step::Damaged(_)));
    }

    #[test]
    fn modified_big_endian_record() {
        let magic = MAGIC_MODIFIED.to_be_bytes();
        let format = sniff(magic).unwrap();
        let p = PcapParser::new(format, &header(magic, true, 113));
        let mut rec = Vec::new();
        for v in [10u32, 20, 2, 2, 7, 0] {
            rec.extend_from_slice(&v.to_be_bytes());
        }
        rec.extend_from_slice(&[1, 2]);
        match p.step(&rec) {
            Step::Packet {
                data_start,
                data_len,
                meta,
                ..
            } => {
                assert_eq!((data_start, data_len), (24, 2));
                assert_eq!(meta.ts.nanos(), 10_000_020_000);
                assert_eq!(meta.link, LinkType::LinuxSll);
            }
            other => panic!("{other:?}"),
        }
    }
}
