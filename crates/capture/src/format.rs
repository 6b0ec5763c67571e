//! What the pcap and pcapng parsers share: the step they report for the bytes at the start
//! of the window, byte-order helpers and timestamp scaling.

use crate::frame::{LinkType, Timestamp};

/// What a format parser found at the start of the window.
#[derive(Debug)]
pub(crate) enum Step {
    /// A packet record `record_len` bytes long whose captured bytes are
    /// `data_start..data_start + data_len` within it.
    Packet {
        record_len: usize,
        data_start: usize,
        data_len: usize,
        meta: RecordMeta,
    },
    /// A record that is not a packet (pcapng interface, statistics, …): skip it.
    Skip(usize),
    /// The window must hold at least this many bytes before the parser can go on.
    /// Always ≤ [`crate::bounds::MAX_BLOCK_LEN`].
    NeedBytes(usize),
    /// The record header is inconsistent.
    Damaged(String),
}

/// Per-record facts that go into a [`crate::Frame`].
#[derive(Copy, Clone, Debug)]
pub(crate) struct RecordMeta {
    pub ts: Timestamp,
    /// See [`crate::Frame::ts_untrusted`].
    pub ts_untrusted: bool,
    pub link: LinkType,
    pub interface: u32,
    pub orig_len: u32,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum ByteOrder {
    Little,
    Big,
}

impl ByteOrder {
    /// Reads a u32 at `at`; the caller has checked that four bytes are there, and a
    /// missing byte reads as zero rather than panicking.
    #[inline]
    pub(crate) fn u32_at(self, bytes: &[u8], at: usize) -> u32 {
        let mut b = [0u8; 4];
        if let Some(s) = bytes.get(at..at.saturating_add(4)) {
            b.copy_from_slice(s);
        }
        match self {
            ByteOrder::Little => u32::from_le_bytes(b),
            ByteOrder::Big => u32::from_be_bytes(b),
        }
    }

    #[inline]
    pub(crate) fn u16_at(self, bytes: &[u8], at: usize) -> u16 {
        let mut b = [0u8; 2];
        if let Some(s) = bytes.get(at..at.saturating_add(2)) {
            b.copy_from_slice(s);
        }
        match self {
            ByteOrder::Little => u16::from_le_bytes(b),
            ByteOrder::Big => u16::from_be_bytes(b),
        }
    }
}

const NANOS_PER_SEC: u64 = 1_000_000_000;

/// How to turn timestamp ticks into nanoseconds, chosen once per interface so the common
/// resolutions (µs, ns) cost one multiplication per frame.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum TickScale {
    /// Each tick is this many nanoseconds (resolutions 10^0 … 10^9 per second).
    NanosPerTick(u64),
    /// This many ticks per nanosecond (resolutions 10^10 … 10^19 per second).
    TicksPerNano(u64),
    /// Any other rate (powers of two): exact 128-bit arithmetic.
    TicksPerSec(u64),
}

impl TickScale {
    #[cfg(test)]
    pub(crate) const MICROS: TickScale = TickScale::NanosPerTick(1_000);
    #[cfg(test)]
    pub(crate) const NANOS: TickScale = TickScale::NanosPerTick(1);

    /// From the pcapng `if_tsresol` byte: the high bit selects a power of two, otherwise a
    /// power of ten (pcapng spec §4.2). `None` when it does not fit in 64 bits.
    pub(crate) fn from_tsresol(tsresol: u8) -> Option<TickScale> {
        const POWER_OF_TWO_FLAG: u8 = 0x80;
        let exponent = u32::from(tsresol & !POWER_OF_TWO_FLAG);
        if tsresol & POWER_OF_TWO_FLAG != 0 {
            let per_sec = 1u64.checked_shl(exponent)?;
            Some(TickScale::TicksPerSec(per_sec))
        } else {
            let per_sec = 10u64.checked_pow(exponent)?;
            if per_sec <= NANOS_PER_SEC {
                Some(TickScale::NanosPerTick(NANOS_PER_SEC / per_sec))
            } else {
                Some(TickScale::TicksPerNano(per_sec / NANOS_PER_SEC))
            }
        }
    }

    /// Nanoseconds for `ticks`, saturating at `i64::MAX` (year 2262).
    #[inline]
    pub(crate) fn to_nanos(self, ticks: u64) -> i64 {
        let ns: u64 = match self {
            TickScale::NanosPerTick(k) => ticks.saturating_mul(k),
            TickScale::TicksPerNano(k) => ticks / k.max(1),
            TickScale::TicksPerSec(per_sec) => {
                let ns = u128::from(ticks) * u128::from(NANOS_PER_SEC) / u128::from(per_sec.max(1));
                u64::try_from(ns).unwrap_or(u64::MAX)
            }
        };
        i64::try_from(ns).unwrap_or(i64::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tsresol_power_of_ten_and_two() {
        assert_eq!(TickScale::from_tsresol(6), Some(TickScale::MICROS));
        assert_eq!(TickScale::from_tsresol(9), Some(TickScale::NANOS));
        assert_eq!(
            TickScale::from_tsresol(0),
            Some(TickScale::NanosPerTick(NANOS_PER_SEC))
        );
        assert_eq!(
            TickScale::from_tsresol(12),
            Some(TickScale::TicksPerNano(1000))
        );
        assert_eq!(
            TickScale::from_tsresol(19),
            Some(TickScale::TicksPerNano(10_000_000_000))
        );
        assert_eq!(TickScale::from_tsresol(20), None);
        // 2^-10 s ticks: 1024 ticks are one second.
        let s = TickScale::from_tsresol(0x80 | 10).unwrap();
        assert_eq!(s.to_nanos(1024), 1_000_000_000);
        assert_eq!(s.to_nanos(1), 976_562);
        assert_eq!(
            TickScale::from_tsresol(0x80 | 63).map(|s| s.to_nanos(1)),
            Some(0)
        );
        assert_eq!(TickScale::from_tsresol(0x80 | 64), None);
    }

    #[test]
    fn tick_overflow_saturates() {
        assert_eq!(TickScale::MICROS.to_nanos(u64::MAX), i64::MAX);
        assert_eq!(TickScale::NANOS.to_nanos(u64::MAX), i64::MAX);
    }
}
