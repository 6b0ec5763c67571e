//! The sender's IPv4 ID as a packet counter, per direction of a connection: whether a
//! side's IDs count its packets, and how many numbers a packet skipped.
//!
//! Linux numbers the IPv4 packets of a connected socket sequentially (`ip_select_ident`
//! with a per-socket counter, one ID per segment of a TSO/GSO packet), so at the
//! receiver a packet whose ID skips k numbers after the sender's previous packet had k
//! transmissions lost before the capture point, and an ID newer than every earlier one
//! was sent later. The tracker keeps one [`IpIds`] per connection and feeds it every
//! packet but capture duplicates; its [`IdStep`] is [`SegmentEvent::ip_id`], read by the
//! detectors `recovery` (hidden losses, retransmission or reordering) and
//! `server_think_time` (a response whose first transmissions were lost). `reordering` (a
//! late original is older than an ID already seen) keeps its own [`SenderIds`] per
//! direction, fed only its in-order data segments.
//!
//! [`SegmentEvent::ip_id`]: crate::SegmentEvent::ip_id
//!
//! Three tests of whether a sender's IDs can be read, for two questions:
//! - [`SenderIds::counter`]: the IDs count packets exactly (each step is the number of
//!   IDs the previous packet stood for), so a bigger step counts lost transmissions.
//! - [`SenderIds::ordered`]: the same counted from the latest ID, so that packets that
//!   arrive late (steps back to an older ID) do not count against it: an ID older than
//!   the latest was sent before it (`recovery`: a late original, not a retransmission).
//! - [`SenderIds::increasing`]: the IDs mostly go up ([`MIN_INCREASING_SHARE`] of the
//!   steps), enough to order two packets by sending time even when the packets fed in
//!   are not all the sender's (other packets take numbers in between).
//!
//! ID 0 is not a count: Linux sends its SYN/ACK with 0, and some stacks zero the ID of
//! every DF packet ([`IpIds`] leaves it out). A packet of `n` bytes stands for
//! `n / segment size` (rounded up) IDs: a GRO-merged packet at the receiver, or a TSO one
//! at the sender.

use tcpwhy_capture::Packet;

/// More missing IP IDs than this before a segment is a capture gap or another flow's
/// doing, not lost transmissions of one segment (Linux gives up after 15 retries,
/// `tcp_retries2`).
pub const MAX_HIDDEN: u32 = 15;
/// Steps of the sender's IP ID between consecutive packets: at least this many seen,
/// and at most one in `ID_NOISE` irregular, before the IDs are trusted as a counter.
const MIN_ID_STEPS: u32 = 4;
const ID_NOISE: u32 = 8;
/// Segment size assumed when the handshake was not captured (Ethernet with timestamps).
const DEFAULT_SEGMENT: u32 = crate::model::ETHERNET_TIMESTAMPS_MSS as u32;
/// [`SenderIds::increasing`]: at least this share of the steps seen go to a later ID
/// (Linux's per-connection counter); random or zero IDs (some BSDs) fail it (IPv6 has
/// no ID).
pub const MIN_INCREASING_SHARE: f64 = 0.9;
/// Steps needed before [`SenderIds::increasing`] judges whether the IDs go up.
pub const MIN_INCREASING_STEPS: u32 = 8;

/// The IDs a packet of `len` payload bytes stands for with segments of `seg_size`: one,
/// or one per segment of a TSO/GSO or GRO packet (no division for the usual packet of at
/// most one segment).
#[inline]
fn stood_for(len: u32, seg_size: u32) -> u32 {
    let seg_size = seg_size.max(1);
    if len <= seg_size {
        1
    } else {
        len.div_ceil(seg_size)
    }
}

/// Is `a` later than `b` on a 16-bit counter?
pub fn id_after(a: u16, b: u16) -> bool {
    (a.wrapping_sub(b) as i16) > 0
}

/// One sender's IP IDs so far (one direction of a connection), over the packets its
/// owner records: every packet with a nonzero ID for [`IpIds`], the in-order data
/// segments for `reordering`.
#[derive(Default, Debug)]
pub struct SenderIds {
    /// The last ID recorded and that packet's payload length.
    last: Option<(u16, u32)>,
    /// The latest ID recorded (16-bit modular order).
    max: Option<u16>,
    /// Steps of exactly the IDs the previous packet stood for, and other steps.
    regular: u32,
    irregular: u32,
    /// Steps to a later ID (of `regular + irregular`).
    forward: u32,
    /// The payload length of the packet with the latest ID.
    max_len: u32,
    /// Steps from the latest ID to a later one: of exactly the IDs that packet stood for,
    /// and other steps ([`Self::ordered`]).
    ahead_regular: u32,
    ahead_irregular: u32,
}

impl SenderIds {
    /// Records one packet's ID, `len` its payload bytes, `seg_size` the sender's segment
    /// size; when the ID is later than the previous one, says how many numbers it
    /// skipped beyond the ones that packet stood for.
    pub fn record(&mut self, id: u16, len: u32, seg_size: u32) -> Option<u32> {
        let mut skipped = None;
        if let Some((last, last_len)) = self.last {
            let expected = stood_for(last_len, seg_size);
            let delta = id.wrapping_sub(last);
            if u32::from(delta) == expected {
                self.regular = self.regular.saturating_add(1);
            } else {
                self.irregular = self.irregular.saturating_add(1);
            }
            if id_after(id, last) {
                self.forward = self.forward.saturating_add(1);
                skipped = Some(u32::from(delta).saturating_sub(expected));
            }
        }
        self.last = Some((id, len));
        if self.max.is_none_or(|m| id_after(id, m)) {
            self.max = Some(id);
            self.max_len = len;
        }
        skipped
    }

    /// Counts the step from the latest ID, `max`, to a later `id` for [`Self::ordered`],
    /// before `id` is recorded (only [`IpIds`] asks that question: `reordering`'s IDs do
    /// not pay for it).
    #[inline]
    fn note_step_from_newest(&mut self, max: u16, id: u16, seg_size: u32) {
        if u32::from(id.wrapping_sub(max)) == stood_for(self.max_len, seg_size) {
            self.ahead_regular = self.ahead_regular.saturating_add(1);
        } else {
            self.ahead_irregular = self.ahead_irregular.saturating_add(1);
        }
    }

    /// The IDs count packets as seen from the latest one: at least `MIN_ID_STEPS`
    /// steps to a later ID of exactly the IDs the latest packet stood for, at most one in
    /// `ID_NOISE` otherwise; steps back to an older ID are not counted. A counter whose
    /// late packets arrive after later ones ([`Self::counter`] sees two irregular
    /// steps for each, [`Self::ordered`] one: the step that skipped its ID), so an ID
    /// older than the latest is a packet sent before it.
    pub fn ordered(&self) -> bool {
        self.ahead_regular >= MIN_ID_STEPS
            && self.ahead_irregular.saturating_mul(ID_NOISE) <= self.ahead_regular
    }

    /// The IDs count packets: at least `MIN_ID_STEPS` steps of exactly the IDs the
    /// previous packet stood for, and at most one in `ID_NOISE` steps otherwise.
    pub fn counter(&self) -> bool {
        self.regular >= MIN_ID_STEPS && self.irregular.saturating_mul(ID_NOISE) <= self.regular
    }

    /// Too few steps seen to call the IDs a counter, and none irregular.
    pub fn early(&self) -> bool {
        self.irregular == 0 && self.regular < MIN_ID_STEPS
    }

    /// The IDs go up: at least [`MIN_INCREASING_STEPS`] steps, and at least
    /// [`MIN_INCREASING_SHARE`] of them to a later ID. Weaker than [`Self::counter`]
    /// (steps of any size), for ordering packets rather than counting the missing ones.
    pub fn increasing(&self) -> bool {
        let steps = self.regular.saturating_add(self.irregular);
        steps >= MIN_INCREASING_STEPS
            && f64::from(self.forward) >= MIN_INCREASING_SHARE * f64::from(steps)
    }

    /// The latest ID recorded.
    pub fn newest(&self) -> Option<u16> {
        self.max
    }

    /// Was `id` sent before the latest ID recorded (`Some(true)`) or after it
    /// (`Some(false)`)? None before any ID, and for the latest ID itself.
    pub fn older_than_newest(&self, id: u16) -> Option<bool> {
        self.max.filter(|&m| m != id).map(|m| id_after(m, id))
    }
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
    /// The sender's IDs count its packets as seen from the latest one
    /// ([`SenderIds::ordered`]): they order its packets by `newest` even where late
    /// originals make too many steps irregular for a counter.
    pub ordered: bool,
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

/// Both directions of one connection, indexed like the tracker's directions (`x`: 0
/// for the sender of the connection's first packet).
#[derive(Default, Debug)]
pub struct IpIds {
    dirs: [SenderIds; 2],
    /// The MSS each side announced on its SYN, and whether both used timestamps.
    syn_mss: [Option<u16>; 2],
    timestamps: bool,
}

impl IpIds {
    /// Takes in one packet from direction `x` (capture duplicates left out by the
    /// caller) and says what its ID showed.
    pub fn observe(&mut self, x: usize, pkt: &Packet<'_>) -> IdStep {
        let x = x & 1;
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
        let mut step = IdStep {
            counter: d.counter(),
            early: d.early(),
            ordered: d.ordered(),
            skipped: None,
            newest: None,
        };
        let Some(id) = pkt.ip_id.filter(|&id| id != 0) else {
            return step;
        };
        if let Some(m) = d.newest() {
            let later = id_after(id, m);
            step.newest = Some(later);
            if later {
                d.note_step_from_newest(m, id, seg_size);
            }
        }
        step.skipped = d.record(id, pkt.payload_len, seg_size);
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
            ordered: counter,
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

    /// s51-010's server: IDs counting its packets, every 13th one arriving 5 ms late.
    /// Two of each 13 steps are irregular (> 1 in 8: no counter), one of each 13 from
    /// the latest ID. An ID space jumping about (zeek-tcp-retransmit-fast009's server:
    /// 0x7f3d, 0x7647, 0x754c …) orders nothing.
    #[test]
    fn late_packets_of_a_counter_keep_it_ordered() {
        // As IpIds::observe feeds them.
        let feed = |ids: &mut SenderIds, id: u16| {
            if let Some(m) = ids.newest().filter(|&m| id_after(id, m)) {
                ids.note_step_from_newest(m, id, 1448);
            }
            ids.record(id, 1448, 1448);
        };
        let mut ids = SenderIds::default();
        let mut id = 0x3000u16;
        for _ in 0..10 {
            // Packets 0..13, the 5th sent now but arriving after the 8th.
            let late = id.wrapping_add(5);
            for k in 0..13u16 {
                if k == 5 {
                    continue;
                }
                feed(&mut ids, id.wrapping_add(k));
                if k == 8 {
                    feed(&mut ids, late);
                }
            }
            id = id.wrapping_add(13);
        }
        assert!(!ids.counter());
        assert!(ids.ordered());
        assert_eq!(ids.older_than_newest(0x3005), Some(true));
        let mut jumpy = SenderIds::default();
        for id in [
            0x763d, 0x773d, 0x783d, 0x793d, 0x7a3d, 0x7647, 0x7747, 0x754c, 0x754d,
        ] {
            feed(&mut jumpy, id);
        }
        assert!(!jumpy.ordered());
    }

    #[test]
    fn increasing_needs_eight_steps_mostly_forward() {
        let mut ids = SenderIds::default();
        // 9 IDs = 8 steps, all forward but of irregular size (not a counter).
        for id in (0xfff0u16..=0xffff).step_by(2).chain([0x0002]) {
            ids.record(id, 1448, 1448);
        }
        assert!(ids.increasing());
        assert!(!ids.counter());
        assert_eq!(ids.newest(), Some(0x0002));
        assert_eq!(ids.older_than_newest(0xfffe), Some(true));
        assert_eq!(ids.older_than_newest(0x0003), Some(false));
        assert_eq!(ids.older_than_newest(0x0002), None);
        // One step back out of 9: 8/9 < 0.9.
        ids.record(0x0001, 1448, 1448);
        assert!(!ids.increasing());

        let mut few = SenderIds::default();
        for id in 1..=8 {
            few.record(id, 0, 1448);
        }
        assert!(!few.increasing(), "7 steps");
        assert!(few.counter(), "7 steps of 1 for empty packets");
    }
}
