//! Writing a capture back out as pcapng, frame for frame, with packet comments added: the
//! file `tcpwhy annotate` writes. Wireshark must number the frames, place them in time
//! and dissect them exactly as it does the input, so nothing of a frame is re-encoded
//! that need not be.
//!
//! - pcapng input: every block is copied byte for byte, in its section's byte order
//!   (interfaces with all their options, statistics, name resolution, decryption secrets,
//!   custom and unknown blocks). Only two kinds of block change: a packet block that gets
//!   comments (an `opt_comment` appended after the options it has, which are kept), and
//!   a section header, whose section length becomes "unknown" (−1, spec §4.1: the blocks
//!   in it changed size) and whose first one gets the caller's section comments.
//! - pcap input: one section and one interface with the header's link type and snaplen,
//!   `if_tsresol` 9 for a nanosecond file (µs, pcapng's default, otherwise), and an
//!   Enhanced Packet Block per record with the record's time in the file's own ticks,
//!   its captured bytes (a snaplen-cut frame stays cut) and its original length.
//!
//! Block and option layouts: the pcapng specification (draft-ietf-opsawg-pcapng), §3.1
//! (general block), §3.5 (options), §4.1 (SHB), §4.2 (IDB), §4.3 (EPB); the obsolete
//! Packet Block (appendix A) has the EPB's layout with a 16-bit interface id and options
//! where the EPB has them. A Simple Packet Block has no room for options: a comment for
//! one is counted in [`Rewritten::comments_not_placed`] instead.

use crate::bounds::MAX_BLOCK_LEN;
use crate::format::ByteOrder;
use crate::frame::Frame;
use crate::reader::{Capture, CaptureError, FileFormat, Record};
use std::io::{self, Write};

const SHB_TYPE: u32 = 0x0A0D_0D0A;
const IDB_TYPE: u32 = 0x0000_0001;
const PB_TYPE: u32 = 0x0000_0002;
const EPB_TYPE: u32 = 0x0000_0006;
const BYTE_ORDER_MAGIC: u32 = 0x1A2B_3C4D;

/// SHB: type, length, byte-order magic, major and minor version, then the section length.
const SHB_BOM_AT: usize = 8;
const SHB_SECTION_LENGTH_AT: usize = 16;
const SHB_OPTIONS_AT: usize = 24;
/// Section length −1: "not specified" (§4.1), as it must be once blocks changed size.
const SECTION_LENGTH_UNKNOWN: i64 = -1;
/// EPB and PB: the captured length's field and where the packet data starts.
const PACKET_CAPLEN_AT: usize = 20;
const PACKET_DATA_AT: usize = 28;
/// Every block ends with its length repeated.
const TRAILER_LEN: usize = 4;

// Option codes (§3.5, §4.1, §4.2).
const OPT_ENDOFOPT: u16 = 0;
const OPT_COMMENT: u16 = 1;
const OPT_SHB_USERAPPL: u16 = 4;
const OPT_IF_TSRESOL: u16 = 9;
/// if_tsresol for nanoseconds (10^-9 s); microseconds are the default and need no option.
const TSRESOL_NANOS: u8 = 9;
/// An option's value length is 16 bits; a longer comment is cut at a character boundary.
const MAX_OPTION_VALUE: usize = 0xfffc;
/// The low 16 bits of a pcap header's network field are the link type (pcap spec).
const LINKTYPE_MASK: u32 = 0xffff;

/// What a rewrite did.
#[derive(Debug, Default)]
pub struct Rewritten {
    /// Frames read from the input.
    pub frames_read: u64,
    /// Frames written (all of them unless the caller left some out).
    pub frames_written: u64,
    /// Packet comments added.
    pub comments: u64,
    /// Comments that could not be added: for a Simple Packet Block (no options), a
    /// packet block whose options are malformed, or one they would make longer than
    /// [`MAX_BLOCK_LEN`] (the block is written without them).
    pub comments_not_placed: u64,
    /// Where reading the input stopped early; the output holds every frame before it and
    /// is a complete pcapng file.
    pub error: Option<CaptureError>,
}

/// Writes `cap` to `out` as pcapng. `section_comments` go into the first section header.
/// For each frame, `frame` pushes the comments to add (none: the block is copied as it
/// is) and returns whether to write the frame at all. Every non-packet block of a pcapng
/// input is written, so interface ids stay valid however many frames are left out.
pub fn write_pcapng(
    cap: &mut Capture,
    out: &mut dyn Write,
    section_comments: &[String],
    frame: &mut dyn FnMut(&Frame<'_>, &mut Vec<String>) -> bool,
) -> io::Result<Rewritten> {
    let mut done = Rewritten::default();
    let pcap = cap.pcap_interface();
    let nanosecond = matches!(
        cap.format(),
        FileFormat::Pcap {
            nanosecond: true,
            ..
        }
    );
    if let Some(iface) = pcap {
        write_pcap_section(
            out,
            section_comments,
            iface.network,
            iface.snaplen,
            nanosecond,
        )?;
    }
    // The byte order of the pcapng section being copied, from its header.
    let mut order = ByteOrder::Little;
    let mut first_section = true;
    let mut comments: Vec<String> = Vec::new();
    loop {
        let record = match cap.next_record() {
            Ok(Some(r)) => r,
            Ok(None) => break,
            Err(e) => {
                done.error = Some(e);
                break;
            }
        };
        match record {
            Record::Block(raw) => {
                if ByteOrder::Little.u32_at(raw, 0) != SHB_TYPE {
                    out.write_all(raw)?;
                    continue;
                }
                order = match ByteOrder::Little.u32_at(raw, SHB_BOM_AT) {
                    BYTE_ORDER_MAGIC => ByteOrder::Little,
                    _ => ByteOrder::Big,
                };
                let add: &[String] = if first_section { section_comments } else { &[] };
                first_section = false;
                let unknown = match order {
                    ByteOrder::Little => SECTION_LENGTH_UNKNOWN.to_le_bytes(),
                    ByteOrder::Big => SECTION_LENGTH_UNKNOWN.to_be_bytes(),
                };
                let patch = (SHB_SECTION_LENGTH_AT, &unknown[..]);
                if !write_with_options(out, order, raw, SHB_OPTIONS_AT, add, Some(patch))? {
                    // Options the reader accepted but that do not walk: keep the block.
                    out.write_all(raw)?;
                }
            }
            Record::Packet { frame: f, raw } => {
                done.frames_read += 1;
                comments.clear();
                if !frame(&f, &mut comments) {
                    continue;
                }
                done.frames_written += 1;
                let n = comments.len() as u64;
                if let Some(iface) = &pcap {
                    // The record header's own seconds and fraction, not the reader's
                    // time: a fraction out of range (which the reader drops, see
                    // `Frame::ts_untrusted`) is copied as written, so tshark reads the
                    // same time from the output as from the input.
                    let unit: u64 = if nanosecond { 1_000_000_000 } else { 1_000_000 };
                    let secs = u64::from(iface.order.u32_at(raw, 0));
                    let frac = u64::from(iface.order.u32_at(raw, 4));
                    let ticks = secs.saturating_mul(unit).saturating_add(frac);
                    if write_epb(out, ticks, f.data, f.orig_len, &comments)? || n == 0 {
                        done.comments += n;
                    } else {
                        done.comments_not_placed += n;
                    }
                    continue;
                }
                if comments.is_empty() {
                    out.write_all(raw)?;
                    continue;
                }
                let placed = match order.u32_at(raw, 0) {
                    EPB_TYPE | PB_TYPE => {
                        let caplen = order.u32_at(raw, PACKET_CAPLEN_AT) as usize;
                        let options_at = PACKET_DATA_AT.saturating_add(pad4(caplen));
                        write_with_options(out, order, raw, options_at, &comments, None)?
                    }
                    _ => false,
                };
                if placed {
                    done.comments += n;
                } else {
                    out.write_all(raw)?;
                    done.comments_not_placed += n;
                }
            }
        }
    }
    if pcap.is_none() && first_section {
        // A pcapng input whose first section header could not be read: a header of our
        // own, so that the output is still a (frameless) pcapng file.
        write_shb(out, section_comments)?;
    }
    Ok(done)
}

/// `n` rounded up to a multiple of 4 (blocks and option values are 32-bit aligned).
fn pad4(n: usize) -> usize {
    n.saturating_add(3) & !3
}

/// A comment as an option value: at most [`MAX_OPTION_VALUE`] bytes, whole characters.
fn option_value(s: &str) -> &[u8] {
    let mut end = s.len().min(MAX_OPTION_VALUE);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s.as_bytes()[..end]
}

/// Bytes an option with this value takes.
fn option_len(value: &[u8]) -> usize {
    4 + pad4(value.len())
}

struct Out<'w> {
    w: &'w mut dyn Write,
    order: ByteOrder,
}

impl Out<'_> {
    fn u16(&mut self, v: u16) -> io::Result<()> {
        match self.order {
            ByteOrder::Little => self.w.write_all(&v.to_le_bytes()),
            ByteOrder::Big => self.w.write_all(&v.to_be_bytes()),
        }
    }
    fn u32(&mut self, v: u32) -> io::Result<()> {
        match self.order {
            ByteOrder::Little => self.w.write_all(&v.to_le_bytes()),
            ByteOrder::Big => self.w.write_all(&v.to_be_bytes()),
        }
    }
    /// `bytes` and the zeros that align them to 32 bits.
    fn padded(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.w.write_all(bytes)?;
        self.w
            .write_all(&[0u8; 3][..pad4(bytes.len()) - bytes.len()])
    }
    fn option(&mut self, code: u16, value: &[u8]) -> io::Result<()> {
        // option_value bounds the length to 16 bits.
        self.u16(code)?;
        self.u16(value.len() as u16)?;
        self.padded(value)
    }
    /// The options, then opt_endofopt when there were any (§3.5).
    fn options(&mut self, options: &[(u16, &[u8])]) -> io::Result<()> {
        for (code, value) in options {
            self.option(*code, value)?;
        }
        if !options.is_empty() {
            self.option(OPT_ENDOFOPT, &[])?;
        }
        Ok(())
    }
}

/// Length of an option list as [`Out::options`] writes it.
fn options_len(options: &[(u16, &[u8])]) -> usize {
    if options.is_empty() {
        return 0;
    }
    options.iter().map(|(_, v)| option_len(v)).sum::<usize>() + option_len(&[])
}

/// Total length of a block with a body of `body` bytes; `None` past the largest block
/// readers accept ([`MAX_BLOCK_LEN`], tcpwhy's own reader included).
fn block_len(body: usize) -> Option<u32> {
    let len = body.checked_add(8 + TRAILER_LEN)?;
    if len > MAX_BLOCK_LEN {
        return None;
    }
    u32::try_from(len).ok()
}

fn too_long() -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        "section or interface block over the block size bound",
    )
}

/// A section header of our own (little-endian), with `comments`.
fn write_shb(w: &mut dyn Write, comments: &[String]) -> io::Result<()> {
    let mut out = Out {
        w,
        order: ByteOrder::Little,
    };
    let app = format!("tcpwhy {} annotate", env!("CARGO_PKG_VERSION"));
    let mut options: Vec<(u16, &[u8])> = comments
        .iter()
        .map(|c| (OPT_COMMENT, option_value(c)))
        .collect();
    options.push((OPT_SHB_USERAPPL, app.as_bytes()));
    let len = block_len(16 + options_len(&options)).ok_or_else(too_long)?;
    out.u32(SHB_TYPE)?;
    out.u32(len)?;
    out.u32(BYTE_ORDER_MAGIC)?;
    out.u16(1)?;
    out.u16(0)?;
    out.w.write_all(&SECTION_LENGTH_UNKNOWN.to_le_bytes())?;
    out.options(&options)?;
    out.u32(len)
}

/// The section and interface a legacy pcap file becomes (little-endian).
fn write_pcap_section(
    w: &mut dyn Write,
    comments: &[String],
    network: u32,
    snaplen: u32,
    nanosecond: bool,
) -> io::Result<()> {
    write_shb(w, comments)?;
    let mut out = Out {
        w,
        order: ByteOrder::Little,
    };
    let tsresol = [TSRESOL_NANOS];
    let options: Vec<(u16, &[u8])> = if nanosecond {
        vec![(OPT_IF_TSRESOL, &tsresol[..])]
    } else {
        Vec::new()
    };
    let len = block_len(8 + options_len(&options)).ok_or_else(too_long)?;
    out.u32(IDB_TYPE)?;
    out.u32(len)?;
    // The link type is 16 bits in an IDB; the FCS bits above it in the pcap header have
    // no IDB field but if_fcslen, which Wireshark does not need to dissect TCP.
    out.u16((network & LINKTYPE_MASK) as u16)?;
    out.u16(0)?;
    out.u32(snaplen)?;
    out.options(&options)?;
    out.u32(len)
}

/// An Enhanced Packet Block on interface 0 (little-endian); without the comments (false)
/// when they would make it longer than [`MAX_BLOCK_LEN`].
fn write_epb(
    w: &mut dyn Write,
    ticks: u64,
    data: &[u8],
    orig_len: u32,
    comments: &[String],
) -> io::Result<bool> {
    let mut out = Out {
        w,
        order: ByteOrder::Little,
    };
    let comments_len: usize = comments.iter().map(|c| option_len(option_value(c))).sum();
    let options = if comments.is_empty() {
        0
    } else {
        comments_len + option_len(&[])
    };
    let (len, comments) = match block_len(20 + pad4(data.len()) + options) {
        Some(len) => (len, comments),
        None => (
            block_len(20 + pad4(data.len())).ok_or_else(too_long)?,
            &[][..],
        ),
    };
    out.u32(EPB_TYPE)?;
    out.u32(len)?;
    out.u32(0)?;
    out.u32((ticks >> 32) as u32)?;
    out.u32(ticks as u32)?;
    // The reader bounds a captured length far below 4 GiB.
    out.u32(data.len() as u32)?;
    out.u32(orig_len)?;
    out.padded(data)?;
    for c in comments {
        out.option(OPT_COMMENT, option_value(c))?;
    }
    if !comments.is_empty() {
        out.option(OPT_ENDOFOPT, &[])?;
    }
    out.u32(len)?;
    Ok(!comments.is_empty())
}

/// Writes the block `raw` (byte order `order`) with `comments` appended to its options,
/// which start at `options_at`, and `patch` (offset, bytes) applied to its fixed part.
/// Returns false, writing nothing, when its options do not walk to the end of the block
/// or the comments would make it longer than [`MAX_BLOCK_LEN`].
fn write_with_options(
    w: &mut dyn Write,
    order: ByteOrder,
    raw: &[u8],
    options_at: usize,
    comments: &[String],
    patch: Option<(usize, &[u8])>,
) -> io::Result<bool> {
    let end = raw.len().saturating_sub(TRAILER_LEN);
    let (Some(fixed), Some(existing)) = (raw.get(..options_at), raw.get(options_at..end)) else {
        return Ok(false);
    };
    // The options before opt_endofopt (or the end): kept as they are.
    let mut kept = 0;
    while kept + 4 <= existing.len() {
        let code = order.u16_at(existing, kept);
        if code == OPT_ENDOFOPT {
            break;
        }
        let next = kept + 4 + pad4(usize::from(order.u16_at(existing, kept + 2)));
        if next > existing.len() {
            return Ok(false);
        }
        kept = next;
    }
    let kept = &existing[..kept];
    let added: Vec<(u16, &[u8])> = comments
        .iter()
        .map(|c| (OPT_COMMENT, option_value(c)))
        .collect();
    let options = if added.is_empty() {
        // Nothing to add: the options exactly as they were.
        existing.len()
    } else {
        kept.len() + options_len(&added)
    };
    let Some(len) = block_len(options_at - 8 + options) else {
        return Ok(false);
    };
    let mut out = Out { w, order };
    out.w.write_all(&fixed[..4])?;
    out.u32(len)?;
    match patch {
        Some((at, bytes)) if at >= 8 && at + bytes.len() <= fixed.len() => {
            out.w.write_all(&fixed[8..at])?;
            out.w.write_all(bytes)?;
            out.w.write_all(&fixed[at + bytes.len()..])?;
        }
        _ => out.w.write_all(&fixed[8..])?,
    }
    if added.is_empty() {
        out.w.write_all(existing)?;
    } else {
        out.w.write_all(kept)?;
        out.options(&added)?;
    }
    out.u32(len)?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn le_pcap(nanosecond: bool, snaplen: u32, records: &[(u32, u32, &[u8], u32)]) -> Vec<u8> {
        let magic: u32 = if nanosecond { 0xa1b2_3c4d } else { 0xa1b2_c3d4 };
        let mut v = magic.to_le_bytes().to_vec();
        v.extend_from_slice(&2u16.to_le_bytes());
        v.extend_from_slice(&4u16.to_le_bytes());
        v.extend_from_slice(&[0; 8]);
        v.extend_from_slice(&snaplen.to_le_bytes());
        v.extend_from_slice(&101u32.to_le_bytes());
        for (secs, frac, data, orig) in records {
            v.extend_from_slice(&secs.to_le_bytes());
            v.extend_from_slice(&frac.to_le_bytes());
            v.extend_from_slice(&(data.len() as u32).to_le_bytes());
            v.extend_from_slice(&orig.to_le_bytes());
            v.extend_from_slice(data);
        }
        v
    }

    fn rewrite(input: Vec<u8>, section: &[String], comment_on: u64) -> (Vec<u8>, Rewritten) {
        let mut cap = Capture::from_bytes(input).unwrap();
        let mut out = Vec::new();
        let done = write_pcapng(&mut cap, &mut out, section, &mut |f, c| {
            if f.number == comment_on {
                c.push(format!("tcpwhy test: frame {}", f.number));
            }
            true
        })
        .unwrap();
        (out, done)
    }

    /// A frame's number, time, captured bytes, original length and link type.
    type Seen = (u64, i64, Vec<u8>, u32, u32);

    /// Every frame of `bytes` as the reader sees it.
    fn frames(bytes: Vec<u8>) -> Vec<Seen> {
        let mut cap = Capture::from_bytes(bytes).unwrap();
        let mut v = Vec::new();
        while let Some(f) = cap.next_frame().unwrap() {
            v.push((
                f.number,
                f.ts.nanos(),
                f.data.to_vec(),
                f.orig_len,
                f.link.number(),
            ));
        }
        v
    }

    #[test]
    fn nanosecond_pcap_keeps_times_lengths_and_cut_frames() {
        // Frame 2 was cut by a 20-byte snaplen: 20 bytes captured of 60.
        let input = le_pcap(
            true,
            20,
            &[
                (1_700_000_000, 123_456_789, &[0x45; 12], 12),
                (1_700_000_001, 5, &[0x45; 20], 60),
            ],
        );
        let (out, done) = rewrite(input.clone(), &["verdict".into()], 2);
        assert_eq!(
            (done.frames_read, done.frames_written, done.comments),
            (2, 2, 1)
        );
        assert!(done.error.is_none());
        assert_eq!(frames(out.clone()), frames(input));
        // The IDB says nanoseconds and the header's snaplen.
        let shb_len = u32::from_le_bytes(out[4..8].try_into().unwrap()) as usize;
        let idb = &out[shb_len..];
        assert_eq!(u32::from_le_bytes(idb[0..4].try_into().unwrap()), IDB_TYPE);
        assert_eq!(u16::from_le_bytes(idb[8..10].try_into().unwrap()), 101);
        assert_eq!(u32::from_le_bytes(idb[12..16].try_into().unwrap()), 20);
        assert_eq!(&idb[16..21], &[9, 0, 1, 0, 9]);
        // The comment is in the second EPB, as an opt_comment with its length.
        let text = b"tcpwhy test: frame 2";
        let at = out.windows(text.len()).position(|w| w == text).unwrap();
        assert_eq!(&out[at - 4..at], &[1, 0, text.len() as u8, 0]);
    }

    #[test]
    fn microsecond_pcap_gets_no_tsresol_and_the_same_times() {
        let input = le_pcap(false, 0, &[(1_600_000_000, 999_999, &[0x45; 3], 3)]);
        let (out, _) = rewrite(input.clone(), &[], 0);
        assert_eq!(frames(out), frames(input));
    }

    /// A fraction out of range is copied as written: tshark reads it literally, in the
    /// input and in the copy alike, so frame.time_epoch stays the same. The reader drops
    /// it from the input (`Frame::ts_untrusted`); the copy's EPB holds it in ticks.
    #[test]
    fn an_out_of_range_fraction_is_copied_as_written() {
        for (nanosecond, frac, unit) in [(true, 1_250_000_000, 1), (false, 1_500_000, 1_000)] {
            let input = le_pcap(nanosecond, 0, &[(10, frac, &[0x45; 3], 3)]);
            let (out, _) = rewrite(input.clone(), &[], 0);
            assert_eq!(frames(input)[0].1, 10_000_000_000);
            let literal = 10_000_000_000 + i64::from(frac) * unit;
            assert_eq!(frames(out)[0].1, literal);
        }
    }

    /// A big-endian pcapng block: type, length, body, length.
    fn be_block(block_type: u32, body: &[u8]) -> Vec<u8> {
        let len = (12 + body.len()) as u32;
        let mut v = block_type.to_be_bytes().to_vec();
        v.extend_from_slice(&len.to_be_bytes());
        v.extend_from_slice(body);
        v.extend_from_slice(&len.to_be_bytes());
        v
    }

    fn be_option(code: u16, value: &[u8]) -> Vec<u8> {
        let mut v = code.to_be_bytes().to_vec();
        v.extend_from_slice(&(value.len() as u16).to_be_bytes());
        v.extend_from_slice(value);
        v.resize(4 + pad4(value.len()), 0);
        v
    }

    /// Every frame the reader gets from `bytes` before the end or an error, and whether
    /// it stopped at an error.
    /// Every frame the reader gets before an error, and whether there was one. A frame
    /// whose pcap time fraction is out of range has the time `i64::MIN`: the reader drops
    /// such a fraction (`Frame::ts_untrusted`) and the writer copies it as written.
    fn readable(bytes: Vec<u8>) -> (Vec<Seen>, bool) {
        let Ok(mut cap) = Capture::from_bytes(bytes) else {
            return (Vec::new(), true);
        };
        let mut v = Vec::new();
        loop {
            match cap.next_frame() {
                Ok(Some(f)) => v.push((
                    f.number,
                    if f.ts_untrusted {
                        i64::MIN
                    } else {
                        f.ts.nanos()
                    },
                    f.data.to_vec(),
                    f.orig_len,
                    f.link.number(),
                )),
                Ok(None) => return (v, false),
                Err(_) => return (v, true),
            }
        }
    }

    /// Damaged inputs (bytes changed, files cut) of both formats: the output is a whole
    /// pcapng file that reads back without error, with exactly the frames the reader got
    /// from the input before the damage. The same property as the fuzz targets', on a
    /// fixed sequence of damages so that it runs with the tests.
    #[test]
    fn damaged_inputs_give_whole_files_with_the_frames_before_the_damage() {
        let pcap = le_pcap(
            true,
            64,
            &[
                (10, 1, &[0x45; 20], 60),
                (11, 2, &[0x45; 7], 7),
                (12, 3, &[0x45; 33], 33),
            ],
        );
        let bases = [pcap, big_endian_sample().0];
        // xorshift64: a fixed, spread-out sequence of positions and values.
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut rewritten = 0;
        for base in &bases {
            for _ in 0..20_000 {
                let mut b = base.clone();
                for _ in 0..1 + next() % 3 {
                    let at = (next() % b.len() as u64) as usize;
                    b[at] = next() as u8;
                }
                if next() % 4 == 0 {
                    b.truncate((next() % b.len() as u64) as usize);
                }
                let Ok(mut cap) = Capture::from_bytes(b.clone()) else {
                    continue;
                };
                let mut out = Vec::new();
                let comment = &mut |f: &Frame<'_>, c: &mut Vec<String>| {
                    if f.number % 2 == 1 {
                        c.push(format!("tcpwhy test: frame {}", f.number));
                    }
                    true
                };
                write_pcapng(&mut cap, &mut out, &["verdict".into()], comment).unwrap();
                let (want, _) = readable(b);
                let (mut got, damaged) = readable(out);
                assert!(!damaged);
                for (g, w) in got.iter_mut().zip(&want) {
                    if w.1 == i64::MIN {
                        g.1 = i64::MIN;
                    }
                }
                assert_eq!(got, want);
                rewritten += 1;
            }
        }
        // Most damages leave a readable start: the property was checked, not skipped.
        assert!(rewritten > 30_000, "{rewritten}");
    }

    /// A big-endian section: SHB, an IDB with if_tsresol 9, an EPB with an old comment,
    /// a custom block, an EPB without options; and those blocks' bytes.
    fn big_endian_sample() -> (Vec<u8>, [Vec<u8>; 3]) {
        let mut shb = BYTE_ORDER_MAGIC.to_be_bytes().to_vec();
        shb.extend_from_slice(&[0, 1, 0, 0]);
        shb.extend_from_slice(&1234i64.to_be_bytes());
        let mut idb = vec![0, 101, 0, 0, 0, 0, 0, 0];
        idb.extend(be_option(OPT_IF_TSRESOL, &[9]));
        idb.extend(be_option(0, &[]));
        let epb = |ts: u32, comment: Option<&[u8]>| {
            let mut b = Vec::new();
            for v in [0u32, 0, ts, 5, 5] {
                b.extend_from_slice(&v.to_be_bytes());
            }
            b.extend_from_slice(&[0x45, 1, 2, 3, 4, 0, 0, 0]);
            if let Some(c) = comment {
                b.extend(be_option(OPT_COMMENT, c));
                b.extend(be_option(0, &[]));
            }
            be_block(EPB_TYPE, &b)
        };
        // A custom block (0x00000BAD) tcpwhy knows nothing of: copied as it is.
        let custom = be_block(0x0000_0BAD, &[0, 0, 0x7e, 0x57, 1, 2, 3, 4]);
        let mut input = be_block(SHB_TYPE, &shb);
        input.extend(be_block(IDB_TYPE, &idb));
        input.extend(epb(7, Some(b"old")));
        input.extend(custom.clone());
        input.extend(epb(8, None));
        (input, [be_block(IDB_TYPE, &idb), custom, epb(8, None)])
    }

    #[test]
    fn big_endian_pcapng_keeps_blocks_and_old_comments() {
        let (input, [idb_block, custom, last_epb]) = big_endian_sample();
        let (out, done) = rewrite(input.clone(), &["verdict".into()], 1);
        assert_eq!((done.comments, done.comments_not_placed), (1, 0));
        assert_eq!(frames(out.clone()), frames(input.clone()));
        // The SHB: section length −1, then the verdict; still big-endian.
        assert_eq!(&out[8..12], &BYTE_ORDER_MAGIC.to_be_bytes());
        assert_eq!(&out[16..24], &[0xff; 8]);
        assert_eq!(&out[24..28], &[0, 1, 0, 7]);
        // The IDB, the custom block and the uncommented EPB are the input's bytes.
        assert!(out.windows(idb_block.len()).any(|w| w == idb_block));
        assert!(out.windows(custom.len()).any(|w| w == custom));
        assert!(out.ends_with(&last_epb));
        // Frame 1 keeps its old comment and gets the new one after it.
        let old = be_option(OPT_COMMENT, b"old");
        let new = be_option(OPT_COMMENT, b"tcpwhy test: frame 1");
        let mut both = old.clone();
        both.extend(new);
        both.extend(be_option(0, &[]));
        assert!(out.windows(both.len()).any(|w| w == both));
    }

    #[test]
    fn frames_left_out_and_a_damaged_tail() {
        let mut input = le_pcap(
            false,
            0,
            &[
                (1, 0, &[0x45; 4], 4),
                (2, 0, &[0x45; 4], 4),
                (3, 0, &[0x45; 4], 4),
            ],
        );
        // A fourth record header that claims more bytes than the bound.
        input.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]);
        let mut cap = Capture::from_bytes(input).unwrap();
        let mut out = Vec::new();
        let done = write_pcapng(&mut cap, &mut out, &[], &mut |f, _| f.number != 2).unwrap();
        assert_eq!((done.frames_read, done.frames_written), (3, 2));
        assert!(done.error.is_some());
        let back: Vec<i64> = frames(out).iter().map(|f| f.1).collect();
        assert_eq!(back, [1_000_000_000, 3_000_000_000]);
    }

    #[test]
    fn long_comments_are_cut_at_a_character_boundary() {
        let s = "é".repeat(40_000);
        let v = option_value(&s);
        assert!(v.len() <= MAX_OPTION_VALUE && std::str::from_utf8(v).is_ok());
    }
}
