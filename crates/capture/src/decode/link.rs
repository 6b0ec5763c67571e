//! Link layers: where the IP header starts and which IP version it is, for every link
//! type tcpwhy reads (Ethernet, Linux cooked v1/v2, raw IP, BSD null/loopback, OpenBSD
//! loop, FDDI and 802.11 (bare or under radiotap) with 802.2 LLC/SNAP, PPP bare or in
//! HDLC framing, Cisco HDLC, NFLOG, IP over InfiniBand), through the layers an EtherType
//! can announce before IP: 802.1Q/802.1ad tags, MPLS label stacks (with IP or
//! pseudowire Ethernet below), PPPoE sessions. Tunnels that start after an IP header are
//! in `encap`.

use super::bytes::{be16, be32};
use crate::decode::SkipReason;
use crate::frame::LinkType;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Network {
    Ipv4,
    Ipv6,
}

// EtherTypes (IEEE registry).
pub(super) const ETHERTYPE_IPV4: u16 = 0x0800;
const ETHERTYPE_IPV6: u16 = 0x86dd;
/// 802.1Q customer tag.
const ETHERTYPE_VLAN: u16 = 0x8100;
/// 802.1ad service tag (QinQ outer tag).
const ETHERTYPE_QINQ: u16 = 0x88a8;
/// Pre-standard QinQ outer tags some switches still send.
const ETHERTYPE_QINQ_OLD: u16 = 0x9100;
const ETHERTYPE_QINQ_OLD2: u16 = 0x9200;
/// Values below this in the type field are 802.3 lengths: an 802.2 LLC header follows.
const ETHERTYPE_MIN: u16 = 0x0600;
/// MPLS unicast and multicast (RFC 3032).
const ETHERTYPE_MPLS: u16 = 0x8847;
const ETHERTYPE_MPLS_MULTICAST: u16 = 0x8848;
/// PPPoE session stage (RFC 2516); the discovery stage (0x8863) carries no IP.
const ETHERTYPE_PPPOE_SESSION: u16 = 0x8864;

/// Headers an EtherType chain may stack before IP (tags, labels, PPPoE, a pseudowire's
/// Ethernet): QinQ has 2, MPLS stacks a handful; past this it is garbage or crafted
/// nesting, counted as [`SkipReason::TooDeeplyNested`] rather than walked to the end of a
/// 1 MiB frame.
const MAX_LINK_LAYERS: usize = 64;

/// An MPLS label stack entry: label (20), traffic class (3), bottom of stack (1), TTL.
const MPLS_ENTRY_LEN: usize = 4;
const MPLS_BOTTOM_OF_STACK: u32 = 0x100;
/// The pseudowire control word (RFC 4385) in front of Ethernet below an MPLS stack.
const PW_CONTROL_WORD_LEN: usize = 4;

/// PPPoE: version/type, code, session id, length; the PPP protocol field follows.
const PPPOE_HEADER_LEN: usize = 6;

// PPP protocol numbers (RFC 1661, IANA "PPP DLL Protocol Numbers").
const PPP_IPV4: u16 = 0x0021;
const PPP_IPV6: u16 = 0x0057;
const PPP_MPLS: u16 = 0x0281;
/// HDLC-like framing: all-stations address, unnumbered-information control (RFC 1662).
const PPP_ADDRESS_CONTROL: [u8; 2] = [0xff, 0x03];

/// Cisco HDLC: address (0x0f unicast, 0x8f broadcast), control, EtherType.
const CHDLC_HEADER_LEN: usize = 4;
const CHDLC_TYPE_OFFSET: usize = 2;
const CHDLC_UNICAST: u8 = 0x0f;
const CHDLC_BROADCAST: u8 = 0x8f;

/// IP over InfiniBand as pcap files hold it (and Wireshark reads it): a 40-byte pseudo
/// header (the GRH, or the destination QPN and GID), then RFC 4391 §6's EtherType and 2
/// reserved bytes.
const IPOIB_PSEUDO_HEADER_LEN: usize = 40;
const IPOIB_HEADER_LEN: usize = IPOIB_PSEUDO_HEADER_LEN + 4;

/// 802.11 MAC header: frame control, duration, three addresses, sequence control; a
/// fourth address when both To-DS and From-DS are set; QoS control in QoS data frames;
/// HT control when the order bit is set on a QoS frame (802.11-2020 §9.2.4).
const WLAN_HEADER_LEN: usize = 24;
const WLAN_ADDR4_LEN: usize = 6;
const WLAN_QOS_LEN: usize = 2;
const WLAN_HT_CONTROL_LEN: usize = 4;
const WLAN_TYPE_DATA: u8 = 2;
/// Subtype bits: 0x8 QoS, 0x4 no data (Null, QoS Null, CF-only).
const WLAN_SUBTYPE_QOS: u8 = 0x8;
const WLAN_SUBTYPE_NO_DATA: u8 = 0x4;
/// Frame control flags (second byte).
const WLAN_FLAG_TO_DS: u8 = 0x01;
const WLAN_FLAG_FROM_DS: u8 = 0x02;
const WLAN_FLAG_PROTECTED: u8 = 0x40;
const WLAN_FLAG_ORDER: u8 = 0x80;
/// QoS control: the body is an A-MSDU: subframes of destination, source, length, then
/// LLC/SNAP. Only the first subframe is read (a frame is one segment to tcpwhy).
const WLAN_QOS_AMSDU: u8 = 0x80;
const AMSDU_SUBFRAME_HEADER_LEN: usize = 14;

/// Radiotap: version (0), pad, length (little-endian), present bitmaps.
const RADIOTAP_MIN_LEN: usize = 8;

/// NFLOG (Linux): address family, version, resource id, then TLVs whose length and
/// type are in the capturing host's byte order, each padded to 4 bytes.
const NFLOG_HEADER_LEN: usize = 4;
const NFLOG_TLV_HEADER_LEN: usize = 4;
/// NFULA_PAYLOAD: the packet, from its IP header.
const NFULA_PAYLOAD: u16 = 9;

/// A VLAN tag: TCI (2) + the next EtherType (2).
const VLAN_TAG_LEN: usize = 4;

pub(super) const ETHERNET_HEADER_LEN: usize = 14;
const ETHERNET_TYPE_OFFSET: usize = 12;

/// 802.2 LLC (DSAP, SSAP, control) + SNAP (OUI 3, EtherType 2).
const LLC_SNAP_LEN: usize = 8;
const LLC_SAP_SNAP: u8 = 0xaa;
const LLC_CONTROL_UI: u8 = 0x03;
/// SNAP OUIs that carry an EtherType: RFC 1042 (00-00-00) and 802.1H bridge tunnel.
const SNAP_OUI_RFC1042: [u8; 3] = [0x00, 0x00, 0x00];
const SNAP_OUI_8021H: [u8; 3] = [0x00, 0x00, 0xf8];

/// FDDI MAC header: frame control (1), destination (6), source (6); LLC follows.
const FDDI_HEADER_LEN: usize = 13;

/// Linux cooked v1: packet type, ARPHRD, address length, address (8), protocol.
const SLL_HEADER_LEN: usize = 16;
const SLL_ARPHRD_OFFSET: usize = 2;
const SLL_PROTOCOL_OFFSET: usize = 14;
/// Linux cooked v2: protocol, reserved, interface index, ARPHRD, packet type, address.
const SLL2_HEADER_LEN: usize = 20;
const SLL2_PROTOCOL_OFFSET: usize = 0;
const SLL2_ARPHRD_OFFSET: usize = 8;
/// Netlink frames in cooked captures carry a netlink family, not an EtherType.
const ARPHRD_NETLINK: u16 = 824;

/// BSD null/loop: a 4-byte address family before the IP header.
const NULL_HEADER_LEN: usize = 4;
const AF_INET: u32 = 2;
/// AF_INET6 differs per BSD: NetBSD/OpenBSD, FreeBSD, Darwin.
const AF_INET6_BSD: u32 = 24;
const AF_INET6_FREEBSD: u32 = 28;
const AF_INET6_DARWIN: u32 = 30;

/// Where the IP header starts in `data`, and its version.
///
/// Untagged Ethernet (almost every frame of most captures) inline, every other link
/// layer out of line in [`locate_any`]: the call and its `Result` in memory were ≈ 25
/// instructions a frame (callgrind, 1 M frames of the mixed bench capture).
#[inline(always)]
pub(crate) fn locate(link: LinkType, data: &[u8]) -> Result<(Network, usize), SkipReason> {
    if matches!(link, LinkType::Ethernet) {
        match be16(data, ETHERNET_TYPE_OFFSET) {
            Some(ETHERTYPE_IPV4) => return Ok((Network::Ipv4, ETHERNET_HEADER_LEN)),
            Some(ETHERTYPE_IPV6) => return Ok((Network::Ipv6, ETHERNET_HEADER_LEN)),
            _ => {}
        }
    }
    locate_any(link, data)
}

/// [`locate`] for every link type.
#[inline(never)]
fn locate_any(link: LinkType, data: &[u8]) -> Result<(Network, usize), SkipReason> {
    match link {
        LinkType::Ethernet => {
            let ty = be16(data, ETHERNET_TYPE_OFFSET).ok_or(SkipReason::TruncatedLinkHeader)?;
            ethertype_chain(data, ty, ETHERNET_HEADER_LEN)
        }
        LinkType::LinuxSll => {
            let ty = be16(data, SLL_PROTOCOL_OFFSET).ok_or(SkipReason::TruncatedLinkHeader)?;
            if be16(data, SLL_ARPHRD_OFFSET) == Some(ARPHRD_NETLINK) {
                return Err(SkipReason::NotIp);
            }
            ethertype_chain(data, ty, SLL_HEADER_LEN)
        }
        LinkType::LinuxSll2 => {
            if data.len() < SLL2_HEADER_LEN {
                return Err(SkipReason::TruncatedLinkHeader);
            }
            let ty = be16(data, SLL2_PROTOCOL_OFFSET).ok_or(SkipReason::TruncatedLinkHeader)?;
            if be16(data, SLL2_ARPHRD_OFFSET) == Some(ARPHRD_NETLINK) {
                return Err(SkipReason::NotIp);
            }
            ethertype_chain(data, ty, SLL2_HEADER_LEN)
        }
        LinkType::Fddi => {
            let (ty, next) = llc_snap(data, FDDI_HEADER_LEN)?;
            ethertype_chain(data, ty, next)
        }
        LinkType::RawIp => match data.first().map(|b| b >> 4) {
            None => Err(SkipReason::TruncatedIpHeader),
            Some(4) => Ok((Network::Ipv4, 0)),
            Some(6) => Ok((Network::Ipv6, 0)),
            Some(_) => Err(SkipReason::NotIp),
        },
        LinkType::Ipv4 => Ok((Network::Ipv4, 0)),
        LinkType::Ipv6 => Ok((Network::Ipv6, 0)),
        LinkType::Null => {
            let raw = be32(data, 0).ok_or(SkipReason::TruncatedLinkHeader)?;
            // Host byte order of the capturing machine: families are small numbers, so
            // whichever reading fits in the low 16 bits is the right one.
            let family = if raw & 0xffff_0000 != 0 {
                raw.swap_bytes()
            } else {
                raw
            };
            address_family(family)
        }
        LinkType::Loop => {
            let family = be32(data, 0).ok_or(SkipReason::TruncatedLinkHeader)?;
            address_family(family)
        }
        LinkType::Ppp => {
            let (ty, next) = ppp(data, 0)?;
            ethertype_chain(data, ty, next)
        }
        LinkType::PppHdlc => match data.first() {
            // RFC 1547 §4.3.1: Cisco PPP with HDLC framing is Cisco HDLC.
            Some(&(CHDLC_UNICAST | CHDLC_BROADCAST)) => cisco_hdlc(data),
            Some(_) => {
                let (ty, next) = ppp(data, 0)?;
                ethertype_chain(data, ty, next)
            }
            None => Err(SkipReason::TruncatedLinkHeader),
        },
        LinkType::CiscoHdlc => cisco_hdlc(data),
        LinkType::IpOverIb => {
            let ty = be16(data, IPOIB_PSEUDO_HEADER_LEN).ok_or(SkipReason::TruncatedLinkHeader)?;
            if data.len() < IPOIB_HEADER_LEN {
                return Err(SkipReason::TruncatedLinkHeader);
            }
            ethertype_chain(data, ty, IPOIB_HEADER_LEN)
        }
        LinkType::Ieee80211 => wlan(data, 0),
        LinkType::Radiotap => {
            let h = data
                .get(..RADIOTAP_MIN_LEN)
                .ok_or(SkipReason::TruncatedLinkHeader)?;
            if h[0] != 0 {
                return Err(SkipReason::NotIp);
            }
            let len = usize::from(u16::from_le_bytes([h[2], h[3]]));
            if len < RADIOTAP_MIN_LEN {
                return Err(SkipReason::NotIp);
            }
            wlan(data, len)
        }
        LinkType::Nflog => nflog(data),
        LinkType::Other(_) => Err(SkipReason::UnsupportedLinkType),
    }
}

fn cisco_hdlc(data: &[u8]) -> Result<(Network, usize), SkipReason> {
    let ty = be16(data, CHDLC_TYPE_OFFSET).ok_or(SkipReason::TruncatedLinkHeader)?;
    ethertype_chain(data, ty, CHDLC_HEADER_LEN)
}

/// A PPP header at `at`, with or without HDLC-like address and control, with a 1- or
/// 2-byte protocol field (RFC 1661 §6.5 protocol-field compression): the EtherType of
/// what it carries and where that starts.
pub(crate) fn ppp(data: &[u8], at: usize) -> Result<(u16, usize), SkipReason> {
    let mut at = at;
    if data.get(at..at.saturating_add(2)) == Some(&PPP_ADDRESS_CONTROL[..]) {
        at += 2;
    }
    let first = *data.get(at).ok_or(SkipReason::TruncatedLinkHeader)?;
    // Protocol numbers are odd in their last byte: an odd first byte is a compressed one.
    let (protocol, len) = if first & 1 == 1 {
        (u16::from(first), 1)
    } else {
        (be16(data, at).ok_or(SkipReason::TruncatedLinkHeader)?, 2)
    };
    let ty = match protocol {
        PPP_IPV4 => ETHERTYPE_IPV4,
        PPP_IPV6 => ETHERTYPE_IPV6,
        PPP_MPLS => ETHERTYPE_MPLS,
        _ => return Err(SkipReason::NotIp),
    };
    Ok((ty, at + len))
}

/// An 802.11 frame at `at`: data frames with a body, unprotected, carry LLC/SNAP (in the
/// first subframe of an A-MSDU); anything else (management, control, encrypted, null
/// data) is not IP.
pub(crate) fn wlan(data: &[u8], at: usize) -> Result<(Network, usize), SkipReason> {
    let fc = data
        .get(at..at.saturating_add(2))
        .ok_or(SkipReason::TruncatedLinkHeader)?;
    let (fc0, flags) = (fc[0], fc[1]);
    let (version, ftype, subtype) = (fc0 & 0x03, (fc0 >> 2) & 0x03, fc0 >> 4);
    if version != 0
        || ftype != WLAN_TYPE_DATA
        || subtype & WLAN_SUBTYPE_NO_DATA != 0
        || flags & WLAN_FLAG_PROTECTED != 0
    {
        return Err(SkipReason::NotIp);
    }
    let mut len = WLAN_HEADER_LEN;
    if flags & (WLAN_FLAG_TO_DS | WLAN_FLAG_FROM_DS) == WLAN_FLAG_TO_DS | WLAN_FLAG_FROM_DS {
        len += WLAN_ADDR4_LEN;
    }
    let mut amsdu = false;
    if subtype & WLAN_SUBTYPE_QOS != 0 {
        let qos = *data
            .get(at.saturating_add(len))
            .ok_or(SkipReason::TruncatedLinkHeader)?;
        amsdu = qos & WLAN_QOS_AMSDU != 0;
        len += WLAN_QOS_LEN;
        if flags & WLAN_FLAG_ORDER != 0 {
            len += WLAN_HT_CONTROL_LEN;
        }
    }
    if amsdu {
        len += AMSDU_SUBFRAME_HEADER_LEN;
    }
    let (ty, next) = llc_snap(data, at.saturating_add(len))?;
    ethertype_chain(data, ty, next)
}

/// NFLOG: the NFULA_PAYLOAD TLV's value is the packet from its IP header on.
fn nflog(data: &[u8]) -> Result<(Network, usize), SkipReason> {
    if data.len() < NFLOG_HEADER_LEN {
        return Err(SkipReason::TruncatedLinkHeader);
    }
    let mut at = NFLOG_HEADER_LEN;
    // Host byte order: TLV types are small numbers, so the byte that is zero in the
    // first TLV's type says which order the capturing host wrote.
    let mut little_endian = None;
    // Each TLV is at least 4 bytes: the walk ends at the end of the frame.
    loop {
        let h = data
            .get(at..at.saturating_add(NFLOG_TLV_HEADER_LEN))
            .ok_or(SkipReason::NotIp)?;
        let le = *little_endian.get_or_insert(h[3] == 0 && h[2] != 0 || h[2] == h[3]);
        let (len, ty) = if le {
            (
                u16::from_le_bytes([h[0], h[1]]),
                u16::from_le_bytes([h[2], h[3]]),
            )
        } else {
            (
                u16::from_be_bytes([h[0], h[1]]),
                u16::from_be_bytes([h[2], h[3]]),
            )
        };
        let len = usize::from(len);
        if len < NFLOG_TLV_HEADER_LEN {
            return Err(SkipReason::TruncatedLinkHeader);
        }
        // The top bits of the type are netlink's nested/byte-order flags.
        if ty & 0x3fff == NFULA_PAYLOAD {
            let start = at + NFLOG_TLV_HEADER_LEN;
            return match data.get(start).map(|b| b >> 4) {
                Some(4) => Ok((Network::Ipv4, start)),
                Some(6) => Ok((Network::Ipv6, start)),
                Some(_) => Err(SkipReason::NotIp),
                None => Err(SkipReason::TruncatedIpHeader),
            };
        }
        at = at.saturating_add((len + 3) & !3);
    }
}

/// An Ethernet header at `at` (inside a tunnel): the IP header below it.
pub(crate) fn ethernet(data: &[u8], at: usize) -> Result<(Network, usize), SkipReason> {
    let ty = be16(data, at.saturating_add(ETHERNET_TYPE_OFFSET))
        .ok_or(SkipReason::TruncatedLinkHeader)?;
    ethertype_chain(data, ty, at.saturating_add(ETHERNET_HEADER_LEN))
}

fn address_family(family: u32) -> Result<(Network, usize), SkipReason> {
    match family {
        AF_INET => Ok((Network::Ipv4, NULL_HEADER_LEN)),
        AF_INET6_BSD | AF_INET6_FREEBSD | AF_INET6_DARWIN => Ok((Network::Ipv6, NULL_HEADER_LEN)),
        _ => Err(SkipReason::NotIp),
    }
}

/// Follows an EtherType through VLAN tags, LLC/SNAP, MPLS label stacks and PPPoE to
/// IPv4 or IPv6, at most [`MAX_LINK_LAYERS`] headers deep. `payload` is where the bytes
/// described by `ty` start.
pub(crate) fn ethertype_chain(
    data: &[u8],
    mut ty: u16,
    mut payload: usize,
) -> Result<(Network, usize), SkipReason> {
    for _ in 0..MAX_LINK_LAYERS {
        match ty {
            ETHERTYPE_IPV4 => return Ok((Network::Ipv4, payload)),
            ETHERTYPE_IPV6 => return Ok((Network::Ipv6, payload)),
            ETHERTYPE_VLAN | ETHERTYPE_QINQ | ETHERTYPE_QINQ_OLD | ETHERTYPE_QINQ_OLD2 => {
                // The tag's own EtherType is its last two bytes.
                ty =
                    be16(data, payload.saturating_add(2)).ok_or(SkipReason::TruncatedLinkHeader)?;
                payload = payload.saturating_add(VLAN_TAG_LEN);
            }
            t if t < ETHERTYPE_MIN => {
                let (next_ty, next) = llc_snap(data, payload)?;
                ty = next_ty;
                payload = next;
            }
            ETHERTYPE_MPLS | ETHERTYPE_MPLS_MULTICAST => {
                let entry = be32(data, payload).ok_or(SkipReason::TruncatedLinkHeader)?;
                payload = payload.saturating_add(MPLS_ENTRY_LEN);
                if entry & MPLS_BOTTOM_OF_STACK != 0 {
                    // No type field below the stack: the first nibble says (RFC 4385:
                    // 0 is a pseudowire control word, here taken to front Ethernet;
                    // Ethernet without one is recognised by an IP or VLAN EtherType
                    // where its type field would be).
                    match data.get(payload).map(|b| b >> 4) {
                        Some(4) => return Ok((Network::Ipv4, payload)),
                        Some(6) => return Ok((Network::Ipv6, payload)),
                        Some(0) => {
                            let plain = matches!(
                                be16(data, payload.saturating_add(ETHERNET_TYPE_OFFSET)),
                                Some(ETHERTYPE_IPV4 | ETHERTYPE_IPV6 | ETHERTYPE_VLAN)
                            );
                            let eth = if plain {
                                payload
                            } else {
                                payload.saturating_add(PW_CONTROL_WORD_LEN)
                            };
                            ty = be16(data, eth.saturating_add(ETHERNET_TYPE_OFFSET))
                                .ok_or(SkipReason::TruncatedLinkHeader)?;
                            payload = eth.saturating_add(ETHERNET_HEADER_LEN);
                        }
                        Some(_) => return Err(SkipReason::NotIp),
                        None => return Err(SkipReason::TruncatedLinkHeader),
                    }
                }
                // Not the bottom: the next label stack entry, as if MPLS again.
            }
            ETHERTYPE_PPPOE_SESSION => {
                let (next_ty, next) = ppp(data, payload.saturating_add(PPPOE_HEADER_LEN))?;
                ty = next_ty;
                payload = next;
            }
            _ => return Err(SkipReason::NotIp),
        }
    }
    Err(SkipReason::TooDeeplyNested)
}

/// Reads an 802.2 LLC + SNAP header at `at`: the EtherType it carries and where its
/// payload starts. Plain LLC (no SNAP) never carries IP in practice: `NotIp`.
fn llc_snap(data: &[u8], at: usize) -> Result<(u16, usize), SkipReason> {
    let end = at.saturating_add(LLC_SNAP_LEN);
    let h = data.get(at..end).ok_or(SkipReason::TruncatedLinkHeader)?;
    let oui = [h[3], h[4], h[5]];
    if h[0] != LLC_SAP_SNAP
        || h[1] != LLC_SAP_SNAP
        || h[2] != LLC_CONTROL_UI
        || (oui != SNAP_OUI_RFC1042 && oui != SNAP_OUI_8021H)
    {
        return Err(SkipReason::NotIp);
    }
    Ok((u16::from_be_bytes([h[6], h[7]]), end))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MACS: [u8; 12] = [0xde, 0xad, 0xbe, 0xef, 0, 1, 0xde, 0xad, 0xbe, 0xef, 0, 2];

    #[test]
    fn ethernet_with_qinq_and_vlan_tags() {
        let mut f = MACS.to_vec();
        f.extend_from_slice(&[0x88, 0xa8, 0x00, 0x64]); // S-tag, VID 100
        f.extend_from_slice(&[0x81, 0x00, 0x00, 0xc8]); // C-tag, VID 200
        f.extend_from_slice(&[0x81, 0x00, 0x00, 0x01]); // a third tag
        f.extend_from_slice(&[0x86, 0xdd]);
        f.push(0x60);
        assert_eq!(locate(LinkType::Ethernet, &f), Ok((Network::Ipv6, 26)));
    }

    #[test]
    fn vlan_stack_running_off_the_end() {
        let mut f = MACS.to_vec();
        for _ in 0..5 {
            f.extend_from_slice(&[0x81, 0x00, 0x00, 0x01]);
        }
        f.extend_from_slice(&[0x81, 0x00]);
        assert_eq!(
            locate(LinkType::Ethernet, &f),
            Err(SkipReason::TruncatedLinkHeader)
        );
        // A frame that is all VLAN tags ends too.
        let f = [0x81u8, 0x00].repeat(100);
        assert_eq!(
            locate(LinkType::Ethernet, &f),
            Err(SkipReason::TruncatedLinkHeader)
        );
    }

    #[test]
    fn ethernet_arp_is_not_ip() {
        let mut f = MACS.to_vec();
        f.extend_from_slice(&[0x08, 0x06, 0, 1]);
        assert_eq!(locate(LinkType::Ethernet, &f), Err(SkipReason::NotIp));
        assert_eq!(
            locate(LinkType::Ethernet, &MACS[..10]),
            Err(SkipReason::TruncatedLinkHeader)
        );
    }

    #[test]
    fn fddi_llc_snap() {
        // Frame control 0x50, two addresses, then AA AA 03 00 00 00 08 00.
        let mut f = vec![0x50];
        f.extend_from_slice(&MACS);
        f.extend_from_slice(&[0xaa, 0xaa, 0x03, 0, 0, 0, 0x08, 0x00, 0x45]);
        assert_eq!(locate(LinkType::Fddi, &f), Ok((Network::Ipv4, 21)));
        f[13] = 0x42; // spanning-tree LLC, not SNAP
        assert_eq!(locate(LinkType::Fddi, &f), Err(SkipReason::NotIp));
    }

    #[test]
    fn null_loopback_either_byte_order() {
        assert_eq!(
            locate(LinkType::Null, &[2, 0, 0, 0, 0x45]),
            Ok((Network::Ipv4, 4))
        );
        assert_eq!(
            locate(LinkType::Null, &[0, 0, 0, 30, 0x60]),
            Ok((Network::Ipv6, 4))
        );
        assert_eq!(
            locate(LinkType::Null, &[28, 0, 0, 0, 0x60]),
            Ok((Network::Ipv6, 4))
        );
        assert_eq!(
            locate(LinkType::Null, &[7, 0, 0, 0]),
            Err(SkipReason::NotIp)
        );
        assert_eq!(
            locate(LinkType::Loop, &[0, 0, 0, 24]),
            Ok((Network::Ipv6, 4))
        );
    }

    #[test]
    fn linux_cooked_v1_and_v2() {
        let mut sll = vec![0, 0, 0, 1, 0, 6];
        sll.extend_from_slice(&[0; 8]);
        sll.extend_from_slice(&[0x08, 0x00]);
        assert_eq!(locate(LinkType::LinuxSll, &sll), Ok((Network::Ipv4, 16)));
        let mut sll2 = vec![0x86, 0xdd, 0, 0, 0, 0, 0, 2, 0, 1, 0, 6];
        sll2.extend_from_slice(&[0; 8]);
        assert_eq!(locate(LinkType::LinuxSll2, &sll2), Ok((Network::Ipv6, 20)));
        assert_eq!(
            locate(LinkType::LinuxSll2, &sll2[..19]),
            Err(SkipReason::TruncatedLinkHeader)
        );
    }

    #[test]
    fn raw_ip_by_version_nibble() {
        assert_eq!(locate(LinkType::RawIp, &[0x45]), Ok((Network::Ipv4, 0)));
        assert_eq!(locate(LinkType::RawIp, &[0x60]), Ok((Network::Ipv6, 0)));
        assert_eq!(locate(LinkType::RawIp, &[0x10]), Err(SkipReason::NotIp));
        assert_eq!(
            locate(LinkType::RawIp, &[]),
            Err(SkipReason::TruncatedIpHeader)
        );
        assert_eq!(
            locate(LinkType::Other(147), &[0x45]),
            Err(SkipReason::UnsupportedLinkType)
        );
    }
}
