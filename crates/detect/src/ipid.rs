//! The sender's IPv4 ID as a packet counter, per direction of a connection: whether a
//! side's IDs count its packets, and how many numbers a packet skipped.
//!
//! Linux numbers the IPv4 packets of a connected socket sequentially (`ip_select_ident`
//! with a per-socket counter, one ID per segment of a TSO/GSO packet), so at the
//! receiver a packet whose ID skips k numbers after the sender's previous packet had k
//! transmissions lost before the capture point, and an ID newer than every earlier one
//! was sent later. Used by `recovery` (hidden losses, retransmission or reordering) and
//! `server_think_time` (a response whose first transmissions were lost).
//!
//! ID 0 is not a count: Linux sends its SYN/ACK with 0, and some stacks zero the ID of
//! every DF packet. A packet of `n` bytes stands for `n / segment size` (rounded up)
//! IDs: a GRO-merged packet at the receiver, or a TSO one at the sender.

use crate::detector::Segment;

/// More missing IP IDs than this before a segment is a capture gap or another flow's
/// doing, not lost transmissions of one segment (Linux gives up after 15 retries,
/// `tcp_retries2`).
pub const MAX_HIDDEN: u32 = 15;
/// Steps of the sender's IP ID between consecutive packets: at least this many seen,
/// and at most one in `ID_NOISE` irregular, before the IDs are trusted as a counter.
const MIN_ID_STEPS: u32 = 4;
const ID_NOISE: u32 = 8;
/// Segment size assumed when the handshake was not captured (Ethernet with timestamps).
const DEFAULT_SEGMENT: u32 = 1448;

/// Is `a` later than `b` on a 16-bit counter?
pub fn id_after(a: u16, b: u16) -> bool {
    (a.wrapping_sub(b) as i16) > 0
}

/// One side's IDs so far.
#[derive(Default, Debug)]
struct Counter {
    /// The last nonzero IP ID from this side and that packet's payload length.
    last: Option<(u16, u32)>,
    max: Option<u16>,
    regular: u32,
    irregular: u32,
}

/// What one packet's IP ID says, judged on the sender's packets before it (its own
/// step may be the gap).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct IdStep {
    /// The sender's IDs count its packets (enough regular steps, few irregular ones).
    pub counter: bool,
    /// Too few steps seen to call the IDs a counter, and none irregular: a small
    /// forward step is still read as one (a short exchange: request, ACK, a response
    /// after a chain of lost transmissions).
    pub early: bool,
    /// When the ID is later than the sender's previous one: how many numbers it skipped
    /// beyond the ones that packet stood for.
    pub skipped: Option<u32>,
    /// Whether the ID is later than every earlier one from the sender (None without a
    /// usable ID on this packet or before it).
    pub newest: Option<bool>,
}

impl IdStep {
    /// Transmissions of this sender lost before the capture point just before this
    /// packet, when its IDs can tell (1 to `MAX_HIDDEN`); None when none or unknown.
    pub fn hidden(&self) -> Option<u32> {
        let k = self.skipped?;
        ((self.counter || self.early) && (1..=MAX_HIDDEN).contains(&k)).then_some(k)
    }
}

/// Both directions of one connection: [client → server, server → client].
#[derive(Default, Debug)]
pub struct IpIds {
    dirs: [Counter; 2],
    /// The MSS each side announced on its SYN, and whether both used timestamps.
    syn_mss: [Option<u16>; 2],
    timestamps: bool,
}

impl IpIds {
    /// Takes in one packet (capture duplicates left out by the caller) and says what its
    /// ID showed.
    pub fn observe(&mut self, seg: &Segment<'_>) -> IdStep {
        let pkt = seg.pkt;
        let x = if seg.ev.from_client { 0 } else { 1 };
        if pkt.flags.syn() {
            self.syn_mss[x] = pkt.options.mss;
            if pkt.flags.ack() {
                self.timestamps &= pkt.options.timestamps.is_some();
            } else {
                self.timestamps = pkt.options.timestamps.is_some();
            }
        }
        // Data from `x` is cut to the MSS its peer announced, less the timestamp option.
        let ts_len = if self.timestamps { 12 } else { 0 };
        let seg_size = self.syn_mss[1 - x]
            .map(|m| u32::from(m).saturating_sub(ts_len).max(1))
            .unwrap_or(DEFAULT_SEGMENT)
            .max(1);

        let d = &mut self.dirs[x];
        let ip_id = pkt.ip_id.filter(|&id| id != 0);
        let mut step = IdStep {
            counter: d.regular >= MIN_ID_STEPS && d.irregular * ID_NOISE <= d.regular,
            early: d.irregular == 0 && d.regular < MIN_ID_STEPS,
            skipped: None,
            newest: None,
        };
        let Some(id) = ip_id else {
            return step;
        };
        if let Some((last, last_len)) = d.last {
            // No division for the usual packet of at most one segment.
            let expected = if last_len <= seg_size {
                1
            } else {
                last_len.div_ceil(seg_size)
            };
            let delta = id.wrapping_sub(last);
            if u32::from(delta) == expected {
                d.regular += 1;
            } else {
                d.irregular += 1;
            }
            if id_after(id, last) {
                step.skipped = Some(u32::from(delta).saturating_sub(expected));
            }
        }
        step.newest = d.max.map(|m| id_after(id, m));
        d.last = Some((id, seg.ev.payload_len));
        if d.max.is_none_or(|m| id_after(id, m)) {
            d.max = Some(id);
        }
        step
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ip_ids_wrap() {
        assert!(id_after(0x0001, 0xffff));
        assert!(!id_after(0x7328, 0x7329));
    }

    #[test]
    fn hidden_needs_a_counter_and_a_bounded_skip() {
        let s = |counter, early, skipped| IdStep {
            counter,
            early,
            skipped,
            newest: None,
        };
        assert_eq!(s(true, false, Some(3)).hidden(), Some(3));
        assert_eq!(s(false, true, Some(1)).hidden(), Some(1));
        assert_eq!(s(false, false, Some(3)).hidden(), None);
        assert_eq!(s(true, false, Some(0)).hidden(), None);
        assert_eq!(s(true, false, Some(16)).hidden(), None);
        assert_eq!(s(true, false, None).hidden(), None);
    }
}
