//! The TCP header and the options tcpwhy uses (MSS, window scale, SACK-permitted, SACK
//! blocks, timestamps), from a possibly snaplen-cut segment.

use super::bytes::{array, be16, be32};
use crate::decode::{SkipReason, TcpFlags, TcpOptions, MAX_SACK_BLOCKS};

pub(super) const TCP_MIN_HEADER_LEN: usize = 20;
const SRC_PORT_OFFSET: usize = 0;
const DST_PORT_OFFSET: usize = 2;
const SEQ_OFFSET: usize = 4;
const ACK_OFFSET: usize = 8;
/// Data offset (4 bits), reserved (3 bits), then the 9 flag bits NS … FIN.
const OFFSET_FLAGS_OFFSET: usize = 12;
pub(super) const FLAGS_MASK: u16 = 0x01ff;
const WINDOW_OFFSET: usize = 14;
const URGENT_OFFSET: usize = 18;

// Option kinds and their lengths (RFC 9293 §3.1, RFC 7323, RFC 2018).
const OPT_END: u8 = 0;
const OPT_NOP: u8 = 1;
const OPT_MSS: u8 = 2;
const OPT_MSS_LEN: usize = 4;
const OPT_WSCALE: u8 = 3;
const OPT_WSCALE_LEN: usize = 3;
const OPT_SACK_PERMITTED: u8 = 4;
const OPT_SACK_PERMITTED_LEN: usize = 2;
const OPT_SACK: u8 = 5;
const SACK_BLOCK_LEN: usize = 8;
const OPT_TIMESTAMPS: u8 = 8;
const OPT_TIMESTAMPS_LEN: usize = 10;
/// The options of a segment carrying only timestamps, as Linux aligns them: NOP, NOP,
/// kind, length (then TSval and TSecr).
const TS_ONLY_OPTIONS: [u8; 4] = [OPT_NOP, OPT_NOP, OPT_TIMESTAMPS, OPT_TIMESTAMPS_LEN as u8];
/// Kind and length bytes in front of every option but END and NOP.
const OPT_HEADER_LEN: usize = 2;

/// The TCP header fields, plus where the payload starts in the segment.
#[derive(Copy, Clone, Debug)]
pub(crate) struct TcpHeader {
    pub src_port: u16,
    pub dst_port: u16,
    pub seq: u32,
    pub ack: u32,
    pub flags: TcpFlags,
    pub window: u16,
    pub urgent: u16,
    pub options: TcpOptions,
    /// Header length from the data offset field.
    pub header_len: usize,
    /// Payload bytes on the wire.
    pub payload_len: usize,
}

/// Source and destination ports of the TCP header at the start of `seg`, if captured.
#[inline]
pub(crate) fn ports(seg: &[u8]) -> Option<(u16, u16)> {
    Some((be16(seg, SRC_PORT_OFFSET)?, be16(seg, DST_PORT_OFFSET)?))
}

/// Parses the TCP header at the start of `seg` (captured bytes); `wire_len` is the
/// segment's length on the wire according to the IP layer.
#[inline]
pub(crate) fn parse(seg: &[u8], wire_len: usize) -> Result<TcpHeader, SkipReason> {
    // The IP length leaves no room for a TCP header (tcptrace's trunc.pcap has 8 bytes).
    if wire_len < TCP_MIN_HEADER_LEN || seg.len() < TCP_MIN_HEADER_LEN {
        return Err(SkipReason::TruncatedTcpHeader);
    }
    let field = |at| be16(seg, at).unwrap_or(0);
    let offset_flags = field(OFFSET_FLAGS_OFFSET);
    let header_len = usize::from(offset_flags >> 12) * 4;
    if header_len < TCP_MIN_HEADER_LEN || header_len > wire_len {
        return Err(SkipReason::BadTcpHeader);
    }
    let captured_options = seg
        .get(TCP_MIN_HEADER_LEN..header_len.min(seg.len()))
        .unwrap_or(&[]);
    let mut options = parse_options(captured_options, header_len - TCP_MIN_HEADER_LEN);
    if seg.len() < header_len {
        options.truncated = true;
    }
    Ok(TcpHeader {
        src_port: field(SRC_PORT_OFFSET),
        dst_port: field(DST_PORT_OFFSET),
        seq: be32(seg, SEQ_OFFSET).unwrap_or(0),
        ack: be32(seg, ACK_OFFSET).unwrap_or(0),
        flags: TcpFlags(offset_flags & FLAGS_MASK),
        window: field(WINDOW_OFFSET),
        urgent: field(URGENT_OFFSET),
        options,
        header_len,
        payload_len: wire_len - header_len,
    })
}

/// Walks the options. `bytes` is what was captured of them, `header_len` how long the
/// data offset says they are. A length byte of 0 or 1, or one reaching past the header,
/// makes the rest unreadable: `malformed`, stop, keep what came before. A known option
/// with the wrong length for its kind is `malformed` too but skipped by its length, since
/// the walk can go on. Running out of captured bytes is `truncated`.
///
/// What Linux and most stacks put on every segment after the handshake, NOP, NOP,
/// timestamps, is read inline, the walk out of line: with the walk inline too the
/// shortcut was inlined nowhere once the plain frames' decoder (`decode::plain_ipv4`)
/// called it (≈ 45 instructions a frame, callgrind).
#[inline(always)]
pub(crate) fn parse_options(bytes: &[u8], header_len: usize) -> TcpOptions {
    if header_len == TS_ONLY_OPTIONS.len() + 2 * 4 && bytes.len() == header_len {
        if let (Some(TS_ONLY_OPTIONS), Some(val), Some(ecr)) =
            (array(bytes, 0), be32(bytes, 4), be32(bytes, 8))
        {
            return TcpOptions {
                timestamps: Some((val, ecr)),
                declared_len: header_len as u8,
                ..TcpOptions::default()
            };
        }
    }
    walk_options(bytes, header_len)
}

/// [`parse_options`] one option at a time: the same result for the NOP, NOP,
/// timestamps it reads inline.
#[inline(never)]
fn walk_options(bytes: &[u8], header_len: usize) -> TcpOptions {
    let mut o = TcpOptions {
        declared_len: u8::try_from(header_len).unwrap_or(u8::MAX),
        ..TcpOptions::default()
    };
    let mut i = 0usize;
    while i < bytes.len() {
        let kind = bytes[i];
        match kind {
            OPT_END => break,
            OPT_NOP => {
                i += 1;
                continue;
            }
            _ => {}
        }
        let Some(&len_byte) = bytes.get(i + 1) else {
            // The length byte is not here: cut by the snaplen, or missing from the header.
            if i + 1 < header_len {
                o.truncated = true;
            } else {
                o.malformed = true;
            }
            break;
        };
        let len = usize::from(len_byte);
        if len < OPT_HEADER_LEN || i + len > header_len {
            o.malformed = true;
            break;
        }
        let Some(body) = bytes.get(i + OPT_HEADER_LEN..i + len) else {
            o.truncated = true;
            break;
        };
        match (kind, len) {
            (OPT_MSS, OPT_MSS_LEN) => o.mss = be16(body, 0),
            (OPT_WSCALE, OPT_WSCALE_LEN) => o.wscale = body.first().copied(),
            (OPT_SACK_PERMITTED, OPT_SACK_PERMITTED_LEN) => o.sack_permitted = true,
            (OPT_TIMESTAMPS, OPT_TIMESTAMPS_LEN) => {
                if let (Some(val), Some(ecr)) = (be32(body, 0), be32(body, 4)) {
                    o.timestamps = Some((val, ecr));
                }
            }
            (OPT_SACK, _) if !body.is_empty() && body.len() % SACK_BLOCK_LEN == 0 => {
                let mut n = 0;
                for block in body.chunks_exact(SACK_BLOCK_LEN).take(MAX_SACK_BLOCKS) {
                    if let (Some(left), Some(right)) = (be32(block, 0), be32(block, 4)) {
                        o.sack[n] = (left, right);
                        n += 1;
                    }
                }
                o.sack_count = n as u8;
            }
            (OPT_MSS | OPT_WSCALE | OPT_SACK_PERMITTED | OPT_TIMESTAMPS | OPT_SACK, _) => {
                o.malformed = true;
            }
            // Unknown kinds (MPTCP, TFO, MD5, …) are skipped by their length.
            _ => {}
        }
        i += len;
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A SYN from port 51000 to 443 with data offset `doff` words and `opts` after the
    /// fixed header.
    fn syn(doff: u8, opts: &[u8]) -> Vec<u8> {
        let mut s = vec![0xc7, 0x38, 0x01, 0xbb];
        s.extend_from_slice(&0x0102_0304u32.to_be_bytes());
        s.extend_from_slice(&0u32.to_be_bytes());
        s.extend_from_slice(&[doff << 4, 0x02, 0xfa, 0xf0, 0, 0, 0, 0]);
        s.extend_from_slice(opts);
        s
    }

    /// Linux's SYN options: MSS 1460, SACK-permitted, TS 1/0, NOP, wscale 7.
    const LINUX_SYN_OPTS: [u8; 20] = [
        2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0, 1, 3, 3, 7,
    ];

    #[test]
    fn linux_syn_options() {
        let s = syn(10, &LINUX_SYN_OPTS);
        let h = parse(&s, 40).unwrap();
        assert_eq!((h.src_port, h.dst_port, h.seq), (51000, 443, 0x0102_0304));
        assert!(h.flags.syn() && !h.flags.ack());
        assert_eq!(h.window, 64240);
        assert_eq!(h.options.mss, Some(1460));
        assert!(h.options.sack_permitted);
        assert_eq!(h.options.timestamps, Some((1, 0)));
        assert_eq!(h.options.wscale, Some(7));
        assert!(!h.options.malformed && !h.options.truncated);
        assert_eq!(h.payload_len, 0);
    }

    /// NOP NOP TS, the options of every Linux segment after the handshake (the shortcut),
    /// and the same cut by the snaplen or followed by another option (the walk).
    #[test]
    fn timestamps_only_options() {
        let ts = [1, 1, 8, 10, 0, 0, 0, 7, 0, 0, 0, 5];
        let full = parse_options(&ts, 12);
        assert_eq!(full.timestamps, Some((7, 5)));
        assert_eq!(full, walk_options(&ts, 12));
        assert_eq!(
            full,
            TcpOptions {
                timestamps: Some((7, 5)),
                declared_len: 12,
                ..TcpOptions::default()
            }
        );
        let cut = parse_options(&ts[..10], 12);
        assert_eq!(cut.timestamps, None);
        assert!(cut.truncated);
        assert_eq!(cut.declared_len, 12);
        let mut longer = ts.to_vec();
        longer.extend_from_slice(&[1, 1, 1, 0]);
        assert_eq!(
            parse_options(&longer, 16),
            TcpOptions {
                declared_len: 16,
                ..full
            }
        );
    }

    #[test]
    fn snaplen_cuts_the_options() {
        // 68-byte snaplen on Ethernet + IPv4 leaves 34 bytes of TCP: 14 of options.
        let s = syn(10, &LINUX_SYN_OPTS);
        let h = parse(&s[..34], 40).unwrap();
        assert_eq!(h.options.mss, Some(1460));
        assert!(h.options.sack_permitted);
        assert_eq!(h.options.timestamps, None); // 10 bytes at 6..16: cut at 14
        assert!(h.options.truncated && !h.options.malformed);
        assert_eq!(
            parse(&s[..19], 40).unwrap_err(),
            SkipReason::TruncatedTcpHeader
        );
    }

    #[test]
    fn option_length_zero_one_and_past_the_end() {
        for bad in [
            [2u8, 4, 5, 0xb4, 8, 0, 0, 0],
            [2, 4, 5, 0xb4, 8, 1, 0, 0],
            [2, 4, 5, 0xb4, 30, 255, 0, 0],
        ] {
            let o = parse(&syn(7, &bad), 28).unwrap().options;
            assert_eq!(o.mss, Some(1460), "{bad:?}");
            assert!(o.malformed && !o.truncated, "{bad:?}");
        }
    }

    #[test]
    fn sack_blocks_and_wrong_length_mss() {
        // NOP NOP SACK with 3 blocks (26 bytes) + MSS with length 3 (+ NOP pad).
        let mut opts = vec![1, 1, 5, 26];
        for (l, r) in [(100u32, 200u32), (300, 400), (500, 600)] {
            opts.extend_from_slice(&l.to_be_bytes());
            opts.extend_from_slice(&r.to_be_bytes());
        }
        opts.extend_from_slice(&[2, 3, 9, 1]);
        let h = parse(&syn(13, &opts), 52 + 10).unwrap();
        assert_eq!(
            h.options.sack_blocks(),
            &[(100, 200), (300, 400), (500, 600)]
        );
        assert_eq!(h.options.mss, None);
        assert!(h.options.malformed);
        assert_eq!(h.payload_len, 10);
    }

    #[test]
    fn data_offset_out_of_range() {
        assert_eq!(
            parse(&syn(4, &[]), 20).unwrap_err(),
            SkipReason::BadTcpHeader
        );
        // 60-byte header in a 40-byte segment.
        assert_eq!(
            parse(&syn(15, &[0; 40]), 40).unwrap_err(),
            SkipReason::BadTcpHeader
        );
        // The IP length leaves 8 bytes for TCP.
        assert_eq!(
            parse(&syn(5, &[]), 8).unwrap_err(),
            SkipReason::TruncatedTcpHeader
        );
    }
}
