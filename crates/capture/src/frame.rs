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

/// A [`Frame`] with its captured bytes named by position instead of borrowed: what one
/// thread that reads a capture hands to another that decodes the frame later. The bytes
/// are `len` bytes at `start` of a buffer both know: the memory map of the file
/// ([`crate::MappedBytes::bytes`]), or bytes the reader copied next to the frame (a
/// stream, which cannot be read twice).
#[derive(Copy, Clone, Debug)]
pub struct FrameAt {
    pub number: u64,
    pub ts: Timestamp,
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
