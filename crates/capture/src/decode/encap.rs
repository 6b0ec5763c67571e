//! Tunnels that start after an IP header: IP in IP (IPv4/IPv6 in IPv4/IPv6, protocols 4
//! and 41), GRE (RFC 2784/2890 with key and sequence number; transparent Ethernet
//! bridging; ERSPAN types I, II and III; PPTP's enhanced GRE carrying PPP), and over UDP
//! VXLAN (RFC 7348, port 4789 and Linux's default 8472), GENEVE (RFC 8926, 6081), GTP-U
//! (3GPP TS 29.281, 2152), Teredo (RFC 4380, 3544), GRE in UDP (RFC 8086, 4754) and
//! AYIYA (5072); Aruba's GRE carries 802.11, WCCP's GRE redirected IPv4. Each gives where the inner IP
//! header starts in the tunnel's payload; Ethernet, VLAN tags and MPLS inside are walked
//! by the link layer's EtherType chain.

use super::bytes::be16;
use super::ip::{PROTO_GRE, PROTO_IPIP, PROTO_IPV6_IN_IP, PROTO_UDP};
use super::link::{self, Network};
use crate::decode::SkipReason;

/// GRE flags and version (RFC 2784, RFC 2890, RFC 1701 routing, RFC 2637 §4.1).
const GRE_HEADER_LEN: usize = 4;
const GRE_CHECKSUM: u16 = 0x8000;
const GRE_ROUTING: u16 = 0x4000;
const GRE_KEY: u16 = 0x2000;
const GRE_SEQUENCE: u16 = 0x1000;
/// Enhanced GRE (PPTP, version 1): acknowledgment number present.
const GRE_ACK: u16 = 0x0080;
const GRE_VERSION_MASK: u16 = 0x0007;
/// Checksum + reserved, key, sequence, acknowledgment: 4 bytes each.
const GRE_OPTION_LEN: usize = 4;
/// Enhanced GRE: flags, protocol, payload length, call id.
const GRE_V1_HEADER_LEN: usize = 8;

// GRE protocol types beyond EtherTypes of IP, VLAN and MPLS.
/// Transparent Ethernet bridging (gretap): an Ethernet frame.
const GRE_PROTO_TEB: u16 = 0x6558;
/// ERSPAN type II (with GRE sequence number) or type I (without, and no ERSPAN header).
const GRE_PROTO_ERSPAN_2: u16 = 0x88be;
const GRE_PROTO_ERSPAN_3: u16 = 0x22eb;
const GRE_PROTO_PPP: u16 = 0x880b;
/// Aruba access points tunnel 802.11 frames to their controller in GRE with protocol
/// types 0x8200, 0x8210, … 0x8370 and 0x9000 (Wireshark and Zeek read them so).
const GRE_PROTO_ARUBA_FIRST: u16 = 0x8200;
const GRE_PROTO_ARUBA_LAST: u16 = 0x8370;
const GRE_PROTO_ARUBA_9000: u16 = 0x9000;
/// WCCP redirection: IPv4, after a 4-byte redirect header in WCCPv2 (WCCPv1 has none:
/// then the IP version nibble is first).
const GRE_PROTO_WCCP: u16 = 0x883e;
const WCCP2_REDIRECT_HEADER_LEN: usize = 4;
const ERSPAN_2_HEADER_LEN: usize = 8;
const ERSPAN_3_HEADER_LEN: usize = 12;
/// ERSPAN III: the O bit (last bit of the third word) adds an 8-byte platform subheader.
const ERSPAN_3_O_FLAG_OFFSET: usize = 11;
const ERSPAN_3_PLATFORM_LEN: usize = 8;

const UDP_HEADER_LEN: usize = 8;
/// IANA's VXLAN port (RFC 7348 §5).
const PORT_VXLAN: u16 = 4789;
/// The port Linux's vxlan driver used before IANA's (`ip link add … type vxlan` without
/// `dstport` still gets it): Wireshark needs "Decode As" for it.
const PORT_VXLAN_LINUX: u16 = 8472;
const PORT_GENEVE: u16 = 6081;
const PORT_GTP_U: u16 = 2152;
const PORT_TEREDO: u16 = 3544;
/// GRE in UDP (RFC 8086).
const PORT_GRE_IN_UDP: u16 = 4754;
/// AYIYA (anything in anything, SixXS tunnels).
const PORT_AYIYA: u16 = 5072;

/// AYIYA: ID length (2^n bytes) and type, signature length (4-byte units) and hash,
/// authentication and opcode, next header, epoch (4); identity and signature follow.
const AYIYA_HEADER_LEN: usize = 8;
const AYIYA_OPCODE_FORWARD: u8 = 1;

/// VXLAN: flags (I = VNI valid), reserved, VNI, reserved.
const VXLAN_HEADER_LEN: usize = 8;
const VXLAN_FLAG_VNI: u8 = 0x08;

/// GENEVE: version and option length (4-byte units), flags, protocol type, VNI.
const GENEVE_HEADER_LEN: usize = 8;
const GENEVE_PROTOCOL_OFFSET: usize = 2;

/// GTP-U v1: flags, message type, length, TEID; sequence, N-PDU and next extension type
/// when any of E, S, PN is set; then extension headers, each a length in 4-byte units
/// and ending in the next type.
const GTP_HEADER_LEN: usize = 8;
const GTP_OPTIONAL_LEN: usize = 4;
const GTP_VERSION_1: u8 = 1;
const GTP_FLAG_PT: u8 = 0x10;
const GTP_FLAGS_OPTIONAL: u8 = 0x07;
/// G-PDU: a user packet (other message types are signalling).
const GTP_MSG_G_PDU: u8 = 0xff;
/// Extension headers followed before giving up (a real G-PDU has one or two).
const GTP_MAX_EXTENSIONS: usize = 16;

/// Teredo indicators before the IPv6 packet (RFC 4380 §5.1.1).
const TEREDO_AUTH: u16 = 0x0001;
const TEREDO_ORIGIN: u16 = 0x0000;
/// Authentication: indicator, ID length, AU length, (client ID, auth value), nonce (8),
/// confirmation (1).
const TEREDO_AUTH_FIXED_LEN: usize = 4 + 8 + 1;
const TEREDO_ORIGIN_LEN: usize = 8;

/// Where the inner IP header starts in `payload`, the bytes after an IP header whose
/// protocol is `protocol`; `NotTcp` when it is no tunnel tcpwhy follows (plain UDP,
/// ICMP, …).
pub(crate) fn inner(protocol: u8, payload: &[u8]) -> Result<(Network, usize), SkipReason> {
    match protocol {
        PROTO_IPIP => Ok((Network::Ipv4, 0)),
        PROTO_IPV6_IN_IP => Ok((Network::Ipv6, 0)),
        PROTO_GRE => gre(payload),
        PROTO_UDP => udp(payload),
        _ => Err(SkipReason::NotTcp),
    }
}

fn gre(p: &[u8]) -> Result<(Network, usize), SkipReason> {
    let flags = be16(p, 0).ok_or(SkipReason::TruncatedLinkHeader)?;
    let protocol = be16(p, 2).ok_or(SkipReason::TruncatedLinkHeader)?;
    let option = |bit: u16| if flags & bit != 0 { GRE_OPTION_LEN } else { 0 };
    match flags & GRE_VERSION_MASK {
        0 => {
            // RFC 1701 source routing: obsolete, never seen carrying TCP.
            if flags & GRE_ROUTING != 0 {
                return Err(SkipReason::NotTcp);
            }
            let at = GRE_HEADER_LEN + option(GRE_CHECKSUM) + option(GRE_KEY) + option(GRE_SEQUENCE);
            match protocol {
                GRE_PROTO_TEB => link::ethernet(p, at),
                GRE_PROTO_ERSPAN_2 if flags & GRE_SEQUENCE == 0 => link::ethernet(p, at),
                GRE_PROTO_ERSPAN_2 => link::ethernet(p, at + ERSPAN_2_HEADER_LEN),
                GRE_PROTO_ERSPAN_3 => {
                    let o = *p
                        .get(at + ERSPAN_3_O_FLAG_OFFSET)
                        .ok_or(SkipReason::TruncatedLinkHeader)?;
                    let platform = if o & 1 != 0 { ERSPAN_3_PLATFORM_LEN } else { 0 };
                    link::ethernet(p, at + ERSPAN_3_HEADER_LEN + platform)
                }
                GRE_PROTO_PPP => {
                    let (ty, next) = link::ppp(p, at)?;
                    link::ethertype_chain(p, ty, next)
                }
                GRE_PROTO_WCCP => match p.get(at).map(|b| b >> 4) {
                    Some(4) => Ok((Network::Ipv4, at)),
                    Some(_) => ip_by_version(p, at + WCCP2_REDIRECT_HEADER_LEN),
                    None => Err(SkipReason::TruncatedLinkHeader),
                },
                ty if (GRE_PROTO_ARUBA_FIRST..=GRE_PROTO_ARUBA_LAST).contains(&ty)
                    && ty & 0x000f == 0
                    || ty == GRE_PROTO_ARUBA_9000 =>
                {
                    link::wlan(p, at)
                }
                ty => link::ethertype_chain(p, ty, at),
            }
        }
        1 if protocol == GRE_PROTO_PPP => {
            let at = GRE_V1_HEADER_LEN + option(GRE_SEQUENCE) + option(GRE_ACK);
            let (ty, next) = link::ppp(p, at)?;
            link::ethertype_chain(p, ty, next)
        }
        _ => Err(SkipReason::NotTcp),
    }
}

/// UDP tunnels by port, as Wireshark chooses a dissector: the lower port first.
fn udp(p: &[u8]) -> Result<(Network, usize), SkipReason> {
    let src = be16(p, 0).ok_or(SkipReason::NotTcp)?;
    let dst = be16(p, 2).ok_or(SkipReason::NotTcp)?;
    for port in [src.min(dst), src.max(dst)] {
        let at = UDP_HEADER_LEN;
        match port {
            PORT_VXLAN | PORT_VXLAN_LINUX => return vxlan(p, at),
            PORT_GENEVE => return geneve(p, at),
            PORT_GTP_U => return gtp_u(p, at),
            PORT_TEREDO => return teredo(p, at),
            PORT_GRE_IN_UDP => return gre(p.get(at..).unwrap_or(&[])).map(|(n, i)| (n, i + at)),
            PORT_AYIYA => return ayiya(p, at),
            _ => {}
        }
    }
    Err(SkipReason::NotTcp)
}

fn vxlan(p: &[u8], at: usize) -> Result<(Network, usize), SkipReason> {
    let flags = *p.get(at).ok_or(SkipReason::TruncatedLinkHeader)?;
    if flags & VXLAN_FLAG_VNI == 0 {
        return Err(SkipReason::NotTcp);
    }
    link::ethernet(p, at + VXLAN_HEADER_LEN)
}

fn geneve(p: &[u8], at: usize) -> Result<(Network, usize), SkipReason> {
    let first = *p.get(at).ok_or(SkipReason::TruncatedLinkHeader)?;
    if first >> 6 != 0 {
        return Err(SkipReason::NotTcp);
    }
    let options = usize::from(first & 0x3f) * 4;
    let protocol = be16(p, at + GENEVE_PROTOCOL_OFFSET).ok_or(SkipReason::TruncatedLinkHeader)?;
    let next = at + GENEVE_HEADER_LEN + options;
    if protocol == GRE_PROTO_TEB {
        link::ethernet(p, next)
    } else {
        link::ethertype_chain(p, protocol, next)
    }
}

fn gtp_u(p: &[u8], at: usize) -> Result<(Network, usize), SkipReason> {
    let h = p
        .get(at..at + GTP_HEADER_LEN)
        .ok_or(SkipReason::TruncatedLinkHeader)?;
    if h[0] >> 5 != GTP_VERSION_1 || h[0] & GTP_FLAG_PT == 0 || h[1] != GTP_MSG_G_PDU {
        return Err(SkipReason::NotTcp);
    }
    let mut next = at + GTP_HEADER_LEN;
    if h[0] & GTP_FLAGS_OPTIONAL != 0 {
        next += GTP_OPTIONAL_LEN;
        let mut ext = *p.get(next - 1).ok_or(SkipReason::TruncatedLinkHeader)?;
        let mut walked = 0;
        while ext != 0 {
            walked += 1;
            if walked > GTP_MAX_EXTENSIONS {
                return Err(SkipReason::TooDeeplyNested);
            }
            let units = *p.get(next).ok_or(SkipReason::TruncatedLinkHeader)?;
            if units == 0 {
                return Err(SkipReason::NotTcp);
            }
            next += usize::from(units) * 4;
            ext = *p.get(next - 1).ok_or(SkipReason::TruncatedLinkHeader)?;
        }
    }
    ip_by_version(p, next)
}

fn teredo(p: &[u8], at: usize) -> Result<(Network, usize), SkipReason> {
    let mut next = at;
    if be16(p, next) == Some(TEREDO_AUTH) {
        let id = *p.get(next + 2).ok_or(SkipReason::TruncatedLinkHeader)?;
        let au = *p.get(next + 3).ok_or(SkipReason::TruncatedLinkHeader)?;
        next += TEREDO_AUTH_FIXED_LEN + usize::from(id) + usize::from(au);
    }
    if be16(p, next) == Some(TEREDO_ORIGIN) {
        next += TEREDO_ORIGIN_LEN;
    }
    match p.get(next).map(|b| b >> 4) {
        Some(6) => Ok((Network::Ipv6, next)),
        Some(_) => Err(SkipReason::NotTcp),
        None => Err(SkipReason::TruncatedLinkHeader),
    }
}

fn ayiya(p: &[u8], at: usize) -> Result<(Network, usize), SkipReason> {
    let h = p
        .get(at..at + AYIYA_HEADER_LEN)
        .ok_or(SkipReason::TruncatedLinkHeader)?;
    if h[2] & 0x0f != AYIYA_OPCODE_FORWARD {
        return Err(SkipReason::NotTcp);
    }
    let identity = 1usize << (h[0] >> 4);
    let signature = usize::from(h[1] >> 4) * 4;
    let next = at + AYIYA_HEADER_LEN + identity + signature;
    match h[3] {
        PROTO_IPIP => Ok((Network::Ipv4, next)),
        PROTO_IPV6_IN_IP => Ok((Network::Ipv6, next)),
        _ => Err(SkipReason::NotTcp),
    }
}

/// A bare IP packet at `at`, its version from its first nibble.
fn ip_by_version(p: &[u8], at: usize) -> Result<(Network, usize), SkipReason> {
    match p.get(at).map(|b| b >> 4) {
        Some(4) => Ok((Network::Ipv4, at)),
        Some(6) => Ok((Network::Ipv6, at)),
        Some(_) => Err(SkipReason::NotTcp),
        None => Err(SkipReason::TruncatedIpHeader),
    }
}
