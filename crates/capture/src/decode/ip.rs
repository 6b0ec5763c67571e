//! IPv4 and IPv6 headers: addresses, the upper-layer offset and how many transport bytes
//! were on the wire.
//!
//! Length rule (what was on the wire): the datagram length is the IP length field, capped
//! by what the frame's original length leaves after the link header (Wireshark does the
//! same: a length field claiming more than the frame had is not believed). A length field
//! of 0 (IPv4 total length or IPv6 payload length) is what Linux shows for TSO/GSO/BIG TCP
//! super-segments captured on the sender: then the frame's original length is used.

use super::bytes::{array, be16};
use super::link::Network;
use crate::decode::SkipReason;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// IP protocol number of TCP.
pub(crate) const PROTO_TCP: u8 = 6;
/// IPv4 in IP (RFC 2003) and IPv6 in IP (6in4, RFC 4213): tunnels whose inner TCP
/// connection is the one to analyse (Wireshark dissects it too).
pub(crate) const PROTO_IPIP: u8 = 4;
pub(crate) const PROTO_IPV6_IN_IP: u8 = 41;
/// UDP (VXLAN, GENEVE, GTP-U, Teredo) and GRE carry tunnels too (see `encap`).
pub(crate) const PROTO_UDP: u8 = 17;
pub(crate) const PROTO_GRE: u8 = 47;
/// ICMP and ICMPv6: their errors quote the header of the packet that caused them
/// (see `icmp`).
pub(crate) const PROTO_ICMP: u8 = 1;
pub(crate) const PROTO_ICMPV6: u8 = 58;

/// Protocols the decoder goes on with after the IP header.
fn carries_tcp(protocol: u8) -> bool {
    matches!(
        protocol,
        PROTO_TCP | PROTO_IPIP | PROTO_IPV6_IN_IP | PROTO_UDP | PROTO_GRE
    )
}

/// Why a non-first fragment of `protocol` is skipped: for TCP and IP-in-IP the
/// fragment, for what is TCP only when a tunnel header says so (UDP, GRE) not TCP, as
/// any other protocol.
fn fragment_reason(protocol: u8) -> SkipReason {
    if matches!(protocol, PROTO_UDP | PROTO_GRE) {
        SkipReason::NotTcp
    } else {
        SkipReason::IpFragment
    }
}

pub(super) const IPV4_MIN_HEADER_LEN: usize = 20;
const IPV4_TOTAL_LEN_OFFSET: usize = 2;
const IPV4_ID_OFFSET: usize = 4;
const IPV4_FRAG_OFFSET: usize = 6;
const IPV4_TTL_OFFSET: usize = 8;
const IPV4_PROTO_OFFSET: usize = 9;
const IPV4_SRC_OFFSET: usize = 12;
const IPV4_DST_OFFSET: usize = 16;
/// Fragment offset bits of the flags/offset field (RFC 791).
pub(super) const IPV4_FRAG_OFFSET_MASK: u16 = 0x1fff;

const IPV6_HEADER_LEN: usize = 40;
const IPV6_PAYLOAD_LEN_OFFSET: usize = 4;
const IPV6_NEXT_HEADER_OFFSET: usize = 6;
const IPV6_HOP_LIMIT_OFFSET: usize = 7;
const IPV6_SRC_OFFSET: usize = 8;
const IPV6_DST_OFFSET: usize = 24;

// IPv6 extension headers (RFC 8200 §4, IANA "IPv6 Extension Header Types").
const IPV6_HOP_BY_HOP: u8 = 0;
const IPV6_ROUTING: u8 = 43;
const IPV6_FRAGMENT: u8 = 44;
const IPV6_AH: u8 = 51;
const IPV6_DEST_OPTS: u8 = 60;
const IPV6_MOBILITY: u8 = 135;
const IPV6_HIP: u8 = 139;
const IPV6_SHIM6: u8 = 140;
const IPV6_FRAGMENT_HEADER_LEN: usize = 8;
/// The fragment offset is the top 13 bits of the second 16-bit word.
const IPV6_FRAG_OFFSET_SHIFT: u16 = 3;
/// A real chain has a handful; more is garbage, and the bound keeps the walk short.
const MAX_EXTENSION_HEADERS: usize = 16;

/// What the TCP parser needs from the IP layer.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct IpHeader {
    pub src: IpAddr,
    pub dst: IpAddr,
    pub ip_id: Option<u16>,
    pub ttl: u8,
    /// Upper-layer protocol: TCP or a tunnel (see [`carries_tcp`]).
    pub protocol: u8,
    /// Bytes of IP header (with IPv4 options or IPv6 extension headers).
    pub header_len: usize,
    /// Transport bytes on the wire: datagram length minus `header_len`.
    pub payload_wire_len: usize,
}

/// Parses the IP header at the start of `b` (captured bytes); `wire_len` is how many
/// bytes the frame had on the wire from here on (never less than `b.len()`).
#[inline]
pub(crate) fn parse(net: Network, b: &[u8], wire_len: usize) -> Result<IpHeader, SkipReason> {
    match net {
        Network::Ipv4 => ipv4(b, wire_len, carries_tcp),
        Network::Ipv6 => ipv6(b, wire_len, carries_tcp),
    }
}

/// [`parse`] for a header whose upper layer is ICMP or ICMPv6 (`NotTcp` for any other).
pub(crate) fn parse_icmp(net: Network, b: &[u8], wire_len: usize) -> Result<IpHeader, SkipReason> {
    let icmp = |p| p == PROTO_ICMP || p == PROTO_ICMPV6;
    match net {
        Network::Ipv4 => ipv4(b, wire_len, icmp),
        Network::Ipv6 => ipv6(b, wire_len, icmp),
    }
}

/// `accept`: the upper-layer protocols to go on with ([`carries_tcp`] for segments).
#[inline]
fn ipv4(b: &[u8], wire_len: usize, accept: impl Fn(u8) -> bool) -> Result<IpHeader, SkipReason> {
    if b.len() < IPV4_MIN_HEADER_LEN {
        return Err(SkipReason::TruncatedIpHeader);
    }
    let version_ihl = b[0];
    if version_ihl >> 4 != 4 {
        return Err(SkipReason::BadIpHeader);
    }
    let header_len = usize::from(version_ihl & 0x0f) * 4;
    if header_len < IPV4_MIN_HEADER_LEN {
        return Err(SkipReason::BadIpHeader);
    }
    if b.len() < header_len {
        return Err(SkipReason::TruncatedIpHeader);
    }
    let total_field = usize::from(be16(b, IPV4_TOTAL_LEN_OFFSET).unwrap_or(0));
    let datagram_len = if total_field == 0 {
        wire_len
    } else {
        total_field.min(wire_len)
    };
    if datagram_len < header_len {
        return Err(SkipReason::BadIpHeader);
    }
    let protocol = b[IPV4_PROTO_OFFSET];
    if !accept(protocol) {
        return Err(SkipReason::NotTcp);
    }
    // A first fragment (offset 0, more-fragments set) still starts with the TCP header;
    // later fragments carry only payload.
    let frag = be16(b, IPV4_FRAG_OFFSET).unwrap_or(0);
    if frag & IPV4_FRAG_OFFSET_MASK != 0 {
        return Err(fragment_reason(protocol));
    }
    let src: [u8; 4] = array(b, IPV4_SRC_OFFSET).ok_or(SkipReason::TruncatedIpHeader)?;
    let dst: [u8; 4] = array(b, IPV4_DST_OFFSET).ok_or(SkipReason::TruncatedIpHeader)?;
    Ok(IpHeader {
        src: IpAddr::V4(Ipv4Addr::from(src)),
        dst: IpAddr::V4(Ipv4Addr::from(dst)),
        ip_id: be16(b, IPV4_ID_OFFSET),
        ttl: b[IPV4_TTL_OFFSET],
        protocol,
        header_len,
        payload_wire_len: datagram_len - header_len,
    })
}

/// Source and destination addresses and the bytes from the TCP header on, when `b` holds
/// an IP header that carries TCP directly (no tunnel, no IPv6 extension header); `None`
/// otherwise. The offsets are those [`parse`] uses on such a header, so when it accepts the
/// header the addresses are the same; what `parse` would reject (a bad length, a later
/// fragment) may still get `Some` here.
#[inline]
pub(crate) fn flow_addrs(net: Network, b: &[u8]) -> Option<(IpAddr, IpAddr, &[u8])> {
    match net {
        Network::Ipv4 => {
            let header_len = usize::from(*b.first()? & 0x0f) * 4;
            if b.len() < IPV4_MIN_HEADER_LEN
                || b[0] >> 4 != 4
                || header_len < IPV4_MIN_HEADER_LEN
                || b[IPV4_PROTO_OFFSET] != PROTO_TCP
            {
                return None;
            }
            let src: [u8; 4] = array(b, IPV4_SRC_OFFSET)?;
            let dst: [u8; 4] = array(b, IPV4_DST_OFFSET)?;
            Some((
                IpAddr::V4(Ipv4Addr::from(src)),
                IpAddr::V4(Ipv4Addr::from(dst)),
                b.get(header_len..)?,
            ))
        }
        Network::Ipv6 => {
            if b.len() < IPV6_HEADER_LEN
                || b[0] >> 4 != 6
                || b[IPV6_NEXT_HEADER_OFFSET] != PROTO_TCP
            {
                return None;
            }
            let src: [u8; 16] = array(b, IPV6_SRC_OFFSET)?;
            let dst: [u8; 16] = array(b, IPV6_DST_OFFSET)?;
            Some((
                IpAddr::V6(Ipv6Addr::from(src)),
                IpAddr::V6(Ipv6Addr::from(dst)),
                b.get(IPV6_HEADER_LEN..)?,
            ))
        }
    }
}

fn ipv6(b: &[u8], wire_len: usize, accept: impl Fn(u8) -> bool) -> Result<IpHeader, SkipReason> {
    if b.len() < IPV6_HEADER_LEN {
        return Err(SkipReason::TruncatedIpHeader);
    }
    if b[0] >> 4 != 6 {
        return Err(SkipReason::BadIpHeader);
    }
    let payload_field = usize::from(be16(b, IPV6_PAYLOAD_LEN_OFFSET).unwrap_or(0));
    // Payload length 0: a jumbogram or a BIG TCP/GSO super-segment; trust the frame.
    let datagram_len = if payload_field == 0 {
        wire_len
    } else {
        (IPV6_HEADER_LEN + payload_field).min(wire_len)
    };
    if datagram_len < IPV6_HEADER_LEN {
        return Err(SkipReason::BadIpHeader);
    }
    let mut next = b[IPV6_NEXT_HEADER_OFFSET];
    let mut at = IPV6_HEADER_LEN;
    let mut first_fragment = true;
    for _ in 0..=MAX_EXTENSION_HEADERS {
        let ext_len = match next {
            p if accept(p) && first_fragment => {
                let src: [u8; 16] =
                    array(b, IPV6_SRC_OFFSET).ok_or(SkipReason::TruncatedIpHeader)?;
                let dst: [u8; 16] =
                    array(b, IPV6_DST_OFFSET).ok_or(SkipReason::TruncatedIpHeader)?;
                return Ok(IpHeader {
                    src: IpAddr::V6(Ipv6Addr::from(src)),
                    dst: IpAddr::V6(Ipv6Addr::from(dst)),
                    ip_id: None,
                    ttl: b[IPV6_HOP_LIMIT_OFFSET],
                    protocol: p,
                    header_len: at,
                    payload_wire_len: datagram_len - at,
                });
            }
            // Past a non-first fragment header there is only payload.
            p if accept(p) => return Err(fragment_reason(p)),
            _ if !first_fragment => return Err(SkipReason::NotTcp),
            IPV6_HOP_BY_HOP | IPV6_ROUTING | IPV6_DEST_OPTS | IPV6_MOBILITY | IPV6_HIP
            | IPV6_SHIM6 => {
                // Length in 8-octet units, not counting the first 8 (RFC 8200 §4.3).
                let units = *b.get(at + 1).ok_or(SkipReason::TruncatedIpHeader)?;
                (usize::from(units) + 1) * 8
            }
            IPV6_AH => {
                // Length in 4-octet units, minus 2 (RFC 4302 §2.2).
                let units = *b.get(at + 1).ok_or(SkipReason::TruncatedIpHeader)?;
                (usize::from(units) + 2) * 4
            }
            IPV6_FRAGMENT => {
                let word = be16(b, at + 2).ok_or(SkipReason::TruncatedIpHeader)?;
                first_fragment = word >> IPV6_FRAG_OFFSET_SHIFT == 0;
                IPV6_FRAGMENT_HEADER_LEN
            }
            // UDP, ICMPv6, ESP, No Next Header, …
            _ => return Err(SkipReason::NotTcp),
        };
        next = *b.get(at).ok_or(SkipReason::TruncatedIpHeader)?;
        at += ext_len;
        if at > datagram_len {
            return Err(SkipReason::BadIpHeader);
        }
        if at > b.len() {
            return Err(SkipReason::TruncatedIpHeader);
        }
    }
    Err(SkipReason::BadIpHeader)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 10.0.0.1 → 10.0.0.2, TCP, total length `total`, flags/offset `frag`, IHL `ihl`.
    fn v4(total: u16, frag: u16, ihl: u8) -> Vec<u8> {
        let mut h = vec![0x40 | ihl, 0];
        h.extend_from_slice(&total.to_be_bytes());
        h.extend_from_slice(&[0x12, 0x34]);
        h.extend_from_slice(&frag.to_be_bytes());
        h.extend_from_slice(&[64, PROTO_TCP, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2]);
        h.resize(usize::from(ihl) * 4, 1); // options: NOPs
        h
    }

    #[test]
    fn ipv4_with_options_and_padding() {
        // IHL 6 (one option word), 40-byte datagram in a 46-byte Ethernet payload.
        let mut b = v4(40, 0, 6);
        b.resize(46, 0);
        let h = parse(Network::Ipv4, &b, 46).unwrap();
        assert_eq!(h.header_len, 24);
        assert_eq!(h.payload_wire_len, 16);
        assert_eq!(h.ip_id, Some(0x1234));
        assert_eq!(h.ttl, 64);
        assert_eq!(h.src, "10.0.0.1".parse::<IpAddr>().unwrap());
    }

    #[test]
    fn ipv4_total_length_zero_is_a_tso_segment() {
        let b = v4(0, 0, 5);
        let h = parse(Network::Ipv4, &b, 80_052).unwrap();
        assert_eq!(h.payload_wire_len, 80_032);
    }

    #[test]
    fn ipv4_length_claims_more_than_the_frame() {
        let b = v4(1500, 0, 5);
        let h = parse(Network::Ipv4, &b, 60).unwrap();
        assert_eq!(h.payload_wire_len, 40);
    }

    #[test]
    fn ipv4_bad_and_truncated() {
        assert_eq!(
            parse(Network::Ipv4, &v4(40, 0, 5)[..19], 40),
            Err(SkipReason::TruncatedIpHeader)
        );
        assert_eq!(
            parse(Network::Ipv4, &v4(40, 0, 4)[..16].repeat(2), 40),
            Err(SkipReason::BadIpHeader)
        );
        // IHL 15 = 60 bytes, only 40 captured.
        let mut b = v4(80, 0, 15);
        b.truncate(40);
        assert_eq!(
            parse(Network::Ipv4, &b, 80),
            Err(SkipReason::TruncatedIpHeader)
        );
        // Total length smaller than the header.
        assert_eq!(
            parse(Network::Ipv4, &v4(12, 0, 5), 20),
            Err(SkipReason::BadIpHeader)
        );
        let mut b = v4(40, 0, 5);
        b[0] = 0x65;
        assert_eq!(parse(Network::Ipv4, &b, 40), Err(SkipReason::BadIpHeader));
    }

    #[test]
    fn ipv4_fragments() {
        // First fragment: offset 0, MF set: decodes.
        assert!(parse(Network::Ipv4, &v4(40, 0x2000, 5), 40).is_ok());
        // Later fragment: offset 185 (×8 bytes).
        assert_eq!(
            parse(Network::Ipv4, &v4(40, 185, 5), 40),
            Err(SkipReason::IpFragment)
        );
        let mut udp = v4(40, 185, 5);
        udp[IPV4_PROTO_OFFSET] = 17;
        assert_eq!(parse(Network::Ipv4, &udp, 40), Err(SkipReason::NotTcp));
    }

    fn v6(payload: u16, next: u8, ext: &[u8]) -> Vec<u8> {
        let mut h = vec![0x60, 0, 0, 0];
        h.extend_from_slice(&payload.to_be_bytes());
        h.extend_from_slice(&[next, 57]);
        h.extend_from_slice(&[0x20, 0x01, 0x0d, 0xb8]);
        h.extend_from_slice(&[0; 11]);
        h.push(1);
        h.extend_from_slice(&[0x20, 0x01, 0x0d, 0xb8]);
        h.extend_from_slice(&[0; 11]);
        h.push(2);
        h.extend_from_slice(ext);
        h
    }

    #[test]
    fn ipv6_hop_by_hop_then_destination_options_then_tcp() {
        let mut ext = vec![IPV6_DEST_OPTS, 0, 1, 4, 0, 0, 0, 0]; // HBH: PadN
        ext.extend_from_slice(&[PROTO_TCP, 1]); // dest opts, 16 bytes
        ext.extend_from_slice(&[1, 12]);
        ext.extend_from_slice(&[0; 12]);
        let b = v6(24 + 20, IPV6_HOP_BY_HOP, &ext);
        let h = parse(Network::Ipv6, &b, 40 + 44).unwrap();
        assert_eq!(h.header_len, 64);
        assert_eq!(h.payload_wire_len, 20);
        assert_eq!(h.ttl, 57);
        assert_eq!(h.ip_id, None);
        assert_eq!(h.dst, "2001:db8::2".parse::<IpAddr>().unwrap());
    }

    #[test]
    fn ipv6_fragments_and_ah() {
        // First fragment (offset 0, M set) then TCP.
        let b = v6(
            8 + 20,
            IPV6_FRAGMENT,
            &[PROTO_TCP, 0, 0x00, 0x01, 0, 0, 0, 7],
        );
        assert_eq!(parse(Network::Ipv6, &b, 68).unwrap().header_len, 48);
        // Offset 1448/8 = 181.
        let b = v6(
            8 + 20,
            IPV6_FRAGMENT,
            &[PROTO_TCP, 0, 0x05, 0xa8, 0, 0, 0, 7],
        );
        assert_eq!(parse(Network::Ipv6, &b, 68), Err(SkipReason::IpFragment));
        // AH with payload-length field 4: (4+2)*4 = 24 bytes.
        let mut ah = vec![PROTO_TCP, 4];
        ah.resize(24, 0);
        let b = v6(24 + 20, IPV6_AH, &ah);
        assert_eq!(parse(Network::Ipv6, &b, 84).unwrap().header_len, 64);
    }

    #[test]
    fn ipv6_extension_chain_past_the_payload_or_capture() {
        // HBH claiming 2048 bytes in a 20-byte payload.
        let b = v6(20, IPV6_HOP_BY_HOP, &[PROTO_TCP, 255, 0, 0, 0, 0, 0, 0]);
        assert_eq!(parse(Network::Ipv6, &b, 60), Err(SkipReason::BadIpHeader));
        // Extension header cut by the snaplen.
        let b = v6(100, IPV6_HOP_BY_HOP, &[]);
        assert_eq!(
            parse(Network::Ipv6, &b, 140),
            Err(SkipReason::TruncatedIpHeader)
        );
        // ICMPv6 (UDP goes on to the tunnel decoders).
        let b = v6(8, 58, &[0; 8]);
        assert_eq!(parse(Network::Ipv6, &b, 48), Err(SkipReason::NotTcp));
    }
}
