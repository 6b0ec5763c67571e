//! ICMP and ICMPv6 errors that quote a TCP header: the router or host that dropped a
//! segment sends back the segment's IP header and the start of its TCP header (RFC 792;
//! RFC 1812 §4.3.2.3 and RFC 4443 §2.4 (c): as much as fits). Wireshark gives such a
//! quoted header the `tcp.stream` of its connection, or a new stream when none is known,
//! so tcpwhy reads them to number streams as it does; and "fragmentation needed" (RFC
//! 1191) or "packet too big" (RFC 8201) with the next-hop MTU is what a path-MTU black
//! hole leaves in a capture.
//!
//! Which errors Wireshark (tshark 4.0) numbers, found with hand-built captures
//! (docs/tshark-comparison.md "ICMP errors"): ICMP types 3, 4, 11 and 12 and ICMPv6
//! types 1 to 4 (not a redirect, type 5), when at least 16 bytes of the quoted TCP
//! header were captured (ports, sequence and acknowledgment numbers, offset, flags,
//! window; the 8 bytes RFC 792 asks for are not enough) and the quoted IP packet is not
//! a non-first fragment. ICMP inside a tunnel is not looked into.

use super::bytes::{be16, be32};
use super::ip::{self, PROTO_ICMP, PROTO_ICMPV6, PROTO_TCP};
use super::link::{self, Network};
use crate::decode::FlowAddrs;
use crate::frame::Frame;
use serde::{Deserialize, Serialize};

/// ICMP type and code bytes, then 4 bytes whose meaning depends on the type, then the
/// quoted packet (RFC 792, RFC 4443 §2.1).
const ICMP_HEADER_LEN: usize = 8;
/// "Fragmentation needed and DF set": the next-hop MTU is the low 16 bits of the
/// second word (RFC 1191 §4); 0 from a router older than RFC 1191.
const ICMP_NEXT_HOP_MTU_OFFSET: usize = 6;
/// ICMPv6 "packet too big": the MTU is the second word (RFC 4443 §3.2).
const ICMPV6_MTU_OFFSET: usize = 4;
/// Bytes of the quoted TCP header Wireshark needs before it numbers the stream (through
/// the window field; tshark 4.0 on captures cut at 12, 15 and 16 bytes).
const MIN_QUOTED_TCP_LEN: usize = 16;

// ICMP types (RFC 792) and the code of "fragmentation needed".
const ICMP_DEST_UNREACHABLE: u8 = 3;
const ICMP_FRAG_NEEDED: u8 = 4;
const ICMP_SOURCE_QUENCH: u8 = 4;
const ICMP_TIME_EXCEEDED: u8 = 11;
const ICMP_PARAMETER_PROBLEM: u8 = 12;
// ICMPv6 error types (RFC 4443 §3).
const ICMPV6_DEST_UNREACHABLE: u8 = 1;
const ICMPV6_PACKET_TOO_BIG: u8 = 2;
const ICMPV6_TIME_EXCEEDED: u8 = 3;
const ICMPV6_PARAMETER_PROBLEM: u8 = 4;

/// What an ICMP or ICMPv6 error said about the packet it quotes.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum IcmpErrorKind {
    /// ICMP type 3 other than code 4, ICMPv6 type 1.
    DestinationUnreachable,
    /// ICMP type 3 code 4: the packet had DF set and did not fit the next hop.
    FragmentationNeeded,
    /// ICMPv6 type 2: the IPv6 counterpart of fragmentation needed.
    PacketTooBig,
    /// ICMP type 4 (deprecated by RFC 6633, still sent by a few devices).
    SourceQuench,
    /// ICMP type 11, ICMPv6 type 3: TTL or hop limit reached 0, or reassembly timed out.
    TimeExceeded,
    /// ICMP type 12, ICMPv6 type 4.
    ParameterProblem,
}

impl IcmpErrorKind {
    /// Stable snake_case name used in JSON output.
    pub const fn name(self) -> &'static str {
        match self {
            IcmpErrorKind::DestinationUnreachable => "destination_unreachable",
            IcmpErrorKind::FragmentationNeeded => "fragmentation_needed",
            IcmpErrorKind::PacketTooBig => "packet_too_big",
            IcmpErrorKind::SourceQuench => "source_quench",
            IcmpErrorKind::TimeExceeded => "time_exceeded",
            IcmpErrorKind::ParameterProblem => "parameter_problem",
        }
    }

    /// Whether the error says the packet was too large for the path (RFC 1191, 8201).
    pub const fn too_big(self) -> bool {
        matches!(
            self,
            IcmpErrorKind::FragmentationNeeded | IcmpErrorKind::PacketTooBig
        )
    }
}

/// An ICMP or ICMPv6 error quoting a TCP segment.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct IcmpError {
    pub kind: IcmpErrorKind,
    /// The quoted segment's endpoints, as it was sent (source first).
    pub quoted: FlowAddrs,
    /// The quoted segment's sequence number.
    pub quoted_seq: u32,
    /// The MTU a "fragmentation needed" or "packet too big" reported (`None` for other
    /// errors, and for the 0 an old router sends).
    pub next_hop_mtu: Option<u32>,
}

/// The ICMP or ICMPv6 error quoting a TCP segment that `frame` holds, if it holds one
/// (the first IP header's upper layer; tunnels are not followed). Never panics, never
/// allocates; called only for frames [`crate::decode()`] skipped as not TCP.
pub fn icmp_error(frame: &Frame<'_>) -> Option<IcmpError> {
    let (net, ip_start) = link::locate(frame.link, frame.data).ok()?;
    let ip_bytes = frame.data.get(ip_start..)?;
    let wire_len = (frame.orig_len as usize)
        .saturating_sub(ip_start)
        .max(ip_bytes.len());
    let outer = ip::parse_icmp(net, ip_bytes, wire_len).ok()?;
    let end = outer
        .header_len
        .saturating_add(outer.payload_wire_len)
        .min(ip_bytes.len());
    let msg = ip_bytes.get(outer.header_len..end)?;
    let (ty, code) = (*msg.first()?, *msg.get(1)?);
    let (kind, mtu) = match (outer.protocol, ty) {
        (PROTO_ICMP, ICMP_DEST_UNREACHABLE) if code == ICMP_FRAG_NEEDED => (
            IcmpErrorKind::FragmentationNeeded,
            be16(msg, ICMP_NEXT_HOP_MTU_OFFSET).map(u32::from),
        ),
        (PROTO_ICMP, ICMP_DEST_UNREACHABLE) => (IcmpErrorKind::DestinationUnreachable, None),
        (PROTO_ICMP, ICMP_SOURCE_QUENCH) => (IcmpErrorKind::SourceQuench, None),
        (PROTO_ICMP, ICMP_TIME_EXCEEDED) => (IcmpErrorKind::TimeExceeded, None),
        (PROTO_ICMP, ICMP_PARAMETER_PROBLEM) => (IcmpErrorKind::ParameterProblem, None),
        (PROTO_ICMPV6, ICMPV6_DEST_UNREACHABLE) => (IcmpErrorKind::DestinationUnreachable, None),
        (PROTO_ICMPV6, ICMPV6_PACKET_TOO_BIG) => {
            (IcmpErrorKind::PacketTooBig, be32(msg, ICMPV6_MTU_OFFSET))
        }
        (PROTO_ICMPV6, ICMPV6_TIME_EXCEEDED) => (IcmpErrorKind::TimeExceeded, None),
        (PROTO_ICMPV6, ICMPV6_PARAMETER_PROBLEM) => (IcmpErrorKind::ParameterProblem, None),
        _ => return None,
    };
    // The quoted packet is of the error's own IP version (an ICMP error about a tunnel's
    // outer packet quotes that outer header, not the TCP inside).
    let quoted_net = if outer.protocol == PROTO_ICMP {
        Network::Ipv4
    } else {
        Network::Ipv6
    };
    let q = msg.get(ICMP_HEADER_LEN..)?;
    let inner = ip::parse(quoted_net, q, q.len()).ok()?;
    if inner.protocol != PROTO_TCP {
        return None;
    }
    let seg = q.get(inner.header_len..)?;
    if seg.len() < MIN_QUOTED_TCP_LEN {
        return None;
    }
    Some(IcmpError {
        kind,
        quoted: FlowAddrs {
            src: inner.src,
            dst: inner.dst,
            src_port: be16(seg, 0)?,
            dst_port: be16(seg, 2)?,
        },
        quoted_seq: be32(seg, 4)?,
        next_hop_mtu: mtu.filter(|&m| m > 0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::{LinkType, Timestamp};
    use std::net::IpAddr;

    fn frame(data: &[u8]) -> Frame<'_> {
        Frame {
            number: 1,
            ts: Timestamp(0),
            ts_untrusted: false,
            link: LinkType::RawIp,
            interface: 0,
            data,
            orig_len: data.len() as u32,
        }
    }

    fn ipv4(src: [u8; 4], dst: [u8; 4], proto: u8, payload: &[u8]) -> Vec<u8> {
        let mut p = vec![0x45, 0];
        p.extend_from_slice(&(20 + payload.len() as u16).to_be_bytes());
        p.extend_from_slice(&[0, 1, 0x40, 0, 64, proto, 0, 0]);
        p.extend_from_slice(&src);
        p.extend_from_slice(&dst);
        p.extend_from_slice(payload);
        p
    }

    /// A data segment 10.9.0.1:40000 → 10.9.0.2:80, seq 101, of which the first
    /// `quoted` bytes of TCP header are quoted.
    fn quoted_segment(quoted: usize) -> Vec<u8> {
        let mut t = vec![
            0x9c, 0x40, 0, 80, 0, 0, 0, 101, 0, 0, 1, 0xf5, 0x50, 0x18, 1, 0,
        ];
        t.extend_from_slice(&[0, 0, 0, 0]);
        t.extend_from_slice(&[0xaa; 1400]);
        let mut ip = ipv4([10, 9, 0, 1], [10, 9, 0, 2], 6, &t);
        ip.truncate(20 + quoted);
        ip
    }

    fn icmp(ty: u8, code: u8, rest: [u8; 4], quoted: &[u8]) -> Vec<u8> {
        let mut m = vec![ty, code, 0, 0];
        m.extend_from_slice(&rest);
        m.extend_from_slice(quoted);
        ipv4([10, 9, 0, 254], [10, 9, 0, 1], 1, &m)
    }

    #[test]
    fn fragmentation_needed_quoting_a_segment() {
        let f = icmp(3, 4, [0, 0, 0x05, 0x78], &quoted_segment(28));
        let e = icmp_error(&frame(&f)).unwrap();
        assert_eq!(e.kind, IcmpErrorKind::FragmentationNeeded);
        assert_eq!(e.next_hop_mtu, Some(1400));
        assert_eq!(e.quoted.src, "10.9.0.1".parse::<IpAddr>().unwrap());
        assert_eq!((e.quoted.src_port, e.quoted.dst_port), (40000, 80));
        assert_eq!(e.quoted_seq, 101);
    }

    /// What Wireshark numbers and what not (tshark 4.0 on the same shapes).
    #[test]
    fn only_errors_wireshark_gives_a_stream() {
        let q = quoted_segment(20);
        let kind = |ty, code| icmp_error(&frame(&icmp(ty, code, [0; 4], &q))).map(|e| e.kind);
        assert_eq!(kind(3, 1), Some(IcmpErrorKind::DestinationUnreachable));
        assert_eq!(kind(4, 0), Some(IcmpErrorKind::SourceQuench));
        assert_eq!(kind(11, 0), Some(IcmpErrorKind::TimeExceeded));
        assert_eq!(kind(12, 0), Some(IcmpErrorKind::ParameterProblem));
        // A redirect, an echo reply: no stream.
        assert_eq!(kind(5, 0), None);
        assert_eq!(kind(0, 0), None);
        // An old router's MTU of 0 is no MTU.
        let f = icmp(3, 4, [0; 4], &q);
        assert_eq!(icmp_error(&frame(&f)).unwrap().next_hop_mtu, None);
        // RFC 792's 8 bytes, and 15: too few for Wireshark; 16 are enough.
        for (n, some) in [(8, false), (15, false), (16, true)] {
            let f = icmp(3, 1, [0; 4], &quoted_segment(n));
            assert_eq!(icmp_error(&frame(&f)).is_some(), some, "{n}");
        }
        // A quoted non-first fragment has no TCP header.
        let mut frag = quoted_segment(20);
        frag[7] = 10;
        assert_eq!(icmp_error(&frame(&icmp(3, 1, [0; 4], &frag))), None);
        // A quoted UDP datagram.
        let mut udp = quoted_segment(20);
        udp[9] = 17;
        assert_eq!(icmp_error(&frame(&icmp(3, 3, [0; 4], &udp))), None);
    }

    /// Cut at every byte and with every byte flipped: never a panic, and a cut frame
    /// never says more than the whole one.
    #[test]
    fn cut_and_flipped_errors_are_read_or_refused() {
        let f = icmp(3, 4, [0, 0, 0x05, 0x78], &quoted_segment(28));
        for n in 0..=f.len() {
            let e = icmp_error(&frame(&f[..n]));
            assert_eq!(e.is_some(), n >= 20 + 8 + 20 + 16, "{n}");
        }
        for i in 0..f.len() {
            let mut g = f.clone();
            g[i] ^= 0xff;
            let _ = icmp_error(&frame(&g));
        }
    }

    #[test]
    fn icmpv6_packet_too_big() {
        let a = |n: u8| {
            let mut x = [0u8; 16];
            x[..4].copy_from_slice(&[0x20, 0x01, 0x0d, 0xb8]);
            x[15] = n;
            x
        };
        let mut quoted = vec![0x60, 0, 0, 0, 0x05, 0xa0, 6, 64];
        quoted.extend_from_slice(&a(1));
        quoted.extend_from_slice(&a(2));
        quoted.extend_from_slice(&[0x9c, 0x41, 0, 80, 0, 0, 0, 7, 0, 0, 0, 0, 0x50, 0x10, 1, 0]);
        let mut m = vec![2, 0, 0, 0, 0, 0, 0x05, 0x00];
        m.extend_from_slice(&quoted);
        let mut f = vec![0x60, 0, 0, 0];
        f.extend_from_slice(&(m.len() as u16).to_be_bytes());
        f.extend_from_slice(&[58, 64]);
        f.extend_from_slice(&a(254));
        f.extend_from_slice(&a(1));
        f.extend_from_slice(&m);
        let e = icmp_error(&frame(&f)).unwrap();
        assert_eq!(e.kind, IcmpErrorKind::PacketTooBig);
        assert_eq!(e.next_hop_mtu, Some(1280));
        assert_eq!((e.quoted.src_port, e.quoted.dst_port), (40001, 80));
        assert_eq!(e.quoted.dst, "2001:db8::2".parse::<IpAddr>().unwrap());
        // Cut inside the quoted header: nothing.
        assert_eq!(icmp_error(&frame(&f[..f.len() - 4])), None);
    }
}
