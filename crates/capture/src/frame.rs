//! The frame: one captured record with its number, time and link type.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Capture time in nanoseconds since the Unix epoch. The only time type in tcpwhy:
/// libraries never read the clock, every instant comes from the capture.
#[derive(
    Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct Timestamp(pub i64);

impl Timestamp {
    pub const fn from_nanos(ns: i64) -> Self {
        Timestamp(ns)
    }
    pub const fn nanos(self) -> i64 {
        self.0
    }
    /// Signed difference `self - earlier` in nanoseconds (saturating).
    pub const fn since(self, earlier: Timestamp) -> i64 {
        self.0.saturating_sub(earlier.0)
    }
    /// Time from `earlier` to `self` in nanoseconds, 0 when `earlier` is later (capture
    /// clocks step back: frames out of order, merged captures). For durations and
    /// gaps, which are never negative.
    pub const fn elapsed_since(self, earlier: Timestamp) -> u64 {
        let d = self.since(earlier);
        if d < 0 {
            0
        } else {
            d as u64
        }
    }
    /// Seconds as f64, for display.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
}

impl fmt::Display for Timestamp {
    /// `seconds.nanoseconds` since the epoch, like tshark's `frame.time_epoch`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let secs = self.0.div_euclid(1_000_000_000);
        let nanos = self.0.rem_euclid(1_000_000_000);
        write!(f, "{secs}.{nanos:09}")
    }
}

/// Link-layer header type of a frame (LINKTYPE_* numbers from tcpdump.org).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum LinkType {
    /// LINKTYPE_NULL (0): BSD loopback, 4-byte address family in host byte order.
    Null,
    /// LINKTYPE_ETHERNET (1), with 802.1Q / QinQ tags.
    Ethernet,
    /// LINKTYPE_FDDI (10): FDDI + 802.2 LLC/SNAP.
    Fddi,
    /// LINKTYPE_RAW (101) and DLT_RAW (12/14 on some systems): raw IPv4 or IPv6.
    RawIp,
    /// LINKTYPE_LINUX_SLL (113): Linux cooked capture v1.
    LinuxSll,
    /// LINKTYPE_IPV4 (228).
    Ipv4,
    /// LINKTYPE_IPV6 (229).
    Ipv6,
    /// LINKTYPE_LINUX_SLL2 (276): Linux cooked capture v2.
    LinuxSll2,
    /// LINKTYPE_LOOP (108): OpenBSD loopback, address family in network byte order.
    Loop,
    /// LINKTYPE_PPP (9): PPP (RFC 1661), with or without the HDLC-like 0xff 0x03.
    Ppp,
    /// LINKTYPE_PPP_HDLC (50): PPP in HDLC-like framing, or Cisco PPP with HDLC framing.
    PppHdlc,
    /// LINKTYPE_C_HDLC (104): Cisco HDLC, an EtherType after address and control.
    CiscoHdlc,
    /// LINKTYPE_IEEE802_11 (105): 802.11 frames; data frames carry LLC/SNAP.
    Ieee80211,
    /// LINKTYPE_IEEE802_11_RADIOTAP (127): a radiotap header, then an 802.11 frame.
    Radiotap,
    /// LINKTYPE_NFLOG (239): Linux netfilter log, TLVs of which one is the packet.
    Nflog,
    /// LINKTYPE_IPOIB (242): IP over InfiniBand (RFC 4391), a 4-byte header.
    IpOverIb,
    /// Anything else: frames are skipped and counted as an unsupported link type.
    Other(u32),
}

impl LinkType {
    /// Maps a LINKTYPE_* number as found in pcap and pcapng headers.
    pub fn from_linktype(n: u32) -> Self {
        match n {
            0 => LinkType::Null,
            1 => LinkType::Ethernet,
            10 => LinkType::Fddi,
            12 | 14 | 101 => LinkType::RawIp,
            108 => LinkType::Loop,
            113 => LinkType::LinuxSll,
            228 => LinkType::Ipv4,
            229 => LinkType::Ipv6,
            276 => LinkType::LinuxSll2,
            9 => LinkType::Ppp,
            50 => LinkType::PppHdlc,
            104 => LinkType::CiscoHdlc,
            105 => LinkType::Ieee80211,
            127 => LinkType::Radiotap,
            239 => LinkType::Nflog,
            242 => LinkType::IpOverIb,
            other => LinkType::Other(other),
        }
    }

    /// The LINKTYPE_* number (101 for raw IP, whichever DLT the file used).
    pub const fn number(self) -> u32 {
        match self {
            LinkType::Null => 0,
            LinkType::Ethernet => 1,
            LinkType::Fddi => 10,
            LinkType::RawIp => 101,
            LinkType::LinuxSll => 113,
            LinkType::Ipv4 => 228,
            LinkType::Ipv6 => 229,
            LinkType::LinuxSll2 => 276,
            LinkType::Loop => 108,
            LinkType::Ppp => 9,
            LinkType::PppHdlc => 50,
            LinkType::CiscoHdlc => 104,
            LinkType::Ieee80211 => 105,
            LinkType::Radiotap => 127,
            LinkType::Nflog => 239,
            LinkType::IpOverIb => 242,
            LinkType::Other(n) => n,
        }
    }

    /// The LINKTYPE_* name of a link type number (tcpdump.org's list, without the
    /// prefix), for saying which link type a file has that tcpwhy does not read; `None`
    /// for numbers not in the table.
    pub fn name_of(n: u32) -> Option<&'static str> {
        LINKTYPE_NAMES
            .binary_search_by_key(&n, |(k, _)| *k)
            .ok()
            .map(|i| LINKTYPE_NAMES[i].1)
    }
}

/// LINKTYPE_* numbers and names (tcpdump.org "Link-layer header types"), sorted by number:
/// the ones a capture a user brings is likely to have. A number not here is still named
/// by its number.
const LINKTYPE_NAMES: [(u32, &str); 65] = [
    (0, "NULL"),
    (1, "ETHERNET"),
    (3, "AX25"),
    (6, "IEEE802_5"),
    (7, "ARCNET_BSD"),
    (8, "SLIP"),
    (9, "PPP"),
    (10, "FDDI"),
    (50, "PPP_HDLC"),
    (51, "PPP_ETHER"),
    (100, "ATM_RFC1483"),
    (101, "RAW"),
    (104, "C_HDLC"),
    (105, "IEEE802_11"),
    (107, "FRELAY"),
    (108, "LOOP"),
    (113, "LINUX_SLL"),
    (114, "LTALK"),
    (117, "PFLOG"),
    (119, "IEEE802_11_PRISM"),
    (122, "IP_OVER_FC"),
    (123, "SUNATM"),
    (127, "IEEE802_11_RADIOTAP"),
    (129, "ARCNET_LINUX"),
    (138, "APPLE_IP_OVER_IEEE1394"),
    (139, "MTP2_WITH_PHDR"),
    (140, "MTP2"),
    (141, "MTP3"),
    (142, "SCCP"),
    (143, "DOCSIS"),
    (144, "LINUX_IRDA"),
    (147, "USER0"),
    (148, "USER1"),
    (149, "USER2"),
    (150, "USER3"),
    (163, "IEEE802_11_AVS"),
    (166, "PPP_PPPD"),
    (169, "GPRS_LLC"),
    (177, "LINUX_LAPD"),
    (178, "JUNIPER_ETHER"),
    (187, "BLUETOOTH_HCI_H4"),
    (189, "USB_LINUX"),
    (192, "PPI"),
    (195, "IEEE802_15_4_WITHFCS"),
    (197, "ERF"),
    (201, "BLUETOOTH_HCI_H4_WITH_PHDR"),
    (204, "PPP_WITH_DIR"),
    (205, "C_HDLC_WITH_DIR"),
    (220, "USB_LINUX_MMAPPED"),
    (226, "IPNET"),
    (227, "CAN_SOCKETCAN"),
    (228, "IPV4"),
    (229, "IPV6"),
    (230, "IEEE802_15_4_NOFCS"),
    (231, "DBUS"),
    (239, "NFLOG"),
    (240, "NETANALYZER"),
    (241, "NETANALYZER_TRANSPARENT"),
    (242, "IPOIB"),
    (247, "INFINIBAND"),
    (249, "USBPCAP"),
    (251, "BLUETOOTH_LE_LL"),
    (253, "NETLINK"),
    (258, "PKTAP"),
    (276, "LINUX_SLL2"),
];

/// One captured record, borrowed from the reader until the next call.
#[derive(Copy, Clone, Debug)]
pub struct Frame<'a> {
    /// 1-based frame number, counting every record Wireshark counts as a frame.
    pub number: u64,
    pub ts: Timestamp,
    /// `ts` is not the frame's own time: the pcap record's fraction of a second was out
    /// of range (set by the reader, `ts` its whole second), or, set by the pass that
    /// reads the frames in file order, the frame was earlier than one before it or out
    /// of range, and `ts` is the latest trusted time before it (`SkipCounts::observe_time`).
    pub ts_untrusted: bool,
    pub link: LinkType,
    /// Index of the pcapng interface (0 for pcap).
    pub interface: u32,
    /// Captured bytes (may be shorter than `orig_len` when the snaplen cut it).
    pub data: &'a [u8],
    /// Length of the packet on the wire.
    pub orig_len: u32,
}

/// A [`Frame`] with its captured bytes named by position instead of borrowed: what one
/// thread that reads a capture hands to another that decodes the frame later. The bytes
/// are `len` bytes at `start` of a buffer both know: the memory map of the file
/// ([`crate::MappedBytes::bytes`]), or bytes the reader copied next to the frame (a
/// stream, which cannot be read twice).
#[derive(Copy, Clone, Debug)]
pub struct FrameAt {
    pub number: u64,
    pub ts: Timestamp,
    pub ts_untrusted: bool,
    pub link: LinkType,
    pub interface: u32,
    pub orig_len: u32,
    /// Where the captured bytes start in the buffer.
    pub start: usize,
    /// Captured bytes: at most [`crate::bounds::MAX_CAPTURED_LEN`].
    pub len: u32,
}

impl FrameAt {
    /// `frame`, whose captured bytes are at `start` of the buffer.
    pub fn new(frame: &Frame<'_>, start: usize) -> FrameAt {
        FrameAt {
            number: frame.number,
            ts: frame.ts,
            ts_untrusted: frame.ts_untrusted,
            link: frame.link,
            interface: frame.interface,
            orig_len: frame.orig_len,
            start,
            // A frame's captured length is bounded far below u32::MAX by the readers.
            len: u32::try_from(frame.data.len()).unwrap_or(u32::MAX),
        }
    }

    /// The frame again, its bytes read from `buffer`; bytes that are not all there (the
    /// wrong buffer) give an empty frame rather than a panic.
    #[inline]
    pub fn frame<'a>(&self, buffer: &'a [u8]) -> Frame<'a> {
        let data = buffer
            .get(self.start..self.start.saturating_add(self.len as usize))
            .unwrap_or(&[]);
        Frame {
            number: self.number,
            ts: self.ts,
            ts_untrusted: self.ts_untrusted,
            link: self.link,
            interface: self.interface,
            data,
            orig_len: self.orig_len,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elapsed_since_saturates_at_zero() {
        let (a, b) = (Timestamp(1_000_000_000), Timestamp(1_002_500_000));
        assert_eq!(b.elapsed_since(a), 2_500_000);
        // A clock stepping back is no negative duration.
        assert_eq!(a.elapsed_since(b), 0);
        assert_eq!(
            Timestamp(i64::MAX).elapsed_since(Timestamp(i64::MIN)),
            i64::MAX as u64
        );
    }

    #[test]
    fn frame_at_gives_the_frame_back_from_its_buffer() {
        let buffer = [9u8, 9, 0x45, 0, 0, 40, 7];
        let f = Frame {
            number: 12,
            ts: Timestamp(5),
            ts_untrusted: false,
            link: LinkType::RawIp,
            interface: 3,
            data: &buffer[2..6],
            orig_len: 1500,
        };
        let at = FrameAt::new(&f, 2);
        assert_eq!((at.start, at.len), (2, 4));
        let g = at.frame(&buffer);
        assert_eq!(g.data, [0x45, 0, 0, 40]);
        assert_eq!(
            (g.number, g.ts, g.link, g.interface, g.orig_len),
            (12, Timestamp(5), LinkType::RawIp, 3, 1500)
        );
        // A buffer too short for it: an empty frame, no panic.
        assert!(at.frame(&buffer[..5]).data.is_empty());
    }
}
