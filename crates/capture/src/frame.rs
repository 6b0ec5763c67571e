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
            other => LinkType::Other(other),
        }
    }
}

/// One captured record, borrowed from the reader until the next call.
#[derive(Copy, Clone, Debug)]
pub struct Frame<'a> {
    /// 1-based frame number, counting every record Wireshark counts as a frame.
    pub number: u64,
    pub ts: Timestamp,
    pub link: LinkType,
    /// Index of the pcapng interface (0 for pcap).
    pub interface: u32,
    /// Captured bytes (may be shorter than `orig_len` when the snaplen cut it).
    pub data: &'a [u8],
    /// Length of the packet on the wire.
    pub orig_len: u32,
}

#[cfg(test)]
mod tests {
    use super::Timestamp;

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
}
