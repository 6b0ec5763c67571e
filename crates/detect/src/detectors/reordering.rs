//! `reordering`: segments of one flow delivered out of order, so that the receiver's
//! duplicate ACKs and SACKs made the sender retransmit data that was only late
//! (mechanisms.md "reordering", seed 03).
//!
//! Mechanism: a sender retransmits a segment as lost once enough data sent after it has
//! been SACKed: RFC 5681/6675 use a duplicate-ACK threshold of 3 segments; Linux starts
//! `tp->reordering` at `net.ipv4.tcp_reordering` (default 3; `tcp_force_fast_retransmit`
//! compares the highest SACKed sequence with snd_una + reordering·MSS), and RACK (RFC
//! 8985, the default) marks a segment lost when a later-sent one is delivered and a
//! reordering window has passed; before any reordering was seen that window is 0 once
//! `tp->reordering` segments are SACKed (`tcp_rack_reo_wnd`). A segment that is merely
//! late (veth delivery from a container enqueued on whichever CPU the sender runs on
//! without RPS, `enqueue_to_backlog`; per-packet ECMP/multipath; balance-rr bonding;
//! NIC queues without flow hashing) therefore triggers a fast retransmission and a
//! congestion-window reduction. The receiver reports the duplicate with a D-SACK (RFC
//! 2883); Linux then undoes the reduction (`tcp_try_undo_dsack`), raises `tp->reordering`
//! to the degree measured (at most `net.ipv4.tcp_max_reordering`, 300) and widens RACK's
//! window (min RTT/4 per step), which is why a steady reordering usually costs only its
//! first few events.
//!
//! Three ways a sequence hole can be filled, and how each is told apart:
//! - **reordering**: the missing segment is the *original*, arriving late. Where the
//!   capture sees it (at the receiver, or a tap after the reordering element): a segment
//!   below the highest sequence seen whose IPv4 ID is older than an ID already seen
//!   (Linux numbers a connection's packets in sending order; a retransmission gets a new,
//!   newer ID; used only when the direction's IDs do increase, `crate::ipid`'s
//!   [`SenderIds::increasing`] over its in-order data segments),
//!   else whose TSval is lower than one already seen (RFC 7323: TSvals never go back, a
//!   retransmission carries a current one), else — no ID, no timestamps — one that
//!   arrives within [`LATE_ORIGINAL_MAX_RTT_FRACTION`] of a handshake RTT after the hole
//!   opened (a retransmission needs the duplicate ACKs to reach the sender and come back:
//!   at least one RTT). Beyond the capture point (a sender-side capture): the peer's SACK
//!   blocks show a hole above its cumulative ACK (the first hole is followed; one behind
//!   it is dated from the moment data above it was first SACKed), and the ACK then
//!   covers it with no retransmission captured, less than half the minimum data → ACK
//!   time after it appeared; or the hole was retransmitted and the receiver answered with
//!   a D-SACK for that retransmission, or covered it sooner than half a minimum RTT after
//!   it (the original did). Where the snaplen cut the SACK blocks, repeated cumulative
//!   ACKs stand for them, and an ACK whose options are 8 bytes (one SACK block) longer
//!   than those of the ACKs before and after it is a D-SACK (sent once, RFC 2883 §4):
//!   it confirms the oldest retransmission into a SACK hole that its ACK covered no
//!   sooner than a needed one (sweep s4-010 at the server: 16 recoveries undone, the
//!   kernel's SACK-reordering counters 0, because each retransmission overtook its late
//!   original).
//! - **network loss**: the hole is filled only by a retransmission (a newer IP ID or
//!   TSval), or a retransmitted hole gets no D-SACK. Counted to say so in the finding;
//!   the `loss.*` detectors price it.
//! - **capture loss**: the receiver acknowledged bytes the capture never saw (the hole is
//!   never filled and the peer's cumulative ACK passes it; the tracker's `acked_unseen`).
//!   The data arrived; the capture missed it. Neither reordering nor loss: the finding
//!   counts it, and the report's summary line says the capture missed packets.
//!
//! A retransmission counts as triggered by reordering only when it was needless (a
//! D-SACK reported it, or the receiver had already acknowledged the data, or the hole
//! was covered too soon) and the reordering behind it reached the duplicate-ACK
//! threshold; at the receiver it must also arrive within [`TRIGGER_MAX_RTTS`] RTTs of the
//! late original, as a fast retransmission answering it would.
//!
//! Degree, measured per late segment as the kernel does (`tcp_check_sack_reordering`):
//! in segments, how many segments sent after it arrived before it (the highest sequence
//! seen, or SACKed, minus its end, over the MSS); in time, how long after the first of
//! them it came (at a sender-side capture: how long the SACK hole stayed open). Compared
//! with the duplicate-ACK threshold ([`LINUX_TCP_REORDERING`]): a degree at or above it
//! can trigger a fast retransmission.
//!
//! Cost: only the retransmissions reordering triggered cost time. Each recovery episode
//! (retransmissions less than one RTT apart are one episode) cuts the congestion window
//! to β = 0.7 (CUBIC, RFC 9438; Reno's 0.5 would cost more) and PRR sends at that rate for
//! about one round trip until the D-SACK makes Linux undo the cut: we charge
//! (1 − β) × RTT per episode. If the undo does not happen (no D-SACK, an old stack) the
//! window regrows over many RTTs and the true cost is larger: the estimate is a floor. A
//! reordering that triggered no retransmission (the sender absorbed it: every late segment
//! overtaken by fewer than `tp->reordering` segments, or RACK's reordering window long
//! enough) costs nothing and is still named, at zero cost (below `--min-cost` unless it is
//! 0): the path reorders, and a larger degree or lateness would start costing
//! retransmissions (issue 12, class 1: adjacent swaps at 1 ms RTT, TCPSACKReorder in the
//! hundreds, nothing retransmitted).
//!
//! Fix: on the host where the reordering happens, keep one flow on one CPU/queue: RPS
//! (`/sys/class/net/DEV/queues/rx-N/rps_cpus`) on the veth/container interface the flow
//! enters by (seed 03: 695 retransmissions → 0), RSS/flow hashing on NICs, per-flow (not
//! per-packet) ECMP and bonding hashes; on the sender, `net.ipv4.tcp_reordering` at the
//! observed degree so that the first events do not trigger retransmissions (seed 03:
//! 9 cut 695 to 149).
//!
//! Known false positives: stacks whose IP IDs are random or zero (then TSval or timing
//! decides; equal TSvals within one clock tick and no IP ID fall back to timing); a
//! retransmission the capture missed looks like a hole filled by nothing — at a
//! sender-side capture such holes are counted as reordering only when filled sooner than
//! a retransmission could have been. Behind a snaplen that cut the options, an ACK one
//! block longer than its neighbours is also what a receiver sends when a hole opens and
//! the very next segment fills it (a late segment too), and options of varying length
//! other than SACK (MPTCP's DSS) would look alike; a hole filled by a retransmission, or
//! a retransmission between the two ACKs, rules the D-SACK reading out.

use crate::detector::{
    emptied_deque, emptied_vec, ms, plural, Connection, Detector, Reusable, Segment, Slots,
};
use crate::finding::{Confidence, Finding, FindingId, Fix, Host};
use crate::ipid::SenderIds;
use tcpwhy_capture::Timestamp;
use tcpwhy_track::limits::ETHERNET_MSS;
use tcpwhy_track::{ConnSummary, SegmentKinds, Side, Vantage};

use crate::catalogue::Entry;

/// `reordering` in the catalogue (crate::catalogue).
pub const REORDERING: Entry = Entry {
    id: "reordering",
    title: "reordering",
    meaning: "late originals told apart from loss and from packets the capture missed; the degree vs `tcp_reordering`",
    fix_goes_to: "RPS on the receiving interface; `tcp_reordering`",
    part_of: None,
    decided_by: Some(crate::host::BundleSide::Server),
    judge: Some(crate::host::reordering::judge_reordering),
};

/// Linux's default `net.ipv4.tcp_reordering` (and RFC 5681's duplicate-ACK threshold).
pub const LINUX_TCP_REORDERING: u64 = 3;
/// Linux's default `net.ipv4.tcp_max_reordering`: the most `tp->reordering` can grow to.
pub const LINUX_TCP_MAX_REORDERING: u64 = 300;
/// CUBIC's multiplicative decrease (RFC 9438 §4.6; Linux `beta` 717/1024 ≈ 0.7).
pub const CUBIC_BETA: f64 = 0.7;
/// Without IP IDs or timestamps, a segment filling a hole sooner than this fraction of
/// the handshake RTT after it opened is the late original: a retransmission needs the
/// duplicate ACKs to reach the sender and come back, at least one RTT.
pub const LATE_ORIGINAL_MAX_RTT_FRACTION: f64 = 0.5;
/// At the receiver, a retransmission of data a late original had already delivered is
/// counted as triggered by the reordering only if it arrives within this many handshake
/// RTTs of the original (dup ACKs out, fast retransmission back: about one RTT); later
/// ones have another cause (seen in suricata-verify-tls-subjectaltname.pcap stream 14:
/// already-ACKed data resent six RTTs later).
pub const TRIGGER_MAX_RTTS: u64 = 2;
/// Open sequence holes remembered per direction (a capture with more is losing packets
/// wholesale; further holes are not followed).
const MAX_HOLES: usize = 256;
/// Ranges remembered per direction: filled by a late original, or seen out of order at
/// the capture point.
const MAX_RANGES: usize = 256;
/// Late segments whose lateness is kept for the median.
const MAX_LATE_SAMPLES: usize = 4096;
/// Late segments remembered whole (evidence, causes of retransmissions).
const MAX_LATE_RECORDS: usize = 256;
/// Retransmissions reordering triggered, remembered per direction.
const MAX_TRIGGERED: usize = 256;
/// Rises of the highest SACKed sequence remembered per SACK episode (past it, holes
/// behind the first are dated later than they opened: lateness is underestimated).
const MAX_HISTORY: usize = 1024;
/// Late segments cited as evidence (two lines each).
const CITED_LATE: usize = 2;
/// Triggered retransmissions cited (up to three lines each).
const CITED_TRIGGERED: usize = 2;

/// How a segment below the highest sequence number was recognised.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Proof {
    IpId { id: u16, max: u16 },
    TsVal { tsval: u32, max: u32 },
    Timing,
}

impl Proof {
    fn late_note(self) -> String {
        match self {
            Proof::IpId { id, max } => {
                format!("IP ID {id:#06x} older than {max:#06x} already seen: the original")
            }
            Proof::TsVal { tsval, max } => {
                format!("TSval {tsval} older than {max} already seen: the original")
            }
            Proof::Timing => "too soon for a retransmission: the original".into(),
        }
    }
}

/// A range of sequence numbers (relative, 64-bit) not yet seen at the capture point.
#[derive(Copy, Clone, Debug)]
struct Hole {
    start: u64,
    end: u64,
    opened: Timestamp,
    opened_frame: u64,
}

/// One segment that arrived late (or one SACK hole filled by a late original).
#[derive(Copy, Clone, Debug)]
struct Late {
    /// Where the hole showed first: the segment above it, or the first SACK above it.
    opened_frame: u64,
    opened_ts: Timestamp,
    /// The late original's frame, or the ACK that covered the hole.
    frame: u64,
    ts: Timestamp,
    seq: u64,
    degree_bytes: u64,
    late_ns: u64,
    /// `None` when seen through SACKs (the original was not captured late).
    proof: Option<Proof>,
}

/// A retransmission of data that reordering had delayed, not lost.
#[derive(Copy, Clone, Debug)]
struct Triggered {
    frame: u64,
    ts: Timestamp,
    seq: u64,
    /// Where the original arrived (receiver side) or the hole first showed (sender side).
    cause_frame: u64,
    cause_ts: Timestamp,
    /// The receiver's D-SACK reporting the duplicate.
    dsack: Option<(u64, Timestamp)>,
    /// That D-SACK was inferred from an ACK whose options the snaplen cut
    /// ([`Dir::cut_options`]): its block's edges were not seen.
    dsack_cut: bool,
    /// Recognised only by timing (no D-SACK seen): the hole was covered sooner than the
    /// retransmission could have been acknowledged.
    by_timing: bool,
    /// Known to be needless: D-SACKed, covered too soon, or (receiver side) sent after
    /// the receiver had acknowledged the data.
    confirmed: bool,
}

/// A hole in the peer's SACK scoreboard: data above the cumulative ACK was SACKed.
#[derive(Copy, Clone, Debug)]
struct SackHole {
    start: u64,
    end: u64,
    max_right: u64,
    opened: Timestamp,
    opened_frame: u64,
    retrans: Option<(u64, Timestamp)>,
    /// No retransmission of its start is remembered, but one may have been let go
    /// ([`Dir::forgot_retrans_end`]).
    forgotten: bool,
    /// Inferred from duplicate ACKs whose options the snaplen cut ([`Dir::cut_dups`]).
    cut: bool,
}

/// A retransmission sent into a SACK hole whose fate is not known yet (a D-SACK may come).
#[derive(Copy, Clone, Debug)]
struct Pending {
    frame: u64,
    ts: Timestamp,
    seq: u64,
    hole_frame: u64,
    hole_ts: Timestamp,
    /// The ACK that covered the hole.
    closed_frame: u64,
    closed_ts: Timestamp,
    degree_bytes: u64,
}

/// State of one direction of data (`[client → server, server → client]`).
#[derive(Default)]
struct Dir {
    /// End of the highest data seen (relative sequence number).
    highest: Option<u64>,
    max_payload: u64,
    /// The sender's segment size from the SYNs' options, when both were read whole.
    mss: Option<u64>,
    /// The IPv4 IDs of this direction's in-order data segments (ID 0 included).
    ids: SenderIds,
    max_tsval: Option<u32>,
    holes: Vec<Hole>,
    /// Ranges the capture saw filled by a late original: start, end, frame, time, and
    /// whether its degree reached the duplicate-ACK threshold.
    filled_late: Vec<(u64, u64, u64, Timestamp, bool)>,
    /// Ranges the capture saw out of order (so the SACK view does not count them again).
    seen_ooo: Vec<(u64, u64)>,
    /// The first late segments (or holes), for evidence and to find what triggered a
    /// retransmission.
    late: Vec<Late>,
    /// The one overtaken by the most segments.
    deepest: Option<Late>,
    max_late_ns: u64,
    late_count: u64,
    late_over_dupthresh: u64,
    late_samples_ns: Vec<u64>,
    triggered: Vec<Triggered>,
    /// Holes filled by a retransmission: network loss, unless the original comes later
    /// (`filled_by_retrans`).
    loss_holes: u64,
    /// Holes filled by a retransmission: start, end, when and where the hole opened, the
    /// retransmission's frame and time. An original arriving after it was only late.
    filled_by_retrans: Vec<(u64, u64, Timestamp, u64, u64, Timestamp)>,
    loss_example: Option<(u64, Timestamp, u64)>,
    /// Segments acknowledged but never captured: capture loss.
    capture_lost_bytes: u64,
    capture_lost_example: Option<(u64, Timestamp, u64)>,
    // The peer's SACK view of this direction's data.
    sack_hole: Option<SackHole>,
    /// While SACK blocks are above the cumulative ACK: each rise of the highest SACKed
    /// sequence (time, frame, right edge), to date when a hole behind the first became
    /// visible (the moment data above it was SACKed).
    sack_history: Vec<(Timestamp, u64, u64)>,
    /// Recent retransmissions of this direction: frame, time, start, end.
    recent_retrans: std::collections::VecDeque<(u64, Timestamp, u64, u64)>,
    /// The highest end of a retransmission `recent_retrans` let go: a hole below it may
    /// have been retransmitted where this no longer sees it.
    forgot_retrans_end: u64,
    pending: Vec<Pending>,
    /// Smallest data → ACK time of this direction's data at the capture point.
    min_ack_rtt: Option<u64>,
    /// SACK holes covered without a captured retransmission but too late to be sure.
    unexplained_holes: u64,
    /// The peer's cumulative ACK as last repeated by ACKs whose options the snaplen cut,
    /// and how many times it was repeated ([`Self::cut_blocks`]).
    cut_ack: Option<u64>,
    cut_dups: u64,
    /// Largest data → ACK time of this direction's data: how long after a retransmission
    /// its own D-SACK can come back ([`Self::cut_dsack`]).
    max_ack_rtt: Option<u64>,
    /// Declared options length of the peer's last pure ACK whose options the snaplen cut,
    /// and one that carried more than the ACK before it, waiting for the next
    /// ([`Self::cut_options`]).
    cut_len: Option<u8>,
    spike: Option<Spike>,
    /// D-SACKs inferred from cut options that confirmed a retransmission.
    cut_dsacks: u64,
}

/// A pure ACK with cut options that carried a SACK block more than the ACK before it.
#[derive(Copy, Clone, Debug)]
struct Spike {
    frame: u64,
    ts: Timestamp,
    ack: u64,
    len: u8,
}

fn ts_newer(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) > 0
}

fn push_bounded<T>(v: &mut Vec<T>, x: T, cap: usize) {
    if v.len() < cap {
        v.push(x);
    }
}

impl Dir {
    /// Was the segment below the highest sequence an original sent before the newest
    /// one seen (`Some(true)`), a retransmission (`Some(false)`), or undecided?
    fn origin(&self, ip_id: Option<u16>, tsval: Option<u32>) -> (Option<bool>, Option<Proof>) {
        if let (Some(id), Some(max), true) = (ip_id, self.ids.newest(), self.ids.increasing()) {
            if let Some(older) = self.ids.older_than_newest(id) {
                return (Some(older), Some(Proof::IpId { id, max }));
            }
        }
        if let (Some(t), Some(max)) = (tsval, self.max_tsval) {
            if t != max {
                let older = ts_newer(max, t);
                return (Some(older), Some(Proof::TsVal { tsval: t, max }));
            }
        }
        (None, None)
    }

    /// One data segment of this direction, as captured. `handshake_rtt` and
    /// `acked_before` are read only for data below the highest sequence.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn data(
        &mut self,
        frame: u64,
        ts: Timestamp,
        start: u64,
        len: u64,
        ip_id: Option<u16>,
        tsval: Option<u32>,
        handshake_rtt: Option<u64>,
        acked_before: bool,
    ) {
        let end = start.saturating_add(len);
        self.max_payload = self.max_payload.max(len.min(65_535));
        let Some(highest) = self.highest else {
            self.highest = Some(end);
            self.note_in_order(ip_id, len, tsval);
            return;
        };
        if start >= highest {
            if start > highest {
                push_bounded(
                    &mut self.holes,
                    Hole {
                        start: highest,
                        end: start,
                        opened: ts,
                        opened_frame: frame,
                    },
                    MAX_HOLES,
                );
                push_bounded(&mut self.seen_ooo, (highest, start), MAX_RANGES);
            }
            self.highest = Some(end);
            self.note_in_order(ip_id, len, tsval);
            return;
        }
        self.below_highest(
            frame,
            ts,
            start,
            end,
            highest,
            ip_id,
            tsval,
            handshake_rtt,
            acked_before,
        );
    }

    /// [`Self::data`] below the highest sequence: a late original or a retransmission (out
    /// of line: most data is in order, and the in-order case costs no call).
    #[allow(clippy::too_many_arguments)]
    #[inline(never)]
    fn below_highest(
        &mut self,
        frame: u64,
        ts: Timestamp,
        start: u64,
        end: u64,
        highest: u64,
        ip_id: Option<u16>,
        tsval: Option<u32>,
        handshake_rtt: Option<u64>,
        acked_before: bool,
    ) {
        // Below the highest sequence: a late original or a retransmission.
        let (older, proof) = self.origin(ip_id, tsval);
        let mut filled_any = false;
        let mut i = 0;
        while i < self.holes.len() {
            let h = self.holes[i];
            if start >= h.end || end <= h.start {
                i += 1;
                continue;
            }
            let late_ns = ts.elapsed_since(h.opened);
            let by_timing = older.is_none()
                && handshake_rtt
                    .is_some_and(|r| (late_ns as f64) < LATE_ORIGINAL_MAX_RTT_FRACTION * r as f64);
            let (is_late, proof) = match older {
                Some(o) => (o, proof),
                None => (by_timing, by_timing.then_some(Proof::Timing)),
            };
            if !filled_any {
                if is_late {
                    let degree_bytes = highest.saturating_sub(end);
                    let l = Late {
                        opened_frame: h.opened_frame,
                        opened_ts: h.opened,
                        frame,
                        ts,
                        seq: start,
                        degree_bytes,
                        late_ns,
                        proof,
                    };
                    let over = self.record_late(l);
                    push_bounded(
                        &mut self.filled_late,
                        (start, end, frame, ts, over),
                        MAX_RANGES,
                    );
                } else if older == Some(false) {
                    self.loss_holes += 1;
                    self.loss_example.get_or_insert((frame, ts, start));
                    push_bounded(
                        &mut self.filled_by_retrans,
                        (h.start, h.end, h.opened, h.opened_frame, frame, ts),
                        MAX_RANGES,
                    );
                }
            }
            filled_any = true;
            // Cut [start, end) out of the hole.
            let left = (h.start < start).then_some((h.start, start));
            let right = (end < h.end).then_some((end, h.end));
            match (left, right) {
                (Some((_, b)), Some((c, d))) => {
                    self.holes[i].end = b;
                    let mut rest = h;
                    rest.start = c;
                    rest.end = d;
                    if self.holes.len() < MAX_HOLES {
                        self.holes.push(rest);
                    }
                    i += 1;
                }
                (Some((_, b)), None) => {
                    self.holes[i].end = b;
                    i += 1;
                }
                (None, Some((c, _))) => {
                    self.holes[i].start = c;
                    i += 1;
                }
                (None, None) => {
                    self.holes.swap_remove(i);
                }
            }
        }
        if !filled_any && older == Some(true) {
            // An original arriving after a retransmission filled its hole: it was late,
            // not lost, and the retransmission was needless (RFC 3708: the original's
            // arrival, like a D-SACK, shows the loss was not one; issue 12, class 2).
            if let Some(i) = self
                .filled_by_retrans
                .iter()
                .position(|&(s, e, ..)| start < e && end > s)
            {
                let (_, _, opened, opened_frame, rf, rts) = self.filled_by_retrans.swap_remove(i);
                self.loss_holes = self.loss_holes.saturating_sub(1);
                let l = Late {
                    opened_frame,
                    opened_ts: opened,
                    frame,
                    ts,
                    seq: start,
                    degree_bytes: highest.saturating_sub(end),
                    late_ns: ts.elapsed_since(opened),
                    proof,
                };
                self.record_late(l);
                if self.triggered.iter().all(|t| t.seq != start) {
                    push_bounded(
                        &mut self.triggered,
                        Triggered {
                            frame: rf,
                            ts: rts,
                            seq: start,
                            cause_frame: frame,
                            cause_ts: opened,
                            dsack: None,
                            dsack_cut: false,
                            by_timing: false,
                            confirmed: true,
                        },
                        MAX_TRIGGERED,
                    );
                }
            }
        }
        if !filled_any && older != Some(true) {
            // A repeat of data already captured: if a late original had delivered it,
            // reordering triggered this retransmission.
            // A fast retransmission answering the SACKs of that hole arrives about one
            // RTT after the late original; much later, something else sent it.
            let soon = |ots: Timestamp| {
                handshake_rtt
                    .is_some_and(|r| ts.elapsed_since(ots) <= TRIGGER_MAX_RTTS.saturating_mul(r))
            };
            if let Some(&(_, _, of, ots, _)) = self
                .filled_late
                .iter()
                .find(|&&(s, e, _, ots, over)| over && start < e && end > s && soon(ots))
            {
                if self.triggered.iter().all(|t| t.seq != start) {
                    push_bounded(
                        &mut self.triggered,
                        Triggered {
                            frame,
                            ts,
                            seq: start,
                            cause_frame: of,
                            cause_ts: ots,
                            dsack: None,
                            dsack_cut: false,
                            by_timing: false,
                            confirmed: acked_before,
                        },
                        MAX_TRIGGERED,
                    );
                }
            }
        }
        if end > highest {
            self.highest = Some(end);
        }
    }

    /// Records a late segment; true when its degree reached the duplicate-ACK threshold
    /// (only such reordering can trigger a fast retransmission).
    fn record_late(&mut self, l: Late) -> bool {
        self.late_count += 1;
        push_bounded(&mut self.late_samples_ns, l.late_ns, MAX_LATE_SAMPLES);
        self.max_late_ns = self.max_late_ns.max(l.late_ns);
        if self.deepest.is_none_or(|d| l.degree_bytes > d.degree_bytes) {
            self.deepest = Some(l);
        }
        let over = self.over_dupthresh(l.degree_bytes);
        if over {
            self.late_over_dupthresh += 1;
        }
        push_bounded(&mut self.late, l, MAX_LATE_RECORDS);
        over
    }

    fn over_dupthresh(&self, degree_bytes: u64) -> bool {
        degree_bytes >= LINUX_TCP_REORDERING.saturating_mul(self.seg_size())
    }

    /// The segment `tp->reordering` counts in (mss_cache): the SYNs' MSS, else the largest
    /// payload seen up to an Ethernet segment. A TSO/GSO sender's capture shows packets of
    /// up to 64 KB that the NIC cuts into segments; counting the threshold in those made
    /// 105 segments SACKed above a hole look like fewer than 3 (sweep s2-042 at the
    /// server, snaplen 128: 152,040 bytes against 3 × 65,160).
    fn seg_size(&self) -> u64 {
        self.mss
            .unwrap_or(self.max_payload.min(ETHERNET_MSS))
            .max(1)
    }

    /// The SACK block a pure ACK whose options the snaplen cut stands for, if it repeats
    /// the cumulative ACK below data sent (issue 12 class 8: cut options are unknown, not
    /// absent). With data in flight, a receiver repeats its cumulative ACK only when a
    /// segment above a hole arrives (RFC 5681 §4.2: an out-of-order segment is ACKed at
    /// once, a duplicate ACK; Linux's `tcp_data_queue` → `tcp_data_queue_ofo`, quick-ACK
    /// mode), so k repeats stand for k segments above the hole, as SACK blocks would
    /// (RFC 4737's reordering extent, counted as `tcp_check_sack_reordering` does):
    /// the hole is taken as one segment, the block above it as k segments. A sender's
    /// capture at snaplen 64 then still sees a hole covered without a retransmission, or
    /// a retransmission covered sooner than it could have been acknowledged (sweep
    /// s1-098, s2-050, s3-098: the receiver's SACK blocks cut, reordering unnamed).
    fn cut_blocks(&mut self, ack: u64, repeat: bool) -> Option<(u64, u64)> {
        if repeat && self.cut_ack == Some(ack) {
            self.cut_dups = self.cut_dups.saturating_add(1);
        } else {
            self.cut_ack = Some(ack);
            self.cut_dups = 0;
            return None;
        }
        let mss = self.seg_size();
        let left = ack.saturating_add(mss);
        Some((left, left.saturating_add(mss.saturating_mul(self.cut_dups))))
    }

    fn note_in_order(&mut self, ip_id: Option<u16>, len: u64, tsval: Option<u32>) {
        if let Some(id) = ip_id {
            // Only the order of the IDs is used here; the largest payload stands in for
            // the segment size the counter test would need.
            let seg_size = u32::try_from(self.max_payload).unwrap_or(u32::MAX);
            let len = u32::try_from(len).unwrap_or(u32::MAX);
            self.ids.record(id, len, seg_size);
        }
        if let Some(t) = tsval {
            if self.max_tsval.is_none_or(|m| ts_newer(t, m)) {
                self.max_tsval = Some(t);
            }
        }
    }

    /// A retransmission of this direction seen at the capture point (for the SACK view).
    fn retransmitted(&mut self, frame: u64, ts: Timestamp, start: u64, end: u64) {
        if let Some(h) = self.sack_hole.as_mut() {
            if h.retrans.is_none() && start <= h.start && end > h.start {
                h.retrans = Some((frame, ts));
            }
        }
        if self.recent_retrans.len() >= MAX_RANGES {
            if let Some((_, _, _, e)) = self.recent_retrans.pop_front() {
                self.forgot_retrans_end = self.forgot_retrans_end.max(e);
            }
        }
        self.recent_retrans.push_back((frame, ts, start, end));
    }

    /// The peer's ACK of this direction's data: cumulative ACK `ack`, SACK blocks above it.
    /// Most ACKs, with no hole open, no SACK block and no SACK episode under way, change
    /// nothing: tested here, inlined, instead of in a call per ACK (31 M instructions of
    /// `analyze` on the 1 M-packet mixed capture, callgrind).
    #[inline]
    fn peer_ack(&mut self, frame: u64, ts: Timestamp, ack: u64, blocks: &[(u64, u64)], cut: bool) {
        if blocks.is_empty()
            && self.holes.is_empty()
            && self.sack_hole.is_none()
            && self.sack_history.is_empty()
        {
            return;
        }
        self.scoreboard(frame, ts, ack, blocks, cut);
    }

    /// [`Self::peer_ack`] when there is something to update.
    #[inline(never)]
    fn scoreboard(
        &mut self,
        frame: u64,
        ts: Timestamp,
        ack: u64,
        blocks: &[(u64, u64)],
        cut: bool,
    ) {
        // Capture loss: holes the receiver acknowledged but the capture never filled.
        let mut i = 0;
        while i < self.holes.len() {
            let h = self.holes[i];
            if h.start >= ack {
                i += 1;
                continue;
            }
            let lost = ack.min(h.end) - h.start;
            self.capture_lost_bytes = self.capture_lost_bytes.saturating_add(lost);
            self.capture_lost_example
                .get_or_insert((frame, ts, h.start));
            if ack >= h.end {
                self.holes.swap_remove(i);
            } else {
                self.holes[i].start = ack;
                i += 1;
            }
        }
        // The SACK scoreboard's first hole.
        let above = || blocks.iter().filter(|b| b.1 > ack);
        let lowest_left = above().map(|b| b.0.max(ack)).min();
        let max_right = above().map(|b| b.1).max();
        if let Some(mut h) = self.sack_hole {
            if ack > h.start {
                self.close_sack_hole(&h, frame, ts);
                self.sack_hole = None;
            } else if let Some(r) = max_right {
                h.max_right = h.max_right.max(r);
                if let Some(l) = lowest_left.filter(|&l| l > ack) {
                    h.end = h.end.min(l);
                }
                self.sack_hole = Some(h);
            }
        }
        match max_right {
            None => self.sack_history.clear(),
            Some(r) => {
                if self
                    .sack_history
                    .last()
                    .is_none_or(|&(_, _, last)| r > last)
                {
                    push_bounded(&mut self.sack_history, (ts, frame, r), MAX_HISTORY);
                }
            }
        }
        if self.sack_hole.is_none() {
            if let (Some(l), Some(r)) = (lowest_left.filter(|&l| l > ack), max_right) {
                // The hole showed when data above it was first SACKed in this episode.
                let (opened, opened_frame) = self
                    .sack_history
                    .iter()
                    .find(|&&(_, _, right)| right > l)
                    .map_or((ts, frame), |&(t, f, _)| (t, f));
                // Any retransmission of its start counts, the latest first: the hole may
                // be dated later than it opened (the SACK history is bounded and cleared
                // between episodes; a hole inferred from cut duplicate ACKs is dated by
                // the first repeat), and an ACK covering retransmitted bytes may answer
                // the retransmission, so it proves a late original only when it came
                // too soon for that (sweep s2-032: seq 146625 retransmitted 14 ms before
                // the repeats began; s3-056: seq 748617 retransmitted 33 ms before the
                // hole was dated, in a recovery of 262 retransmissions).
                let retrans = self
                    .recent_retrans
                    .iter()
                    .rev()
                    .find(|&&(_, _, s, e)| s <= ack && e > ack)
                    .map(|&(f, t, _, _)| (f, t));
                self.sack_hole = Some(SackHole {
                    start: ack,
                    end: l,
                    max_right: r,
                    opened,
                    opened_frame,
                    retrans,
                    forgotten: retrans.is_none() && ack < self.forgot_retrans_end,
                    cut,
                });
            }
        }
    }

    fn close_sack_hole(&mut self, h: &SackHole, frame: u64, ts: Timestamp) {
        // The capture saw this range out of order: counted from the arrivals already.
        if self
            .seen_ooo
            .iter()
            .any(|&(s, e)| h.start >= s && h.start < e)
        {
            return;
        }
        let open_ns = ts.elapsed_since(h.opened);
        // Sooner than this, no retransmission can have been acknowledged.
        let too_soon = self
            .min_ack_rtt
            .map(|r| (LATE_ORIGINAL_MAX_RTT_FRACTION * r as f64) as u64);
        let degree_bytes = h.max_right.saturating_sub(h.end);
        // The hole filled by a late original (the two ways of telling are below).
        let late = Late {
            opened_frame: h.opened_frame,
            opened_ts: h.opened,
            frame,
            ts,
            seq: h.start,
            degree_bytes,
            late_ns: open_ns,
            proof: None,
        };
        match h.retrans {
            // A hole inferred from cut duplicate ACKs counts only once they reached the
            // duplicate-ACK threshold: fewer repeats may be window updates.
            None if h.cut && !self.over_dupthresh(degree_bytes) => {}
            // Its retransmission may be one of those let go in a long recovery (sweep
            // s100-072 at the server: seq 1,609,113 retransmitted at frame 2735, then 380
            // more before the ACK reached it, 11.6 ms before covering it): nothing told.
            None if h.forgotten => {}
            None => {
                if too_soon.is_some_and(|r| open_ns < r) {
                    self.record_late(late);
                } else {
                    self.unexplained_holes += 1;
                }
            }
            Some((rf, rts)) => {
                let soon = too_soon.is_some_and(|r| ts.elapsed_since(rts) < r);
                if !self.over_dupthresh(degree_bytes) {
                    // Too few segments above it to trigger a fast retransmission: the
                    // retransmission had another cause (a timeout); not ours to price.
                } else if soon {
                    // Covered sooner than the retransmission could be acknowledged.
                    self.record_late(late);
                    push_bounded(
                        &mut self.triggered,
                        Triggered {
                            frame: rf,
                            ts: rts,
                            seq: h.start,
                            cause_frame: h.opened_frame,
                            cause_ts: h.opened,
                            dsack: None,
                            dsack_cut: false,
                            by_timing: true,
                            confirmed: true,
                        },
                        MAX_TRIGGERED,
                    );
                } else {
                    push_bounded(
                        &mut self.pending,
                        Pending {
                            frame: rf,
                            ts: rts,
                            seq: h.start,
                            hole_frame: h.opened_frame,
                            hole_ts: h.opened,
                            closed_frame: frame,
                            closed_ts: ts,
                            degree_bytes,
                        },
                        MAX_RANGES,
                    );
                }
            }
        }
    }

    /// A pure ACK of the peer whose options the snaplen cut (issue 12 class 8, sweep
    /// s4-010 at the server, snaplen 64: 10 bytes of options captured of 24–36). Its
    /// declared options length still counts its SACK blocks (8 bytes each, RFC 2018 §3).
    /// A receiver reports a duplicate arrival in the first block of one ACK only (RFC 2883
    /// §4; Linux clears `rx_opt.dsack` once `tcp_options_write` has sent it), while the
    /// blocks of its out-of-order queue stay on every ACK until the holes fill: an ACK
    /// with a block more than the ACK before it and the ACK after it, the cumulative ACK
    /// between them moved by nothing the sender retransmitted, and no retransmission sent
    /// in between (which could fill a hole and merge two blocks), was a D-SACK — or a hole
    /// that the very next segment filled, itself a late segment. Returns that ACK once the
    /// next one shows the block was gone.
    fn cut_options(&mut self, frame: u64, ts: Timestamp, ack: u64, len: u8) -> Option<Spike> {
        let prev = self.cut_len.replace(len);
        let transient = self.spike.take().filter(|sp| {
            len < sp.len
                && !self
                    .recent_retrans
                    .iter()
                    .any(|&(_, rts, rs, re)| rts > sp.ts || (rs < ack && re > sp.ack))
        });
        if prev.is_some_and(|p| len > p) {
            self.spike = Some(Spike {
                frame,
                ts,
                ack,
                len,
            });
        }
        transient
    }

    /// A D-SACK inferred from cut options ([`Self::cut_options`]) at the ACK `sp`: the
    /// duplicate of a fast retransmission into a SACK hole that the ACK covered no sooner
    /// than the retransmission could have been acknowledged ([`Pending`]) — the late
    /// original arriving after it, which is what made Linux undo the recovery
    /// (`tcp_try_undo_dsack`). Without the block's edges the duplicate is taken to be the
    /// oldest such retransmission below the ACK (late originals arrive in the order they
    /// were sent when each is held alike; the count of retransmissions confirmed is what
    /// the cost uses). Not when another retransmission below the ACK — a tail-loss probe,
    /// an RTO's, one into a hole below the duplicate-ACK threshold — was sent recently
    /// enough for this to be its own D-SACK (a duplicate is reported on arrival: within
    /// one round trip of sending; [`TRIGGER_MAX_RTTS`] of the largest ACK time seen).
    fn cut_dsack(&mut self, sp: Spike) {
        let window = self
            .max_ack_rtt
            .unwrap_or(0)
            .saturating_mul(TRIGGER_MAX_RTTS);
        let pending = &self.pending;
        let ambiguous = self.recent_retrans.iter().any(|&(rf, rts, rs, _)| {
            rs < sp.ack
                && sp.ts.elapsed_since(rts) <= window
                && !pending.iter().any(|p| p.frame == rf)
                && !self.triggered.iter().any(|t| t.frame == rf)
        });
        if ambiguous {
            return;
        }
        let Some(i) = self
            .pending
            .iter()
            .enumerate()
            .filter(|(_, p)| p.seq < sp.ack && p.closed_frame < sp.frame)
            .min_by_key(|(_, p)| p.frame)
            .map(|(i, _)| i)
        else {
            return;
        };
        let p = self.pending.swap_remove(i);
        self.confirm_by_dsack(p, sp.frame, sp.ts, true);
        self.cut_dsacks = self.cut_dsacks.saturating_add(1);
    }

    /// The peer's D-SACK reported a duplicate: of retransmission `of` (the tracker's
    /// link), or of the range `dup` (its first block).
    fn dsack(&mut self, of: Option<u64>, dup: Option<(u64, u64)>, frame: u64, ts: Timestamp) {
        let hit = |f: u64, seq: u64| Some(f) == of || dup.is_some_and(|(l, r)| seq >= l && seq < r);
        if let Some(t) = self
            .triggered
            .iter_mut()
            .find(|t| t.dsack.is_none() && hit(t.frame, t.seq))
        {
            t.dsack = Some((frame, ts));
            t.by_timing = false;
            t.confirmed = true;
            return;
        }
        if let Some(i) = self.pending.iter().position(|p| hit(p.frame, p.seq)) {
            let p = self.pending.swap_remove(i);
            self.confirm_by_dsack(p, frame, ts, false);
        }
    }

    /// A pending retransmission that a D-SACK at `frame` (`cut`: one the snaplen cut,
    /// read from the options' length) showed unneeded: its original was late. The
    /// D-SACK left the receiver when the late original arrived there; the hole showed
    /// when the first segment above it did: both seen here after the same return path,
    /// so their difference is how late the original was (not the time the
    /// retransmission took to fill the hole).
    fn confirm_by_dsack(&mut self, p: Pending, frame: u64, ts: Timestamp, cut: bool) {
        self.record_late(Late {
            opened_frame: p.hole_frame,
            opened_ts: p.hole_ts,
            frame: p.closed_frame,
            ts: p.closed_ts,
            seq: p.seq,
            degree_bytes: p.degree_bytes,
            late_ns: ts.elapsed_since(p.hole_ts),
            proof: None,
        });
        push_bounded(
            &mut self.triggered,
            Triggered {
                frame: p.frame,
                ts: p.ts,
                seq: p.seq,
                cause_frame: p.hole_frame,
                cause_ts: p.hole_ts,
                dsack: Some((frame, ts)),
                dsack_cut: cut,
                by_timing: false,
                confirmed: true,
            },
            MAX_TRIGGERED,
        );
    }
}

#[derive(Default)]
struct Conn {
    dirs: [Dir; 2],
}

impl Reusable for Conn {
    fn empty(&mut self) {
        let Conn { dirs } = self;
        for d in dirs {
            *d = Dir {
                holes: emptied_vec(&mut d.holes),
                filled_late: emptied_vec(&mut d.filled_late),
                seen_ooo: emptied_vec(&mut d.seen_ooo),
                late: emptied_vec(&mut d.late),
                late_samples_ns: emptied_vec(&mut d.late_samples_ns),
                triggered: emptied_vec(&mut d.triggered),
                filled_by_retrans: emptied_vec(&mut d.filled_by_retrans),
                sack_history: emptied_vec(&mut d.sack_history),
                recent_retrans: emptied_deque(&mut d.recent_retrans),
                pending: emptied_vec(&mut d.pending),
                ..Dir::default()
            };
        }
    }
}

#[derive(Default)]
pub struct Reordering {
    conns: Slots<Conn>,
}

impl Detector for Reordering {
    // Judges holes in data and data that came late.
    const JUDGES_DATALESS: bool = false;

    // Inlined into the registry's one call per segment (detectors/mod.rs).
    #[inline(always)]
    fn on_segment(&mut self, seg: &Segment<'_>) {
        let ev = seg.ev;
        if ev.kinds.has(SegmentKinds::CAPTURE_DUPLICATE) {
            return;
        }
        let c = self.conns.get_or_default(seg);
        let flags = seg.pkt.flags;
        let (me, peer) = (ev.sender(), ev.receiver());
        // This segment as data of its own direction.
        if ev.payload_len > 0 && !flags.syn() {
            let d = &mut c.dirs[me];
            if d.mss.is_none() {
                d.mss = ev.conn.mss(me).map(u64::from);
            }
            let start = ev.rel_seq;
            let len = u64::from(ev.payload_len);
            let tsval = seg.pkt.options.timestamps.map(|t| t.0);
            let below = d.highest.is_some_and(|h| start < h);
            // The handshake RTT and the spurious flag are read only for data below the
            // highest sequence (`Dir::data`): not derived for every in-order segment.
            let (handshake_rtt, spurious) = if below {
                let spurious = ev.kinds.has(SegmentKinds::SPURIOUS_RETRANSMISSION);
                (ev.conn.handshake_rtt_ns(), spurious)
            } else {
                (None, false)
            };
            d.data(
                seg.frame,
                seg.ts,
                start,
                len,
                seg.pkt.ip_id,
                tsval,
                handshake_rtt,
                spurious,
            );
            if below {
                let repeat = SegmentKinds::RETRANSMISSION | SegmentKinds::OUT_OF_ORDER;
                let d = &mut c.dirs[me];
                let (older, _) = d.origin(seg.pkt.ip_id, tsval);
                if older != Some(true) && ev.kinds.0 & repeat != 0 {
                    d.retransmitted(seg.frame, seg.ts, start, start.saturating_add(len));
                }
            }
        }
        // This segment as the ACK of the other direction's data.
        if let Some(ack) = ev.rel_ack {
            let d = &mut c.dirs[peer];
            if let Some((_, ns)) = ev.ack_rtt {
                d.min_ack_rtt = Some(d.min_ack_rtt.map_or(ns, |m| m.min(ns)));
                d.max_ack_rtt = Some(d.max_ack_rtt.map_or(ns, |m| m.max(ns)));
            }
            // The usual ACK: no SACK blocks, no D-SACK, its options whole. Nothing to
            // convert or to recover from a cut (bench/README.md session 12).
            let options = &seg.pkt.options;
            if options.sack_blocks().is_empty()
                && !options.truncated
                && !ev.kinds.has(SegmentKinds::DSACK)
            {
                if flags.ack() && !flags.syn() {
                    d.peer_ack(seg.frame, seg.ts, ack, &[], false);
                }
                return;
            }
            let rel = |edge: u32| seg.rel_sack_edge(edge);
            if ev.kinds.has(SegmentKinds::DSACK) {
                let dup = seg
                    .pkt
                    .options
                    .sack_blocks()
                    .first()
                    .and_then(|&(l, r)| Some((rel(l)?, rel(r)?)));
                d.dsack(ev.dsack_of, dup, seg.frame, seg.ts);
            }
            let mut blocks = [(0u64, 0u64); 4];
            let mut n = 0;
            let all = seg.pkt.options.sack_blocks();
            // A D-SACK's first block reports a duplicate, not a hole's edge.
            let skip = usize::from(ev.kinds.has(SegmentKinds::DSACK));
            for &(l, r) in all.iter().skip(skip) {
                if let (Some(l), Some(r)) = (rel(l), rel(r)) {
                    if r > l && n < blocks.len() {
                        blocks[n] = (l, r);
                        n += 1;
                    }
                }
            }
            let truncated = seg.pkt.options.truncated;
            if truncated && n == 0 && flags.ack() && !flags.syn() {
                let repeat = ev.payload_len == 0
                    && !flags.fin()
                    && !flags.rst()
                    && d.highest.is_some_and(|h| ack < h);
                if let Some(b) = d.cut_blocks(ack, repeat) {
                    blocks[0] = b;
                    n = 1;
                }
                let pure = ev.payload_len == 0 && !flags.fin() && !flags.rst();
                if pure {
                    let len = seg.pkt.options.declared_len;
                    if let Some(sp) = d.cut_options(seg.frame, seg.ts, ack, len) {
                        d.cut_dsack(sp);
                    }
                }
            }
            if flags.ack() && !flags.syn() {
                d.peer_ack(seg.frame, seg.ts, ack, &blocks[..n], truncated && n > 0);
            }
        }
    }

    fn on_connection(&mut self, conn: &Connection<'_>, out: &mut Vec<Finding>) {
        let Some(mut st) = self.conns.take_reusing(conn) else {
            return;
        };
        let rtt =
            conn.rtt_ns
                .filter(|&r| r > 0)
                .or(st.dirs.iter().filter_map(|d| d.min_ack_rtt).max());
        for (i, d) in st.dirs.iter_mut().enumerate() {
            if let Some(f) = finding(conn, i, d, rtt) {
                out.push(f);
            }
        }
    }

    /// Nothing is kept across connections: each one's state is dropped in `on_connection`.
    fn absorb(&mut self, _other: Self) {}
}

/// The segment size of `dir`'s data: the connection's effective MSS
/// ([`ConnSummary::mss`]); else (a SYN not captured, or its options cut by the snaplen,
/// so timestamps are unknown) the largest payload seen.
fn mss(s: &ConnSummary, dir: usize, seen: u64) -> u64 {
    // As `Dir::seg_size`: a TSO/GSO packet is no segment.
    s.mss(Side::from_index(dir))
        .map_or(seen.clamp(1, ETHERNET_MSS), u64::from)
}

fn median(v: &mut [u64]) -> u64 {
    if v.is_empty() {
        return 0;
    }
    v.sort_unstable();
    v[v.len() / 2]
}

/// The finding for one direction's data, if reordering triggered retransmissions.
fn finding(conn: &Connection<'_>, dir: usize, d: &mut Dir, rtt: Option<u64>) -> Option<Finding> {
    let rtt = rtt?;
    let mss = mss(conn.summary, dir, d.max_payload);
    // Recovery episodes: triggered retransmissions less than one RTT apart are one.
    let mut trig: Vec<Triggered> = d
        .triggered
        .iter()
        .copied()
        .filter(|t| t.confirmed)
        .collect();
    trig.sort_by_key(|t| t.frame);
    let mut recoveries = 0u64;
    let mut last_start: Option<Timestamp> = None;
    for t in &trig {
        if last_start.is_none_or(|s| t.ts.elapsed_since(s) >= rtt) {
            recoveries += 1;
            last_start = Some(t.ts);
        }
    }
    if d.late_count == 0 {
        return None;
    }
    if recoveries == 0 {
        return Some(absorbed(conn, dir, d, rtt, mss));
    }
    let (sender, receiver) = (Side::from_index(dir), Side::from_index(dir).peer());
    let ends = conn.summary.endpoints;
    let segs = |b: u64| b.div_ceil(mss);
    let max_degree = d.deepest.map_or(0, |l| l.degree_bytes);
    let max_late = d.max_late_ns;
    let median_late = median(&mut d.late_samples_ns);
    // The late segment (or hole) behind each triggered retransmission.
    let cause = |t: &Triggered| {
        d.late
            .iter()
            .find(|l| {
                l.frame == t.cause_frame || (l.proof.is_none() && l.opened_frame == t.cause_frame)
            })
            .copied()
    };
    let trigger_degree = trig
        .iter()
        .filter_map(|t| cause(t).map(|l| l.degree_bytes))
        .max()
        .unwrap_or(max_degree);
    let beta_cost = ((1.0 - CUBIC_BETA) * rtt as f64) as u64;
    let mut f = conn.finding(FindingId::Reordering);
    f.cost_ns = recoveries.saturating_mul(beta_cost);
    f.share = Some(f.cost_ns as f64 / conn.active_ns().max(1) as f64);

    // Evidence: the triggered retransmissions first (what cost time), then the late
    // segment with the largest degree and the first one.
    for t in trig.iter().take(CITED_TRIGGERED) {
        let c = cause(t);
        match c {
            Some(l) if l.proof.is_some() => {
                f.cite(
                    l.opened_frame,
                    l.opened_ts,
                    format!("data above seq {}: a hole opens", l.seq),
                );
                f.cite(
                    l.frame,
                    l.ts,
                    format!(
                        "seq {} arrives {} late, after {} later segments: the original",
                        l.seq,
                        ms(l.late_ns),
                        segs(l.degree_bytes)
                    ),
                );
            }
            _ => f.cite(
                t.cause_frame,
                t.cause_ts,
                format!("SACK above ACK {}: the receiver reports a hole", t.seq),
            ),
        }
        f.cite(
            t.frame,
            t.ts,
            format!(
                "fast retransmission of seq {} ({} after the hole showed): data that was \
                 only late",
                t.seq,
                ms(t.ts.elapsed_since(t.cause_ts))
            ),
        );
        if let Some(l) = c.filter(|l| l.proof.is_none() && l.frame > t.frame) {
            let after = l.ts.elapsed_since(t.ts);
            let note = if after < rtt {
                format!(
                    "ACK covers seq {} {} after the retransmission, sooner than a round trip: \
                     the original had arrived",
                    l.seq,
                    ms(after)
                )
            } else {
                format!(
                    "ACK covers seq {} {} after the retransmission",
                    l.seq,
                    ms(after)
                )
            };
            f.cite(l.frame, l.ts, note);
        }
        match t.dsack {
            Some((df, dts)) if t.dsack_cut => f.cite(
                df,
                dts,
                format!(
                    "one SACK block more than the ACKs before and after it (options cut by \
                     the snaplen; their length counts the blocks): a D-SACK, the late \
                     original of seq {} arriving after its retransmission",
                    t.seq
                ),
            ),
            Some((df, dts)) => f.cite(
                df,
                dts,
                format!("D-SACK: the receiver got seq {} twice", t.seq),
            ),
            None => {}
        }
    }
    let cited: Vec<Late> = d
        .deepest
        .into_iter()
        .chain(d.late.first().copied())
        .collect();
    for l in cited.iter().take(CITED_LATE) {
        if f.evidence
            .iter()
            .any(|e| e.frame == l.frame || e.frame == l.opened_frame)
        {
            continue;
        }
        cite_late(&mut f, l, segs(l.degree_bytes));
    }

    let what = where_seen(d, ends[sender], ends[receiver]);
    let dsacked = trig.iter().filter(|t| t.dsack.is_some()).count();
    let first = trig.first().map_or(0, |t| t.frame);
    // Retransmissions the late original arrived after (seen at the capture point).
    let overtaken = trig
        .iter()
        .filter(|t| t.dsack.is_none() && t.cause_frame > t.frame)
        .count();
    let proof_text = if dsacked == trig.len() {
        "confirmed by the receiver's D-SACK".to_string()
    } else if overtaken > 0 {
        format!(
            "{overtaken} shown by the original arriving after its retransmission, {dsacked} \
             by the receiver's D-SACK, {} by ACKs covering them too soon",
            trig.len() - overtaken - dsacked
        )
    } else if dsacked > 0 {
        format!(
            "{dsacked} confirmed by the receiver's D-SACK, the others covered too soon to \
             have been needed"
        )
    } else {
        "the ACKs covered them too soon for the retransmissions to have been needed".into()
    };
    let rack_wnd = rtt / 4;
    let absorbed = if max_late < rack_wnd {
        format!(
            "longer than the {} lateness seen here, so the later events were absorbed",
            ms(max_late)
        )
    } else {
        format!(
            "shorter than the {} lateness seen here, so reordering can keep triggering \
             retransmissions",
            ms(max_late)
        )
    };
    let mut other = Vec::new();
    if d.loss_holes > 0 {
        other.push(format!(
            "{} hole(s) were filled only by a retransmission (network loss, not reordering)",
            d.loss_holes
        ));
    }
    if d.capture_lost_bytes > 0 {
        other.push(format!(
            "the capture missed {} segment(s) the receiver acknowledged (capture loss, \
             neither reordering nor network loss)",
            segs(d.capture_lost_bytes)
        ));
    }
    let other = if other.is_empty() {
        String::new()
    } else {
        format!(" Besides, {}.", other.join("; "))
    };
    let reached = match (d.late_over_dupthresh, d.late_count) {
        (1, 1) => "it reached".to_string(),
        (0, 1) => "it did not reach".to_string(),
        (k, n) => format!("{k} of the {n} reached"),
    };
    f.explanation = format!(
        "Reordering, not loss. {what} Degree: up to {} later segments overtook one ({reached} \
         Linux's duplicate-ACK threshold, net.ipv4.tcp_reordering = {}), up to \
         {} late (median {}). It made the sender fast-retransmit {} {} that {} only \
         late, first at frame {first} ({proof_text}), in {} recovery {}. Each episode \
         cut the congestion window to {:.0} % for about one round trip until Linux undid the \
         cut on the D-SACK: {:.0} % of one {} RTT each, {} in all (a floor: without the undo \
         the window regrows over many RTTs). After the first D-SACK Linux raises its \
         threshold to the degree it measured and RACK waits up to min RTT/4 (≈ {}), \
         {absorbed}.{other}",
        segs(max_degree),
        LINUX_TCP_REORDERING,
        ms(max_late),
        ms(median_late),
        trig.len(),
        plural(trig.len() as u64, "segment", "segments"),
        plural(trig.len() as u64, "was", "were"),
        recoveries,
        plural(recoveries, "episode", "episodes"),
        CUBIC_BETA * 100.0,
        (1.0 - CUBIC_BETA) * 100.0,
        ms(rtt),
        ms(f.cost_ns),
        ms(rack_wnd),
    );
    let receiver_host = if receiver == Side::Client {
        Host::Client
    } else {
        Host::Server
    };
    let sender_host = if sender == Side::Client {
        Host::Client
    } else {
        Host::Server
    };
    let needed = segs(trigger_degree).saturating_add(1);
    let reordering_value = if needed > LINUX_TCP_MAX_REORDERING {
        format!(
            "{needed} (the degree that triggered the retransmission + 1; above \
             net.ipv4.tcp_max_reordering = {LINUX_TCP_MAX_REORDERING}, so raise that too, or \
             better remove the cause)"
        )
    } else {
        format!(
            "{needed} (the degree that triggered the retransmission, {} segments, + 1; the \
             largest degree seen was {})",
            segs(trigger_degree),
            segs(max_degree)
        )
    };
    f.fix = vec![
        Fix {
            host: receiver_host,
            action: "if the flow enters this host through a veth/container interface, enable \
                     RPS on it so one flow stays on one CPU: echo <cpu mask> > \
                     /sys/class/net/DEV/queues/rx-N/rps_cpus (seed 03: 695 retransmissions → 0)"
                .into(),
        },
        Fix {
            host: sender_host,
            action: format!(
                "sysctl -w net.ipv4.tcp_reordering={reordering_value}, so that reordering of \
                 that degree does not trigger fast retransmissions (seed 03: 9 cut them from \
                 695 to 149)"
            ),
        },
        Fix {
            host: Host::Both,
            action: "find what reorders on the path: veth/container CPU migration (RPS), \
                     per-packet ECMP or multipath routing (hash per flow), link bonding in \
                     balance-rr mode (use a layer3+4 hash), multi-queue NICs without flow \
                     hashing (RSS); captures at each hop show where the order changes"
                .into(),
        },
    ];
    let timing_only = d
        .late
        .iter()
        .all(|l| matches!(l.proof, Some(Proof::Timing)));
    f.confidence = if dsacked > 0 && !timing_only {
        Confidence::High
    } else if dsacked > 0 || !timing_only {
        Confidence::Medium
    } else {
        Confidence::Low
    };
    if conn.vantage == Vantage::Unknown && f.confidence == Confidence::High {
        f.confidence = Confidence::Medium;
    }
    Some(f)
}

/// Where and how the late segments were seen: at the capture point (with the proof that
/// they were originals) or beyond it, through the receiver's SACKs.
fn where_seen(d: &Dir, from: impl std::fmt::Display, to: impl std::fmt::Display) -> String {
    if d.late.iter().any(|l| l.proof.is_some()) {
        let one = d.late_count == 1;
        let how = match (d.late.iter().find_map(|l| l.proof), one) {
            (Some(Proof::IpId { .. }), false) => "their IP IDs are older than IDs already seen",
            (Some(Proof::IpId { .. }), true) => "its IP ID is older than IDs already seen",
            (Some(Proof::TsVal { .. }), false) => "their TSvals are older than TSvals already seen",
            (Some(Proof::TsVal { .. }), true) => "its TSval is older than TSvals already seen",
            (_, false) => "they filled their holes sooner than a retransmission could have",
            (_, true) => "it filled its hole sooner than a retransmission could have",
        };
        let (segments, were) = if one {
            (
                "segment",
                "it was an original sent earlier, not a retransmission",
            )
        } else {
            (
                "segments",
                "they were originals sent earlier, not retransmissions",
            )
        };
        format!(
            "{} {segments} from {from} to {to} arrived out of order at the capture point; \
             {how}, so {were}.",
            d.late_count,
        )
    } else {
        let cut = if d.cut_dsacks > 0 {
            format!(
                " {} of those retransmissions were shown needless by a D-SACK whose block \
                 the snaplen cut: an ACK carrying one SACK block more than the ACKs before \
                 and after it (its options' length counts the blocks), the late original \
                 arriving after its retransmission.",
                d.cut_dsacks
            )
        } else {
            String::new()
        };
        format!(
            "Data from {from} to {to} was reordered beyond the capture point: {} the \
             receiver's SACKs showed a hole that its ACK then covered with no retransmission \
             in between (or only a needless one), sooner than a retransmission could have \
             been acknowledged.{cut}",
            match d.late_count {
                1 => "once".to_string(),
                n => format!("{n} times"),
            }
        )
    }
}

/// The finding for a reordering that triggered no retransmission: named at zero cost,
/// with its degree and why the sender did not react.
fn absorbed(conn: &Connection<'_>, dir: usize, d: &mut Dir, rtt: u64, mss: u64) -> Finding {
    let (sender, receiver) = (Side::from_index(dir), Side::from_index(dir).peer());
    let ends = conn.summary.endpoints;
    let segs = |b: u64| b.div_ceil(mss);
    let max_degree = d.deepest.map_or(0, |l| l.degree_bytes);
    let median_late = median(&mut d.late_samples_ns);
    let mut f = conn.finding(FindingId::Reordering);
    f.cost_ns = 0;
    f.share = Some(0.0);
    let cited: Vec<Late> = d
        .deepest
        .into_iter()
        .chain(d.late.first().copied())
        .collect();
    for l in cited.iter().take(CITED_LATE) {
        if f.evidence.iter().any(|e| e.frame == l.frame) {
            continue;
        }
        cite_late(&mut f, l, segs(l.degree_bytes));
    }
    let what = where_seen(d, ends[sender], ends[receiver]);
    let how = if d.late_over_dupthresh == 0 {
        format!(
            "every late segment was overtaken by fewer than {LINUX_TCP_REORDERING} segments, \
             below Linux's duplicate-ACK threshold (net.ipv4.tcp_reordering = \
             {LINUX_TCP_REORDERING}), so the SACKs it caused never marked it lost"
        )
    } else {
        format!(
            "{} of them {} overtaken by {LINUX_TCP_REORDERING} or more segments, yet the \
             sender did not retransmit: RACK (RFC 8985, `tcp_rack_detect_loss`) marks a \
             segment lost only once it has been outstanding longer than the RTT of a \
             later-sent segment that was delivered plus a reordering window (min RTT/4 ≈ {} \
             once reordering was seen, growing on D-SACKs up to one SRTT), and Linux raises \
             its threshold (tp->reordering) to the degree it measured, so the late originals \
             were acknowledged first",
            d.late_over_dupthresh,
            plural(d.late_over_dupthresh, "was", "were"),
            ms(rtt / 4)
        )
    };
    f.explanation = format!(
        "Reordering, absorbed at no cost. {what} Degree: up to {} later segments overtook \
         one, up to {} late (median {}); {how}. No retransmission followed and the receiver \
         reassembled the data from its out-of-order queue, so it cost no time here; it is \
         named because the path reorders: a larger degree or lateness (or a sender with a \
         lower threshold) turns it into spurious fast retransmissions and window cuts.",
        segs(max_degree),
        ms(d.max_late_ns),
        ms(median_late),
    );
    f.fix = vec![Fix {
        host: Host::Both,
        action: "nothing is needed while it costs nothing; to remove it, find what reorders \
                 on the path: veth/container CPU migration (RPS on the receiving interface), \
                 per-packet ECMP or multipath routing (hash per flow), link bonding in \
                 balance-rr mode (use a layer3+4 hash), multi-queue NICs without flow hashing \
                 (RSS); captures at each hop show where the order changes"
            .into(),
    }];
    let timing_only = d
        .late
        .iter()
        .all(|l| matches!(l.proof, Some(Proof::Timing)));
    f.confidence = if timing_only {
        Confidence::Low
    } else {
        Confidence::Medium
    };
    f
}

/// Cites one late segment (or SACK hole filled late): where the hole opened, and the
/// late original (or the ACK covering it).
fn cite_late(f: &mut Finding, l: &Late, degree_segs: u64) {
    match l.proof {
        Some(p) => {
            f.cite(
                l.opened_frame,
                l.opened_ts,
                format!("data above seq {}: a hole opens", l.seq),
            );
            f.cite(
                l.frame,
                l.ts,
                format!(
                    "seq {} arrives {} late, after {degree_segs} later {}; {}",
                    l.seq,
                    ms(l.late_ns),
                    plural(degree_segs, "segment", "segments"),
                    p.late_note()
                ),
            );
        }
        None => {
            f.cite(
                l.opened_frame,
                l.opened_ts,
                format!("SACK above ACK {}: the receiver reports a hole", l.seq),
            );
            f.cite(
                l.frame,
                l.ts,
                format!(
                    "ACK covers seq {} {} later, {degree_segs} {} SACKed above it, no \
                     retransmission: the original arrived late",
                    l.seq,
                    ms(l.late_ns),
                    plural(degree_segs, "segment", "segments"),
                ),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ipid::id_after as id_newer;

    /// IPv4 IDs and TSvals compare modulo their width.
    #[test]
    fn ids_and_tsvals_wrap() {
        assert!(id_newer(0x0001, 0xfff0));
        assert!(!id_newer(0x7328, 0x7346));
        assert!(ts_newer(5, u32::MAX - 3));
    }

    /// Ten 100-byte segments in order at time 0, IP IDs 0–9, each ACKed after `rtt_ns`.
    fn ten_in_order(rtt_ns: u64) -> Dir {
        let mut d = Dir::default();
        for i in 0..10u16 {
            let n = u64::from(i);
            d.data(
                n + 1,
                Timestamp(0),
                n * 100,
                100,
                Some(i),
                None,
                Some(rtt_ns),
                false,
            );
        }
        d
    }

    /// A hole filled by an older IP ID is reordering; by a newer one, loss; never
    /// filled but acknowledged, capture loss.
    #[test]
    fn holes_are_told_apart() {
        let t = |ms: i64| Timestamp(ms * 1_000_000);
        let mut d = ten_in_order(25_000_000);
        // Segment 10 (ID 10) late: 11, 12 arrive first.
        d.data(20, t(1), 1100, 100, Some(11), None, None, false);
        d.data(21, t(1), 1200, 100, Some(12), None, None, false);
        d.data(22, t(4), 1000, 100, Some(10), None, None, false);
        assert_eq!(d.late_count, 1);
        assert_eq!(d.late[0].degree_bytes, 200);
        assert_eq!(d.late[0].late_ns, 3_000_000);
        // Segment 13 lost and retransmitted with ID 20.
        d.data(23, t(5), 1400, 100, Some(14), None, None, false);
        d.data(24, t(30), 1300, 100, Some(20), None, None, false);
        assert_eq!(d.loss_holes, 1);
        // Segment 15 never captured, acknowledged.
        d.data(25, t(31), 1600, 100, Some(21), None, None, false);
        d.peer_ack(26, t(32), 1700, &[], false);
        assert_eq!(d.capture_lost_bytes, 100);
        assert_eq!(d.late_count, 1);
    }

    /// At the sender: a SACK hole retransmitted and covered 2 ms later (25 ms RTT) was
    /// filled by the late original; the D-SACK then confirms it. A hole covered 30 ms
    /// after it opened, with no retransmission captured, is not called reordering.
    #[test]
    fn sack_holes_at_the_sender() {
        let t = |us: i64| Timestamp(us * 1_000);
        let mut d = Dir {
            min_ack_rtt: Some(25_000_000),
            ..Dir::default()
        };
        d.data(1, t(0), 0, 100, None, None, None, false);
        d.data(2, t(0), 100, 900, None, None, None, false);
        d.max_payload = 100;
        d.peer_ack(10, t(0), 300, &[(400, 700)], false);
        d.peer_ack(11, t(1_000), 300, &[(400, 800)], false);
        d.retransmitted(12, t(1_000), 300, 400);
        d.peer_ack(13, t(3_000), 800, &[], false);
        assert_eq!(d.late_count, 1);
        assert_eq!(d.late[0].degree_bytes, 400);
        assert_eq!(d.late[0].late_ns, 3_000_000);
        assert_eq!(d.triggered.len(), 1);
        assert!(d.triggered[0].by_timing);
        d.dsack(None, Some((300, 400)), 14, t(26_000));
        assert_eq!(d.triggered[0].dsack, Some((14, t(26_000))));
        d.peer_ack(15, t(30_000), 800, &[(900, 1000)], false);
        d.peer_ack(16, t(60_000), 1000, &[], false);
        assert_eq!(d.late_count, 1);
        assert_eq!(d.unexplained_holes, 1);
    }
    /// A pure ACK whose options the snaplen cut, as `Reordering::on_segment` feeds it:
    /// the repeated cumulative ACK standing for SACK blocks, then the options' length.
    fn cut_ack(d: &mut Dir, frame: u64, ts: Timestamp, ack: u64, options_len: u8) {
        let repeat = d.highest.is_some_and(|h| ack < h);
        let b = d.cut_blocks(ack, repeat);
        if let Some(sp) = d.cut_options(frame, ts, ack, options_len) {
            d.cut_dsack(sp);
        }
        match b {
            Some(b) => d.peer_ack(frame, ts, ack, &[b], true),
            None => d.peer_ack(frame, ts, ack, &[], false),
        }
    }

    /// The shape of sweep s4-010 at the server, snaplen 64 (1 ms RTT, every 80th packet
    /// 10 ms late): cut duplicate ACKs (24 bytes of options: timestamps and one SACK
    /// block) open a hole at segment 5; the fast retransmission fills it and is ACKed a
    /// round trip later, like a needed one; 10 ms later one ACK carries a block more than
    /// the ACKs around it: the D-SACK of the late original. `tail_probe` adds a
    /// retransmission below that ACK 0.5 ms before it (a tail-loss probe's D-SACK would
    /// look the same): then nothing is inferred; `refill` a retransmission between the
    /// ACK with the extra block and the next (it could have filled a second hole).
    fn dsack_cut_by_the_snaplen(tail_probe: bool, refill: bool) -> Dir {
        let t = |us: i64| Timestamp(us * 1_000);
        let mss = 1448;
        let mut d = Dir {
            min_ack_rtt: Some(1_000_000),
            max_ack_rtt: Some(1_000_000),
            ..Dir::default()
        };
        for i in 0..21u64 {
            d.data(1 + i, t(0), i * mss, mss, None, None, None, false);
        }
        cut_ack(&mut d, 30, t(1_000), 5 * mss, 12);
        for k in 0..4u64 {
            cut_ack(&mut d, 31 + k, t(1_100 + 100 * k as i64), 5 * mss, 24);
        }
        d.data(
            40,
            t(1_450),
            5 * mss,
            mss,
            None,
            None,
            Some(1_000_000),
            false,
        );
        d.retransmitted(40, t(1_450), 5 * mss, 6 * mss);
        cut_ack(&mut d, 41, t(2_600), 21 * mss, 12);
        assert_eq!(d.pending.len(), 1);
        for i in 21..31u64 {
            d.data(30 + i, t(2_600), i * mss, mss, None, None, None, false);
        }
        cut_ack(&mut d, 70, t(3_000), 23 * mss, 12);
        if tail_probe {
            d.data(
                71,
                t(11_000),
                24 * mss,
                mss,
                None,
                None,
                Some(1_000_000),
                false,
            );
            d.retransmitted(71, t(11_000), 24 * mss, 25 * mss);
        }
        cut_ack(&mut d, 72, t(11_500), 25 * mss, 24);
        if refill {
            d.data(
                73,
                t(11_550),
                27 * mss,
                mss,
                None,
                None,
                Some(1_000_000),
                false,
            );
            d.retransmitted(73, t(11_550), 27 * mss, 28 * mss);
        }
        cut_ack(&mut d, 74, t(11_600), 26 * mss, 12);
        d
    }

    #[test]
    fn dsack_cut_by_the_snaplen_is_inferred_from_the_options_length() {
        let d = dsack_cut_by_the_snaplen(false, false);
        assert_eq!(d.cut_dsacks, 1);
        assert_eq!(d.late_count, 1);
        assert_eq!(d.triggered.len(), 1);
        let tr = d.triggered[0];
        assert_eq!((tr.frame, tr.seq, tr.cause_frame), (40, 5 * 1448, 31));
        assert_eq!(tr.dsack, Some((72, Timestamp(11_500_000))));
        assert!(tr.confirmed && d.pending.is_empty());
        for (probe, refill) in [(true, false), (false, true)] {
            let d = dsack_cut_by_the_snaplen(probe, refill);
            assert_eq!((d.cut_dsacks, d.late_count, d.pending.len()), (0, 0, 1));
        }
    }

    /// Issue 12, class 2 (sweep s1-002, client.pcap at 1 ms RTT: seq 157833, IP ID
    /// 0xaffb, held 3+ ms; the fast retransmission 0xb024 fills the hole at frame 271
    /// and the original comes after it): an original arriving after the retransmission
    /// that filled its hole was late, not lost, and the retransmission was needless.
    #[test]
    fn original_after_its_retransmission_is_reordering() {
        let t = |ms: i64| Timestamp(ms * 1_000_000);
        let mut d = ten_in_order(1_000_000);
        // Segment 10 (ID 10) late; 11, 12 overtake it, then the retransmission (ID 13).
        d.data(20, t(1), 1100, 100, Some(11), None, None, false);
        d.data(21, t(1), 1200, 100, Some(12), None, None, false);
        d.data(22, t(2), 1000, 100, Some(13), None, None, false);
        assert_eq!((d.loss_holes, d.late_count), (1, 0));
        d.data(23, t(4), 1000, 100, Some(10), None, None, false);
        assert_eq!((d.loss_holes, d.late_count), (0, 1));
        assert_eq!(d.late[0].late_ns, 3_000_000);
        assert_eq!(d.late[0].degree_bytes, 200);
        assert_eq!(d.triggered.len(), 1);
        assert_eq!((d.triggered[0].frame, d.triggered[0].cause_frame), (22, 23));
        assert!(d.triggered[0].confirmed);
    }
}
