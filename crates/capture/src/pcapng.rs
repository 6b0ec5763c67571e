//! pcapng: a walk over blocks, keeping per-section byte order and per-interface link type
//! and timestamp resolution; Enhanced, Simple and obsolete Packet Blocks become frames,
//! every other block is skipped.
//!
//! Section and interface blocks are parsed by pcap-parser. The packet blocks' fixed fields
//! are read here: pcap-parser's EPB parser builds a `Vec` of options for every packet
//! that has any (an allocation per frame on the hot path), and it has no parser for the
//! obsolete Packet Block (type 2) that old captures still contain. See PERF.md.

use crate::bounds::{MAX_BLOCK_LEN, MAX_CAPTURED_LEN, MAX_INTERFACES};
use crate::format::{ByteOrder, RecordMeta, Step, TickScale};
use crate::frame::{LinkType, Timestamp};
use pcap_parser::pcapng::{
    parse_interfacedescriptionblock_be, parse_interfacedescriptionblock_le,
    parse_sectionheaderblock,
};

// Block types (pcapng spec §4 and appendix).
/// Section Header Block; the value reads the same in both byte orders.
pub(crate) const SHB_TYPE: u32 = 0x0A0D_0D0A;
const IDB_TYPE: u32 = 0x0000_0001;
/// Obsolete Packet Block (spec appendix A), written by old Wireshark versions.
const PB_TYPE: u32 = 0x0000_0002;
const SPB_TYPE: u32 = 0x0000_0003;
const EPB_TYPE: u32 = 0x0000_0006;

/// Byte-order magic in the SHB body, written in the section's byte order.
const BYTE_ORDER_MAGIC: u32 = 0x1A2B_3C4D;
const SHB_BOM_OFFSET: usize = 8;
/// The only major version there is (spec §4.1); Wireshark refuses others too.
const SUPPORTED_MAJOR_VERSION: u16 = 1;

/// Every block: type (4), total length (4), body, total length again (4).
const BLOCK_OVERHEAD: usize = 12;
/// Smallest SHB: overhead + BOM (4) + versions (4) + section length (8).
const SHB_MIN_LEN: usize = 28;
/// EPB: overhead + interface id, ts high, ts low, caplen, orig len (5 × 4).
const EPB_MIN_LEN: usize = 32;
/// Obsolete PB: overhead + interface id (2), drops (2), ts high, ts low, caplen, orig len.
const PB_MIN_LEN: usize = 32;
/// SPB: overhead + orig len (4).
const SPB_MIN_LEN: usize = 16;
/// Where the packet bytes start in EPB and PB, and in SPB.
const EPB_DATA_OFFSET: usize = 28;
const SPB_DATA_OFFSET: usize = 12;

// IDB option codes (spec §4.2).
const OPT_IF_TSRESOL: u16 = 9;
const OPT_IF_TSOFFSET: u16 = 14;
/// Default resolution when an IDB has no if_tsresol: microseconds.
const DEFAULT_TSRESOL: u8 = 6;

#[derive(Copy, Clone, Debug)]
struct Interface {
    link: LinkType,
    /// 0 means "no limit".
    snaplen: u32,
    scale: TickScale,
    /// if_tsoffset in nanoseconds, added to every timestamp.
    offset_nanos: i64,
}

#[derive(Debug)]
pub(crate) struct PcapNgParser {
    order: ByteOrder,
    interfaces: Vec<Interface>,
    /// Simple Packet Blocks have no timestamp; they get the previous frame's.
    last_ts: Timestamp,
}

impl PcapNgParser {
    pub(crate) fn new() -> PcapNgParser {
        PcapNgParser {
            order: ByteOrder::Little,
            interfaces: Vec::new(),
            last_ts: Timestamp(0),
        }
    }

    /// Looks at the block at the start of `window`.
    pub(crate) fn step(&mut self, window: &[u8]) -> Step {
        if window.len() < BLOCK_OVERHEAD {
            return Step::NeedBytes(BLOCK_OVERHEAD);
        }
        let raw_type = ByteOrder::Little.u32_at(window, 0);
        // A new section may switch byte order: its SHB says which, in its BOM field.
        let order = if raw_type == SHB_TYPE {
            match ByteOrder::Little.u32_at(window, SHB_BOM_OFFSET) {
                BYTE_ORDER_MAGIC => ByteOrder::Little,
                m if m == BYTE_ORDER_MAGIC.swap_bytes() => ByteOrder::Big,
                m => {
                    return Step::Damaged(format!(
                        "section header with unknown byte-order magic {m:#010x}"
                    ))
                }
            }
        } else {
            self.order
        };
        let block_type = order.u32_at(window, 0);
        let block_len = order.u32_at(window, 4) as usize;
        let min_len = match block_type {
            SHB_TYPE => SHB_MIN_LEN,
            EPB_TYPE => EPB_MIN_LEN,
            PB_TYPE => PB_MIN_LEN,
            SPB_TYPE => SPB_MIN_LEN,
            _ => BLOCK_OVERHEAD,
        };
        if block_len < min_len {
            return Step::Damaged(format!(
                "block type {block_type:#x} is {block_len} bytes long, less than its minimum {min_len}"
            ));
        }
        if block_len % 4 != 0 {
            return Step::Damaged(format!("block length {block_len} is not a multiple of 4"));
        }
        if block_len > MAX_BLOCK_LEN {
            return Step::Damaged(format!(
                "block length {block_len} exceeds the {MAX_BLOCK_LEN}-byte bound"
            ));
        }
        if window.len() < block_len {
            return Step::NeedBytes(block_len);
        }
        let block = &window[..block_len];
        let trailing = order.u32_at(block, block_len - 4) as usize;
        if trailing != block_len {
            return Step::Damaged(format!(
                "block length {block_len} at the start but {trailing} at the end"
            ));
        }
        match block_type {
            SHB_TYPE => self.section(block, order),
            IDB_TYPE => self.interface(block),
            EPB_TYPE => self.enhanced_packet(block),
            PB_TYPE => self.obsolete_packet(block),
            SPB_TYPE => self.simple_packet(block),
            _ => Step::Skip(block_len),
        }
    }

    fn section(&mut self, block: &[u8], order: ByteOrder) -> Step {
        match parse_sectionheaderblock(block) {
            Ok((_, shb)) if shb.major_version == SUPPORTED_MAJOR_VERSION => {
                // Interfaces are numbered per section (spec §4.1).
                self.order = order;
                self.interfaces.clear();
                Step::Skip(block.len())
            }
            Ok((_, shb)) => Step::Damaged(format!(
                "unsupported pcapng version {}.{}",
                shb.major_version, shb.minor_version
            )),
            Err(e) => Step::Damaged(format!("unreadable section header block: {e:?}")),
        }
    }

    fn interface(&mut self, block: &[u8]) -> Step {
        if self.interfaces.len() >= MAX_INTERFACES {
            return Step::Damaged(format!(
                "more than {MAX_INTERFACES} interfaces in one section"
            ));
        }
        let parsed = match self.order {
            ByteOrder::Little => parse_interfacedescriptionblock_le(block),
            ByteOrder::Big => parse_interfacedescriptionblock_be(block),
        };
        let idb = match parsed {
            Ok((_, idb)) => idb,
            Err(e) => {
                return Step::Damaged(format!("unreadable interface description block: {e:?}"))
            }
        };
        // Options are read here rather than through pcap-parser's helpers, which read
        // if_tsoffset as little-endian in big-endian sections too.
        let mut tsresol = DEFAULT_TSRESOL;
        let mut offset_secs: i64 = 0;
        for opt in &idb.options {
            let value = opt.value();
            match opt.code.0 {
                OPT_IF_TSRESOL => {
                    if let Some(&b) = value.first() {
                        tsresol = b;
                    }
                }
                OPT_IF_TSOFFSET => {
                    if let Some(v) = value.get(..8) {
                        let mut b = [0u8; 8];
                        b.copy_from_slice(v);
                        offset_secs = match self.order {
                            ByteOrder::Little => i64::from_le_bytes(b),
                            ByteOrder::Big => i64::from_be_bytes(b),
                        };
                    }
                }
                _ => {}
            }
        }
        let Some(scale) = TickScale::from_tsresol(tsresol) else {
            return Step::Damaged(format!(
                "interface {} has timestamp resolution {tsresol:#x}, which does not fit 64 bits",
                self.interfaces.len()
            ));
        };
        const NANOS_PER_SEC: i64 = 1_000_000_000;
        self.interfaces.push(Interface {
            link: LinkType::from_linktype(u32::try_from(idb.linktype.0).unwrap_or(u32::MAX)),
            snaplen: idb.snaplen,
            scale,
            offset_nanos: offset_secs.saturating_mul(NANOS_PER_SEC),
        });
        Step::Skip(block.len())
    }

    fn lookup(&self, id: u32) -> Result<Interface, Step> {
        self.interfaces.get(id as usize).copied().ok_or_else(|| {
            Step::Damaged(format!(
                "packet on interface {id}, but the section describes only {}",
                self.interfaces.len()
            ))
        })
    }

    fn packet(
        &mut self,
        block: &[u8],
        iface_id: u32,
        ts_high: u32,
        ts_low: u32,
        caplen: u32,
        orig_len: u32,
    ) -> Step {
        let iface = match self.lookup(iface_id) {
            Ok(i) => i,
            Err(step) => return step,
        };
        // Room for data = block minus the fixed part and the trailing length.
        let room = block.len() - EPB_DATA_OFFSET - 4;
        if caplen > MAX_CAPTURED_LEN || caplen as usize > room {
            return Step::Damaged(format!(
                "packet block claims {caplen} captured bytes but holds at most {}",
                room.min(MAX_CAPTURED_LEN as usize)
            ));
        }
        let ticks = (u64::from(ts_high) << 32) | u64::from(ts_low);
        let ts = Timestamp(
            iface
                .scale
                .to_nanos(ticks)
                .saturating_add(iface.offset_nanos),
        );
        self.last_ts = ts;
        Step::Packet {
            record_len: block.len(),
            data_start: EPB_DATA_OFFSET,
            data_len: caplen as usize,
            meta: RecordMeta {
                ts,
                ts_untrusted: false,
                link: iface.link,
                interface: iface_id,
                orig_len,
            },
        }
    }

    fn enhanced_packet(&mut self, block: &[u8]) -> Step {
        let o = self.order;
        self.packet(
            block,
            o.u32_at(block, 8),
            o.u32_at(block, 12),
            o.u32_at(block, 16),
            o.u32_at(block, 20),
            o.u32_at(block, 24),
        )
    }

    fn obsolete_packet(&mut self, block: &[u8]) -> Step {
        let o = self.order;
        self.packet(
            block,
            u32::from(o.u16_at(block, 8)),
            o.u32_at(block, 12),
            o.u32_at(block, 16),
            o.u32_at(block, 20),
            o.u32_at(block, 24),
        )
    }

    /// SPB: always interface 0, no timestamp, no caplen: the captured length is the
    /// smallest of the original length, the interface snaplen and the room in the block
    /// (spec §4.4).
    fn simple_packet(&mut self, block: &[u8]) -> Step {
        let iface = match self.lookup(0) {
            Ok(i) => i,
            Err(step) => return step,
        };
        let orig_len = self.order.u32_at(block, 8);
        let room = block.len() - SPB_DATA_OFFSET - 4;
        let mut caplen = (orig_len as usize).min(room);
        if iface.snaplen != 0 {
            caplen = caplen.min(iface.snaplen as usize);
        }
        Step::Packet {
            record_len: block.len(),
            data_start: SPB_DATA_OFFSET,
            data_len: caplen,
            meta: RecordMeta {
                ts: self.last_ts,
                ts_untrusted: false,
                link: iface.link,
                interface: 0,
                orig_len,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Builds a block in the given byte order with its two length fields.
    fn block(order: ByteOrder, block_type: u32, body: &[u8]) -> Vec<u8> {
        let w = |v: u32| match order {
            ByteOrder::Little => v.to_le_bytes(),
            ByteOrder::Big => v.to_be_bytes(),
        };
        let mut body = body.to_vec();
        while body.len() % 4 != 0 {
            body.push(0);
        }
        let len = (body.len() + BLOCK_OVERHEAD) as u32;
        let mut b = w(block_type).to_vec();
        b.extend_from_slice(&w(len));
        b.extend_from_slice(&body);
        b.extend_from_slice(&w(len));
        b
    }

    fn shb(order: ByteOrder) -> Vec<u8> {
        let mut body = Vec::new();
        match order {
            ByteOrder::Little => {
                body.extend_from_slice(&BYTE_ORDER_MAGIC.to_le_bytes());
                body.extend_from_slice(&1u16.to_le_bytes());
                body.extend_from_slice(&0u16.to_le_bytes());
            }
            ByteOrder::Big => {
                body.extend_from_slice(&BYTE_ORDER_MAGIC.to_be_bytes());
                body.extend_from_slice(&1u16.to_be_bytes());
                body.extend_from_slice(&0u16.to_be_bytes());
            }
        }
        body.extend_from_slice(&(-1i64).to_le_bytes());
        block(order, SHB_TYPE, &body)
    }

    fn idb(order: ByteOrder, link: u16, tsresol: Option<u8>) -> Vec<u8> {
        let mut body = Vec::new();
        type Writers = (fn(u16) -> [u8; 2], fn(u32) -> [u8; 4]);
        let (w16, w32): Writers = match order {
            ByteOrder::Little => (u16::to_le_bytes, u32::to_le_bytes),
            ByteOrder::Big => (u16::to_be_bytes, u32::to_be_bytes),
        };
        body.extend_from_slice(&w16(link));
        body.extend_from_slice(&w16(0));
        body.extend_from_slice(&w32(0));
        if let Some(r) = tsresol {
            body.extend_from_slice(&w16(OPT_IF_TSRESOL));
            body.extend_from_slice(&w16(1));
            body.extend_from_slice(&[r, 0, 0, 0]);
            body.extend_from_slice(&w16(0)); // opt_endofopt
            body.extend_from_slice(&w16(0));
        }
        block(order, IDB_TYPE, &body)
    }

    fn epb(order: ByteOrder, iface: u32, ticks: u64, data: &[u8], orig: u32) -> Vec<u8> {
        let w32 = |v: u32| match order {
            ByteOrder::Little => v.to_le_bytes(),
            ByteOrder::Big => v.to_be_bytes(),
        };
        let mut body = Vec::new();
        body.extend_from_slice(&w32(iface));
        body.extend_from_slice(&w32((ticks >> 32) as u32));
        body.extend_from_slice(&w32(ticks as u32));
        body.extend_from_slice(&w32(data.len() as u32));
        body.extend_from_slice(&w32(orig));
        body.extend_from_slice(data);
        block(order, EPB_TYPE, &body)
    }

    /// (interface, link, timestamp ns, captured bytes) of one frame.
    type Seen = (u32, LinkType, i64, Vec<u8>);

    /// Runs the parser over a whole buffer.
    fn walk(bytes: &[u8]) -> Result<Vec<Seen>, String> {
        let mut p = PcapNgParser::new();
        let mut pos = 0;
        let mut out = Vec::new();
        loop {
            match p.step(&bytes[pos..]) {
                Step::Packet {
                    record_len,
                    data_start,
                    data_len,
                    meta,
                } => {
                    let d = &bytes[pos + data_start..pos + data_start + data_len];
                    out.push((meta.interface, meta.link, meta.ts.nanos(), d.to_vec()));
                    pos += record_len;
                }
                Step::Skip(n) => pos += n,
                Step::NeedBytes(_) if pos == bytes.len() => return Ok(out),
                Step::NeedBytes(n) => return Err(format!("truncated, need {n}")),
                Step::Damaged(why) => return Err(why),
            }
        }
    }

    #[test]
    fn two_sections_two_byte_orders_two_interfaces() {
        let mut f = shb(ByteOrder::Little);
        f.extend(idb(ByteOrder::Little, 1, None)); // Ethernet, µs
        f.extend(idb(ByteOrder::Little, 101, Some(9))); // raw IP, ns
        f.extend(epb(
            ByteOrder::Little,
            1,
            1_500_000_000_123_456_789,
            &[0x45],
            40,
        ));
        f.extend(epb(
            ByteOrder::Little,
            0,
            1_500_000_000_000_001,
            &[1, 2, 3],
            60,
        ));
        // Second section, big-endian: interface numbering starts again.
        f.extend(shb(ByteOrder::Big));
        f.extend(idb(ByteOrder::Big, 276, Some(0x80 | 20))); // SLL2, 2^-20 s
        f.extend(epb(ByteOrder::Big, 0, 3 << 20, &[9; 5], 5));
        let frames = walk(&f).unwrap();
        assert_eq!(frames.len(), 3);
        assert_eq!(
            frames[0],
            (1, LinkType::RawIp, 1_500_000_000_123_456_789, vec![0x45])
        );
        assert_eq!(
            frames[1],
            (
                0,
                LinkType::Ethernet,
                1_500_000_000_000_001_000,
                vec![1, 2, 3]
            )
        );
        assert_eq!(
            frames[2],
            (0, LinkType::LinuxSll2, 3_000_000_000, vec![9; 5])
        );
    }

    #[test]
    fn packet_on_undescribed_interface_is_damage() {
        let mut f = shb(ByteOrder::Little);
        f.extend(idb(ByteOrder::Little, 1, None));
        f.extend(epb(ByteOrder::Little, 3, 0, &[0], 1));
        assert!(walk(&f).unwrap_err().contains("interface 3"));
    }

    #[test]
    fn simple_packet_block_uses_interface_zero_and_orig_len() {
        let mut f = shb(ByteOrder::Little);
        f.extend(idb(ByteOrder::Little, 1, None));
        f.extend(epb(ByteOrder::Little, 0, 7, &[1], 1));
        let mut body = 3u32.to_le_bytes().to_vec(); // orig len 3, padded to 4
        body.extend_from_slice(&[0xa, 0xb, 0xc]);
        f.extend(block(ByteOrder::Little, SPB_TYPE, &body));
        let frames = walk(&f).unwrap();
        assert_eq!(
            frames[1],
            (0, LinkType::Ethernet, 7_000, vec![0xa, 0xb, 0xc])
        );
    }

    #[test]
    fn obsolete_packet_block_big_endian() {
        let mut f = shb(ByteOrder::Big);
        f.extend(idb(ByteOrder::Big, 113, None));
        f.extend(idb(ByteOrder::Big, 1, Some(3))); // milliseconds
        let mut body = Vec::new();
        body.extend_from_slice(&1u16.to_be_bytes()); // interface 1
        body.extend_from_slice(&0u16.to_be_bytes()); // drops
        for v in [0u32, 1_234, 2, 60] {
            body.extend_from_slice(&v.to_be_bytes());
        }
        body.extend_from_slice(&[0x45, 0x00]);
        f.extend(block(ByteOrder::Big, PB_TYPE, &body));
        // An unknown block in between is skipped, not a frame.
        f.extend(block(ByteOrder::Big, 0x0bad_cafe, &[1, 2, 3, 4]));
        f.extend(block(ByteOrder::Big, PB_TYPE, &body));
        let frames = walk(&f).unwrap();
        assert_eq!(frames.len(), 2);
        assert_eq!(
            frames[0],
            (1, LinkType::Ethernet, 1_234_000_000, vec![0x45, 0x00])
        );
    }

    #[test]
    fn bad_block_lengths_are_damage() {
        let mut f = shb(ByteOrder::Little);
        let mut bad = epb(ByteOrder::Little, 0, 0, &[0; 4], 4);
        bad[4] = 38; // not a multiple of 4
        f.extend(bad);
        assert!(walk(&f).unwrap_err().contains("multiple of 4"));
        let mut f = shb(ByteOrder::Little);
        f.extend_from_slice(&EPB_TYPE.to_le_bytes());
        f.extend_from_slice(&8u32.to_le_bytes());
        f.extend_from_slice(&8u32.to_le_bytes());
        assert!(walk(&f).unwrap_err().contains("minimum"));
        let mut f = shb(ByteOrder::Little);
        f.extend_from_slice(&EPB_TYPE.to_le_bytes());
        f.extend_from_slice(&0xffff_fff0u32.to_le_bytes());
        f.extend_from_slice(&[0; 4]);
        assert!(walk(&f).unwrap_err().contains("bound"));
    }
}
