//! Link layers: where the IP header starts and which IP version it is, for every link
//! type tcpwhy reads (Ethernet with any stack of VLAN tags, Linux cooked v1/v2, raw IP,
//! BSD null/loopback, OpenBSD loop, FDDI with 802.2 LLC/SNAP).

use super::bytes::{be16, be32};
use crate::decode::SkipReason;
use crate::frame::LinkType;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Network {
    Ipv4,
    Ipv6,
}

// EtherTypes (IEEE registry).
const ETHERTYPE_IPV4: u16 = 0x0800;
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

/// A VLAN tag: TCI (2) + the next EtherType (2).
const VLAN_TAG_LEN: usize = 4;

const ETHERNET_HEADER_LEN: usize = 14;
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
        LinkType::Other(_) => Err(SkipReason::UnsupportedLinkType),
    }
}

fn address_family(family: u32) -> Result<(Network, usize), SkipReason> {
    match family {
        AF_INET => Ok((Network::Ipv4, NULL_HEADER_LEN)),
        AF_INET6_BSD | AF_INET6_FREEBSD | AF_INET6_DARWIN => Ok((Network::Ipv6, NULL_HEADER_LEN)),
        _ => Err(SkipReason::NotIp),
    }
}

/// Follows an EtherType through VLAN tags (any number: each consumes four bytes, so
/// the walk ends at the end of the frame) and LLC/SNAP to IPv4 or IPv6.
/// `payload` is where the bytes described by `ty` start.
fn ethertype_chain(
    data: &[u8],
    mut ty: u16,
    mut payload: usize,
) -> Result<(Network, usize), SkipReason> {
    loop {
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
            _ => return Err(SkipReason::NotIp),
        }
    }
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
