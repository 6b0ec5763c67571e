//! `loss.fast_retransmit`, `loss.tail_loss_probe`, `loss.rto` and `retransmit.spurious`:
//! every data retransmission classified by what triggered it and whether it was needed,
//! in one place, so that the four findings never count one retransmission twice.
//!
//! Mechanisms (mechanisms.md "Loss recovery", "retransmit.spurious"; seeds 02, 03):
//! - Fast retransmit (RFC 5681 §3.2, SACK recovery RFC 6675, RACK RFC 8985 §6): the
//!   receiver's duplicate ACKs or SACK blocks show a hole; the sender repairs it about
//!   one RTT after the loss, without a timer. Linux: `tcp_reordering` = 3, RACK default.
//! - Tail loss probe (RFC 8985 §7; Linux `tcp_early_retrans` = 3, `tcp_schedule_loss_probe`):
//!   when the last segments of a burst are lost nothing produces dup ACKs, so after a
//!   probe timeout (2·SRTT + 2 ms; + 200 ms when one segment is outstanding) the sender
//!   retransmits its highest segment, once. Needs SACK.
//! - Retransmission timeout (RFC 6298; Linux `tcp_retransmit_timer`): the head of the
//!   unacknowledged data is retransmitted after the RTO (≥ 200 ms `TCP_RTO_MIN` + SRTT,
//!   1 s before any sample), doubling on each repeat (backoff chain); cwnd drops to one
//!   segment.
//! - Spurious retransmission: the original had arrived. Proofs, strongest first: a
//!   D-SACK (RFC 2883) linked to it by the tracker; the data already acknowledged at the
//!   capture point when the retransmission passed (at the receiver: the original had
//!   arrived); the covering ACK echoing a TSval older than the retransmission's (Eifel,
//!   RFC 3522 §3.2: it answers the original); at the sender, a covering ACK arriving
//!   less than half the smallest measured RTT after the retransmission.
//!
//! Which segments are retransmissions (the tracker's flags are Wireshark's and are not
//! enough, docs/tracking.md): data starting below the highest sequence number seen, or
//! data the capture never saw the first copy of. When the sender numbers its IPv4
//! packets sequentially (Linux does per connection), the IP ID decides: an ID newer than
//! every earlier one means the packet was sent later (a retransmission), an older one a
//! reordered original; and at the receiver, a segment continuing the stream after a
//! pause whose ID skips k numbers had k earlier transmissions lost before the capture
//! point (tail loss repaired by a TLP or an RTO chain, invisible to Wireshark). Without
//! usable IDs, a segment flagged out-of-order counts as a retransmission only at the
//! sender's vantage.
//!
//! Trigger, the same rule from both ends: a loss signal (a duplicate ACK, or an ACK with
//! SACK blocks, whose cumulative ACK is at or below the retransmitted bytes) after the
//! previous transmission of those bytes and at most 1.25 RTT + 25 ms before the
//! retransmission (at the sender it leaves right after the signal; at the receiver it
//! arrives one RTT after the signal it sent) → fast retransmit. Otherwise a timer: the
//! first retransmission of the highest segment sent on a SACK connection is a tail
//! loss probe; any other (the head of a larger flight, a repeat, no SACK) an RTO.
//!
//! Cost of one recovery (the same from both ends, within the capture's timing noise):
//! at the sender, from the original transmission to the ACK covering the repair, minus
//! one RTT; at the receiver, from when the original would have arrived (the segment
//! that jumped the hole, or the last packet before a lost tail) to the repair's
//! arrival. Recoveries that overlap in time count once, across kinds too: time under
//! several open recoveries is the one's that ended last (`attribute_ns`).
//! A spurious retransmission repaired nothing and costs no waiting; the window
//! reduction that follows a retransmission (cwnd ×0.7 with CUBIC, one segment after an
//! RTO) is not estimated and the explanations say so.
//!
//! Fix: find the loss (fast retransmit, RTO chains: drops, policers, outages); for
//! spurious timer retransmissions, an RTT that grew after the handshake (a proxy near
//! one end answering it, seed 02): correct the path, or `net.ipv4.tcp_early_retrans=2`
//! to disable TLP; for spurious fast retransmits, reordering (seed 03): RPS/RSS, raise
//! `net.ipv4.tcp_reordering`.
//!
//! Known false positives: at the receiver, a lost pure ACK of the sender followed by a
//! response after a pause skips an IP ID like a lost tail (the pause must fit a probe /
//! RTO chain, no data may have come from the receiver since, and the segment must
//! acknowledge no more than the sender's previous packet did). Handshake segments are
//! `handshake.syn_retransmit`'s and are left out here.

use crate::detector::{
    emptied_deque, emptied_vec, ms, plural, Connection, Detector, Reusable, Segment, Slots,
};
use crate::finding::{Confidence, Finding, FindingId, Fix, Host};
use tcpwhy_capture::Timestamp;
use tcpwhy_track::{ConnSummary, SegmentKinds, Side, Vantage};

use crate::catalogue::Entry;

/// `loss.rto` in the catalogue (crate::catalogue).
pub const RTO: Entry = Entry {
    id: "loss.rto",
    title: "retransmission timeout",
    meaning: "a loss repaired only when the retransmission timer fired, with its backoff chain",
    fix_goes_to: "the path; the minimum RTO on low-RTT paths",
    part_of: None,
    decided_by: Some(crate::host::BundleSide::Server),
    judge: None,
};

/// `loss.tail_loss_probe` in the catalogue (crate::catalogue).
pub const TAIL_LOSS_PROBE: Entry = Entry {
    id: "loss.tail_loss_probe",
    title: "tail loss probe",
    meaning: "the last segment of a burst was lost, no duplicate ACK could follow, and the probe timer retransmitted it",
    fix_goes_to: "the path; `tcp_early_retrans`",
    part_of: None,
    decided_by: Some(crate::host::BundleSide::Server),
    judge: Some(crate::host::tail_loss_probes::judge_tail_loss_probe),
};

/// `loss.fast_retransmit` in the catalogue (crate::catalogue).
pub const FAST_RETRANSMIT: Entry = Entry {
    id: "loss.fast_retransmit",
    title: "fast retransmit",
    meaning: "a loss repaired after duplicate ACKs or SACK blocks showed the hole",
    fix_goes_to: "the path: where packets are dropped",
    part_of: None,
    decided_by: Some(crate::host::BundleSide::Server),
    judge: None,
};

/// `retransmit.spurious` in the catalogue (crate::catalogue).
pub const SPURIOUS: Entry = Entry {
    id: "retransmit.spurious",
    title: "spurious retransmission",
    meaning: "a retransmission that was not needed (D-SACK, timestamps, ACK timing): the original was only late",
    fix_goes_to: "the RTT estimate (a proxy); reordering on the path",
    part_of: None,
    decided_by: Some(crate::host::BundleSide::Server),
    judge: Some(crate::host::reordering::judge_reordering),
};

/// Linux `TCP_RTO_MIN`: no RTO fires sooner than this after the last transmission.
pub const TCP_RTO_MIN_NS: u64 = 200_000_000;
/// RACK's reordering window (RFC 8985 §6.2: min_rtt/4) plus scheduling slack: how much
/// later than one RTT after its loss signal a fast retransmission may be seen.
pub const FAST_SLACK_NS: u64 = 25_000_000;
/// Without a handshake RTT, a retransmission this soon after a loss signal is taken as
/// its answer (no retransmission timer is shorter: `TCP_RTO_MIN`).
pub const FAST_WINDOW_NO_RTT_NS: u64 = TCP_RTO_MIN_NS;
/// The smallest gap before a retransmission the receiver cannot see, and the soonest any
/// timer is taken to fire but a tail's probe ([`probe_min`], which Linux's jiffy timers
/// let fire sooner): the 10 ms floor of TLP's first specification
/// (draft-dukkipati-tcpm-tcp-loss-probe), raised to 1.5 RTT when the RTT is known (a
/// probe fires after at least 2 SRTT).
pub const HIDDEN_MIN_GAP_NS: u64 = 10_000_000;
/// Linux's floor on the probe timeout beyond 2·SRTT (`tcp_schedule_loss_probe` adds
/// `TCP_TIMEOUT_MIN_US`, 2 ms, when more than one segment is outstanding).
const PROBE_TIMEOUT_MIN_NS: u64 = 2_000_000;
/// The coarsest timer tick among common kernels (HZ = 100): a timer of n jiffies fires on
/// the n-th tick, up to one tick sooner in real time than n × tick after it was set.
const COARSEST_JIFFY_NS: u64 = 10_000_000;
/// Slack on the latest a probe can fire (`probe_in_time`).
const PROBE_MARGIN_NS: u64 = 50_000_000;
/// The longest first timer (Linux's initial RTO, `TCP_TIMEOUT_INIT`, which bounds the
/// probe timeout and the RTO before RTT samples), plus 2 RTT in `timer_chain_fits`.
const TIMER_MAX_FIRST_NS: u64 = 1_000_000_000;
/// Retransmissions remembered per direction, and holes in the received sequence space.
const MAX_RETRANS: usize = 4096;
const MAX_HOLES: usize = 256;

/// What made the sender retransmit.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Trigger {
    /// Duplicate ACKs / SACK: the loss signal the sender answered (recorded as the
    /// first of its run; at the sender's vantage the report uses the last of the run,
    /// `last_*`, which the repair follows at once; at the receiver's the first, sent one
    /// RTT before the repair arrives).
    Fast {
        signal_frame: u64,
        signal_ts: Timestamp,
        last_frame: u64,
        last_ts: Timestamp,
    },
    /// Sooner after the bytes' previous transmission than any timer fires (a probe after
    /// 2·SRTT, `tcp_schedule_loss_probe`; an RTO later still), with no loss signal in
    /// the capture: the signal was there but not seen (its SACK blocks cut by the
    /// snaplen, or an ACK the capture missed). A fast retransmission all the same.
    Unseen,
    /// The tail loss probe timer.
    Probe,
    /// The retransmission timer.
    Timeout,
}

/// One retransmission the detector saw (or, `hidden > 0`, inferred at the receiver).
#[derive(Clone, Debug)]
struct Retrans {
    frame: u64,
    ts: Timestamp,
    seq: u64,
    end: u64,
    tsval: Option<u32>,
    trigger: Trigger,
    /// 1 for the first retransmission of these bytes, 2 for the next …
    attempt: u32,
    /// Index of the first retransmission of the same bytes (the recovery it belongs to).
    head: usize,
    /// The first captured transmission of the bytes.
    original: Option<(u64, Timestamp)>,
    /// At the receiver: when the original would have arrived (the segment that jumped
    /// the hole, or the sender's last packet before a lost tail).
    expected: Option<(u64, Timestamp)>,
    /// Earlier transmissions of the same bytes lost before the capture point (IP IDs).
    hidden: u16,
    /// Only out-of-order by Wireshark's rule and no usable IP ID: a retransmission only
    /// if the capture is at the sender.
    ambiguous: bool,
    /// The ACK that had already covered these bytes at the capture point (at the
    /// receiver it follows the original's arrival at once).
    acked_before: Option<(u64, Timestamp)>,
    /// The first ACK after it covering its end: frame, time, TSecr.
    cover: Option<(u64, Timestamp, Option<u32>)>,
    dsack: Option<(u64, Timestamp)>,
}

impl Retrans {
    /// A FIN without data: recorded only as a tail loss probe ([`record`]), at no cost.
    fn bare_fin(&self) -> bool {
        self.end == self.seq
    }
}

/// Duplicate ACKs / SACKs from the peer with one cumulative ACK value.
#[derive(Copy, Clone, Debug)]
struct Signal {
    ack: u64,
    first_frame: u64,
    first_ts: Timestamp,
    last_frame: u64,
    last_ts: Timestamp,
}

/// Advances of the cumulative ACK remembered per direction.
const ACK_HISTORY: usize = 64;
/// Loss signals remembered per direction (distinct cumulative ACKs).
const MAX_SIGNALS: usize = 32;
/// Backoff chains a timeout finding's explanation spells out; the others are counted.
/// Not a judgement: a chain is every retransmission of one segment by its timer (up to
/// 15 with Linux's default `tcp_retries2`), its frames and the waits between them, and a
/// few show the doubling (RFC 6298 §5.5); a connection that timed out over and over
/// (sharkfest20-trace2 stream 0: 16 chains) would otherwise fill a screen per finding.
const MAX_CHAINS: usize = 4;

#[derive(Copy, Clone, Debug)]
struct Hole {
    start: u64,
    end: u64,
    frame: u64,
    ts: Timestamp,
}

/// One direction's data and the peer's answers to it.
#[derive(Default)]
struct Dir {
    highest_end: u64,
    seen_any: bool,
    /// The last packet (any) from this side, and its payload length.
    last_pkt: Option<(u64, Timestamp, u32)>,
    /// Data came from the peer since this side's last packet.
    peer_data_since: bool,
    /// The ACK number of this side's last packet.
    last_ack_sent: Option<u64>,
    /// The fewest option bytes this side's pure ACKs declared (timestamps, no SACK).
    plain_ack_options: Option<u8>,
    /// The peer's highest cumulative ACK of this side's data, its frame and time.
    cum_ack: Option<(u64, u64, Timestamp)>,
    /// Recent advances of that ACK, oldest first, to date when given bytes were first
    /// acknowledged.
    ack_history: std::collections::VecDeque<(u64, u64, Timestamp)>,
    /// The peer's recent loss signals, one per cumulative ACK value.
    signals: std::collections::VecDeque<Signal>,
    /// The peer's last ACK was a loss signal.
    signalling: bool,
    holes: Vec<Hole>,
    retrans: Vec<Retrans>,
    /// Retransmissions before this index all have their covering ACK.
    open_from: usize,
    /// Smallest data → ACK time seen for this side's data.
    min_ack_rtt: Option<u64>,
    /// When this side last sent data with everything before it acknowledged: the oldest
    /// unacknowledged data was sent then or later.
    unacked_since: Option<Timestamp>,
    dropped: u64,
}

#[derive(Default)]
struct Conn {
    /// [client → server, server → client].
    dirs: [Dir; 2],
}

impl Reusable for Conn {
    fn empty(&mut self) {
        let Conn { dirs } = self;
        for d in dirs {
            *d = Dir {
                ack_history: emptied_deque(&mut d.ack_history),
                signals: emptied_deque(&mut d.signals),
                holes: emptied_vec(&mut d.holes),
                retrans: emptied_vec(&mut d.retrans),
                ..Dir::default()
            };
        }
    }
}

#[derive(Default)]
pub struct Recovery {
    conns: Slots<Conn>,
}

impl Detector for Recovery {
    // Judges retransmissions of data or of a FIN.
    const JUDGES_DATALESS: bool = false;

    // Inlined into the registry's one call per segment (detectors/mod.rs).
    #[inline(always)]
    fn on_segment(&mut self, seg: &Segment<'_>) {
        let ev = seg.ev;
        if ev.kinds.has(SegmentKinds::CAPTURE_DUPLICATE) {
            return;
        }
        let c = self.conns.get_or_default(seg);
        let pkt = seg.pkt;
        let (x, y) = (ev.sender(), ev.receiver());
        let flags = pkt.flags;

        // The handshake's full RTT, once the client's ACK of the SYN/ACK was seen: derived
        // only where a retransmission is recorded, not for every segment (with the IP ID
        // step borrowed rather than copied, 20 instructions a segment, callgrind).
        let hs_rtt = || ev.conn.handshake_rtt_ns();
        // The sender's IP ID as a packet counter, judged on the packets before this one.
        let ids = &seg.ev.ip_id;

        // This packet as an ACK of the peer's data.
        if let Some(a) = ev.rel_ack {
            // A pure ACK repeating this side's last ACK below data the peer sent, its
            // options cut by the snaplen: its SACK blocks cannot be seen. Linux's window
            // grows while out-of-order data queues (`tcp_grow_window`), so the tracker's
            // duplicate-ACK rule (same window) misses these; a SACK sender counts SACKed
            // segments, not windows. A loss signal when SACK is (or may be) in use.
            //
            // The same ACK advancing, right after a signal and still below that data: a
            // partial ACK of the recovery, whose SACK blocks the snaplen cut as well. The
            // receiver still holds data above the next hole (with none it would have
            // acknowledged all it had), and the sender goes on repairing holes on these
            // ACKs (tcp_xmit_retransmit_queue in Recovery; RFC 6675 §5): the repairs of
            // a long recovery that follow them are fast retransmissions, however long
            // after the first signal (sweep s25-080 at snaplen 64: 248 repairs over
            // 430 ms at 120 ms RTT behind a 14 Mbit/s bottleneck, TCPFastRetrans 251 and
            // no RTO; the last ones had been called timeouts).
            //
            // Either way, and for a duplicate ACK without SACK, the data above the ACK
            // must have had time to reach the receiver before it sent the ACK: not when
            // all of it was seen less than this vantage's shortest data → ACK time before
            // (sweep s25-077 at the server, snaplen 64 cutting the SYNs' options: a
            // D-SACK of a probe 0.8 ms after new data at 9 ms RTT, taken for a duplicate
            // ACK of that data, made the next probe a fast retransmission).
            // (Only for the ACKs it can decide: options cut, or a duplicate ACK.)
            let reachable = (pkt.options.truncated || ev.kinds.has(SegmentKinds::DUP_ACK))
                && c.dirs[y]
                    .unacked_since
                    .is_some_and(|t| seg.ts.elapsed_since(t) >= c.dirs[y].min_ack_rtt.unwrap_or(0));
            let pure = ev.payload_len == 0 && !flags.syn() && !flags.fin() && !flags.rst();
            let cut_below_data = pure
                && pkt.options.truncated
                && a < c.dirs[y].highest_end
                && reachable
                && ev
                    .conn
                    .dirs
                    .iter()
                    .all(|d| d.syn.options().is_none_or(|o| o.sack_permitted));
            // Its SACK blocks cut, but counted: a pure ACK whose options are longer than
            // this side's plain ACKs' carries SACK blocks (8 bytes each and their 4-byte
            // header, RFC 2018 §3; the other options of a pure ACK do not change). Sweep
            // s85-091 at the client, snaplen 64: the ACK after the segment past a hole
            // declared 24 bytes of options against 12 (one block), advancing to the hole
            // (it also covered the segment before it); the repair 13.3 ms later was the
            // SACK's (RACK's timer: TCPFastRetrans 2, TCPTimeouts 0), not an RTO.
            let declared = pkt.options.declared_len;
            let plain = c.dirs[x].plain_ack_options;
            let cut_sack = cut_below_data && plain.is_some_and(|p| declared > p);
            if pure {
                c.dirs[x].plain_ack_options = Some(plain.map_or(declared, |p| p.min(declared)));
            }
            let last_ack = c.dirs[x].last_ack_sent;
            let repeat_cut = cut_below_data
                && (last_ack == Some(a)
                    || (c.dirs[y].signalling && last_ack.is_some_and(|l| l < a)));
            let d = &mut c.dirs[y];
            // This ACK covers a fast repair: a segment sent after every original still
            // outstanding was delivered, so Linux in Recovery marks those lost and goes on
            // repairing them (RACK, RFC 8985 §6.2: `tcp_rack_detect_loss`; a partial ACK,
            // RFC 6582 §3.2): a loss signal for the repairs that follow it (sweep s61-064
            // at the server: partial ACKs without SACK blocks, each followed within
            // 40 µs by the next holes' repairs, 136–273 ms after the last SACK;
            // TCPFastRetrans 17, no RTO). After a timeout the repairs are the timer's
            // recovery, and stay so.
            let mut covered_fast = false;
            if d.cum_ack.is_none_or(|(m, _, _)| a > m) {
                d.cum_ack = Some((a, seg.frame, seg.ts));
                if a >= d.highest_end {
                    d.unacked_since = None;
                }
                if d.ack_history.len() == ACK_HISTORY {
                    d.ack_history.pop_front();
                }
                d.ack_history.push_back((a, seg.frame, seg.ts));
                let tsecr = pkt.options.timestamps.map(|t| t.1);
                while d.open_from < d.retrans.len() && d.retrans[d.open_from].cover.is_some() {
                    d.open_from += 1;
                }
                for r in d.retrans[d.open_from..].iter_mut() {
                    if r.cover.is_none() && r.end <= a {
                        r.cover = Some((seg.frame, seg.ts, tsecr));
                        covered_fast |= matches!(r.trigger, Trigger::Fast { .. } | Trigger::Unseen);
                    }
                }
            }
            let sack = (!pkt.options.sack_blocks().is_empty() || cut_sack)
                && !ev.kinds.has(SegmentKinds::DSACK);
            // A duplicate ACK without SACK blocks signals a loss only to a sender without
            // SACK (tcp_add_reno_sack counts it; with SACK, tcp_dupack_heuristics counts
            // SACKed segments and RACK needs SACKed data after the hole): on a SACK
            // connection it is a window update whose scaled field did not change, or an
            // ACK of a segment the receiver dropped (sweep s2-061: a slow reader's
            // window update 39 ms before a tail loss probe).
            let reno_dup = ev.kinds.has(SegmentKinds::DUP_ACK)
                && ev.conn.sack_permitted() != Some(true)
                && reachable;
            d.signalling = reno_dup || sack || repeat_cut || (covered_fast && a < d.highest_end);
            if d.signalling {
                match d.signals.back_mut() {
                    Some(s) if s.ack == a => {
                        s.last_frame = seg.frame;
                        s.last_ts = seg.ts;
                    }
                    _ => {
                        if d.signals.len() == MAX_SIGNALS {
                            d.signals.pop_front();
                        }
                        d.signals.push_back(Signal {
                            ack: a,
                            first_frame: seg.frame,
                            first_ts: seg.ts,
                            last_frame: seg.frame,
                            last_ts: seg.ts,
                        });
                    }
                }
            }
            if ev.kinds.has(SegmentKinds::DSACK) {
                // The tracker links D-SACKs to segments it flagged as retransmissions;
                // a retransmission it saw as out-of-order (sent within the handshake RTT
                // of the highest segment) is matched here by the block's range.
                let block = pkt.options.sack_blocks().first().map(|&(l, r)| {
                    let rel = |edge: u32| seg.rel_sack_edge(edge).unwrap_or(0);
                    (rel(l), rel(r))
                });
                // The tracker's link names the latest copy of the bytes it flagged; when
                // that copy is not one recorded here it was a late original (older IP ID
                // or TSval) that arrived after the retransmission had overtaken it (an
                // original late by more than an RTT, seen at the receiver: sweep
                // s1-042). The receiver then had the bytes twice (RFC 2883 §4.1), so
                // the retransmission of that range was spurious: match it by range.
                let linked = ev
                    .dsack_of
                    .filter(|&f| d.retrans.iter().any(|r| r.frame == f));
                let hit = d.retrans.iter_mut().rev().find(|r| {
                    linked == Some(r.frame)
                        || (linked.is_none()
                            && r.dsack.is_none()
                            && block.is_some_and(|(l, rr)| r.seq < rr && l < r.end))
                });
                if let Some(r) = hit {
                    r.dsack.get_or_insert((seg.frame, seg.ts));
                }
            }
            if let Some((_, ns)) = ev.ack_rtt {
                d.min_ack_rtt = Some(d.min_ack_rtt.map_or(ns, |m| m.min(ns)));
            }
        }
        if ev.payload_len > 0 {
            c.dirs[y].peer_data_since = true;
        }

        // The receiver (`peer`) and its last packet: a timer retransmission fires at
        // least one timer after the last ACK reached the sender, never right after it
        // (ACK-clocked data).
        let [client, server] = &mut c.dirs;
        let (d, peer) = match x {
            Side::Client => (client, &*server),
            Side::Server => (server, &*client),
        };
        // SACK unless a whole SYN showed it off (Linux negotiates it by default); read
        // only for a segment after hidden losses.
        let sack_ok = || {
            ev.conn
                .dirs
                .iter()
                .all(|d| d.syn.options().is_none_or(|o| o.sack_permitted))
        };

        let len = u64::from(ev.payload_len);
        let end = ev.rel_seq.saturating_add(len);
        let keepalive =
            ev.kinds.0 & (SegmentKinds::KEEP_ALIVE | SegmentKinds::ZERO_WINDOW_PROBE) != 0;
        // A bare FIN takes a sequence number and a probe resends it when it was the tail
        // (`tcp_send_loss_probe` resends the highest skb; probes need SACK): sweep
        // s19-091's client, its FIN's ACK lost at a 1 ms RTT, probed 211 ms later
        // (TCPLossProbes 1). Only as a probe ([`record`]): a FIN's timeout chain after a
        // peer went away is no time anyone waited (suricata-verify-tls-subjectaltname:
        // 30 s chains of FINs).
        if (len > 0 || (flags.fin() && sack_ok())) && !flags.syn() && !keepalive && d.seen_any {
            let flagged =
                ev.kinds.0 & (SegmentKinds::RETRANSMISSION | SegmentKinds::OUT_OF_ORDER) != 0;
            let below = ev.rel_seq < d.highest_end;
            if below && flagged {
                // RFC 7323: a sender's TSval never goes back and a retransmission carries a
                // current one, so a segment older than one already sent is a late original.
                // The model's newest TSval counts this segment too: it is newer than this
                // one's only if an earlier segment carried it.
                let tsval = pkt.options.timestamps.map(|t| t.0);
                let older_tsval = tsval
                    .zip(ev.conn.dirs[x].tsval_max)
                    .is_some_and(|(t, m)| (m.wrapping_sub(t) as i32) > 0);
                let (is_retrans, ambiguous) = match (ids.counter, ids.newest) {
                    // Sent before a segment already seen: a late original (reordering),
                    // whatever Wireshark's flag says (its rule is timing only).
                    _ if older_tsval => (false, false),
                    (true, Some(newer)) => (newer, false),
                    // IDs that count packets from the latest one order the sender's
                    // packets even when late originals make too many steps irregular for
                    // a counter: every 13th packet 5 ms late makes 2 of each 13 steps
                    // irregular, 1 of each 13 from the latest (sweep s51-010 at the
                    // client, snaplen 64: nine late originals 3–5 ms after the duplicate
                    // ACKs at 97 ms RTT, named fast retransmissions, with TCPFastRetrans
                    // 0). Only to recognise an older ID: a newer one from such a sender
                    // is judged as before.
                    (false, Some(false)) if ids.ordered => (false, false),
                    _ => (true, !ev.kinds.has(SegmentKinds::RETRANSMISSION)),
                };
                if is_retrans {
                    let hole = d
                        .holes
                        .iter()
                        .rev()
                        .find(|h| h.start <= ev.rel_seq && ev.rel_seq < h.end)
                        .map(|h| (h.frame, h.ts));
                    let acked_before = d
                        .ack_history
                        .iter()
                        .find(|&&(a, _, _)| a >= end)
                        .or(d.cum_ack.as_ref().filter(|&&(a, _, _)| a >= end))
                        .map(|&(_, fr, t)| (fr, t));
                    record(
                        d,
                        seg,
                        hs_rtt(),
                        ev.original,
                        hole,
                        0,
                        ambiguous,
                        acked_before,
                    );
                }
            } else if ev.rel_seq == d.highest_end
                && !d.peer_data_since
                && ev.rel_ack == d.last_ack_sent
            {
                // (A packet acknowledging more than the one before could follow a lost
                // pure ACK of that data rather than lost transmissions of its own.)
                // A segment continuing the stream after a pause, with IP IDs missing
                // before it: its earlier transmissions were lost before the capture.
                if let (Some(k), Some((lf, lt, _))) = (ids.hidden(), d.last_pkt) {
                    let since = |t: Timestamp| seg.ts.elapsed_since(t);
                    let gap = since(lt);
                    let quiet = peer.last_pkt.map_or(gap, |p| since(p.1)).min(gap);
                    let sack_ok = sack_ok();
                    let hs_rtt = hs_rtt();
                    if timer_chain_fits(k, gap, hs_rtt, sack_ok)
                        && timer_chain_fits(k, quiet, hs_rtt, sack_ok)
                    {
                        record(d, seg, hs_rtt, None, Some((lf, lt)), k as u16, false, None);
                    }
                }
            }
            if ev.rel_seq > d.highest_end && d.holes.len() < MAX_HOLES {
                d.holes.push(Hole {
                    start: d.highest_end,
                    end: ev.rel_seq,
                    frame: seg.frame,
                    ts: seg.ts,
                });
            }
        }
        let syn_fin = u64::from(flags.syn()) + u64::from(flags.fin());
        let end_all = end.saturating_add(syn_fin);
        if end_all > d.highest_end && d.cum_ack.is_none_or(|(a, _, _)| a >= d.highest_end) {
            d.unacked_since.get_or_insert(seg.ts);
        }
        d.highest_end = d.highest_end.max(end_all);
        d.seen_any = true;
        d.last_pkt = Some((seg.frame, seg.ts, ev.payload_len));
        d.peer_data_since = false;
        d.last_ack_sent = ev.rel_ack;
    }

    fn on_connection(&mut self, conn: &Connection<'_>, out: &mut Vec<Finding>) {
        let Some(st) = self.conns.take_reusing(conn) else {
            return;
        };
        let sack = {
            let [a, b] = conn.summary.dirs.each_ref().map(|d| d.syn_whole());
            match (a, b) {
                (Some(a), Some(b)) => a.sack_permitted && b.sack_permitted,
                _ => true, // not seen or cut: Linux negotiates it by default
            }
        };
        let rtt = conn.rtt_ns.unwrap_or(0);
        let mut all = Vec::new();
        for (x, d) in st.dirs.iter().enumerate() {
            let sender_role = if x == 0 {
                Vantage::Client
            } else {
                Vantage::Server
            };
            let at_sender = conn.vantage == sender_role;
            let at_receiver =
                matches!(conn.vantage, Vantage::Client | Vantage::Server) && !at_sender;
            for (i, r) in d.retrans.iter().enumerate() {
                if (r.ambiguous && !at_sender) || (r.hidden > 0 && !at_receiver) {
                    continue;
                }
                all.push(Classified::new(
                    x,
                    d,
                    i,
                    r,
                    sack,
                    at_sender,
                    at_receiver,
                    rtt,
                ));
            }
        }
        if all.is_empty() {
            return;
        }
        let first = out.len();
        report(conn, &st, &all, rtt, out);
        let dropped: u64 = st.dirs.iter().map(|d| d.dropped).sum();
        if dropped > 0 {
            for f in &mut out[first..] {
                f.explanation.push_str(&format!(
                    " {dropped} further retransmissions were not classified (at most \
                     {MAX_RETRANS} are kept per direction)."
                ));
            }
        }
    }

    /// Nothing is kept across connections: each one's state is dropped in `on_connection`.
    fn absorb(&mut self, _other: Self) {}
}

/// The soonest a sender's first timer retransmission follows the bytes' previous
/// transmission: a probe after at least 1.5 RTT and 10 ms (it waits 2·SRTT), or without
/// SACK an RTO (`TCP_RTO_MIN`).
fn first_timer_min(rtt: Option<u64>, sack: bool) -> u64 {
    let rtt = rtt.unwrap_or(0);
    if sack {
        rtt.saturating_add(rtt / 2).max(HIDDEN_MIN_GAP_NS)
    } else {
        TCP_RTO_MIN_NS // no probe without SACK: the first retransmission is an RTO
    }
}

/// Whether `gap` can be the time a sender's timers took to send `k` transmissions that
/// were all lost, the last of them `k` − 1 retransmissions after the original: a probe
/// after at least 1.5 RTT (and 10 ms), then timeouts of at least 200 ms, doubling
/// (`TCP_RTO_MIN`); at most 1 s + 2 RTT for the first (Linux's initial RTO bounds both),
/// doubling after. Gaps outside come from something else (an application pause after a
/// lost ACK, an IP ID counter shared with other connections).
fn timer_chain_fits(k: u32, gap: u64, rtt: Option<u64>, sack: bool) -> bool {
    let first_min = first_timer_min(rtt, sack);
    let rtt = rtt.unwrap_or(0);
    let doubling = |unit: u64, n: u32| unit.saturating_mul((1u64 << n.min(20)) - 1);
    let min = first_min.saturating_add(doubling(TCP_RTO_MIN_NS, k - 1));
    let max = doubling(TIMER_MAX_FIRST_NS.saturating_add(rtt.saturating_mul(2)), k);
    gap >= min && gap <= max
}

/// The soonest Linux's probe timer can retransmit the tail after its last transmission:
/// 2·SRTT + 2 ms (`tcp_schedule_loss_probe`; SRTT at least ¾ of the handshake's RTT, as
/// in [`first_timer_min`]), converted to jiffies, less the one tick a jiffy timer can
/// fire early ([`COARSEST_JIFFY_NS`]). Near 0 on a path of a few ms: sweep s34-045's
/// server probed its tail 8.69 ms after it at a 1.1 ms RTT (HZ = 250: 2·SRTT + 2 ms is 2
/// jiffies; TCPLossProbes 4, TCPFastRetrans 0), below the 10 ms that
/// [`first_timer_min`] allows any timer, so it had been taken for a fast retransmission
/// whose signal the capture missed. Without the handshake's RTT, no SRTT bounds it and
/// [`first_timer_min`]'s floor stands (pcapplusplus-sll2.pcap, begun mid-connection: a
/// second FIN 0.09 ms after the first is no probe this rule can tell).
fn probe_min(rtt: Option<u64>) -> u64 {
    let Some(rtt) = rtt else {
        return first_timer_min(None, true);
    };
    rtt.saturating_add(rtt / 2)
        .saturating_add(PROBE_TIMEOUT_MIN_NS)
        .saturating_sub(COARSEST_JIFFY_NS)
}

/// A probe fires no later than 2·SRTT + 200 ms after the last transmission (RFC 8985
/// §7.2 with Linux's allowance for a delayed ACK when one segment is outstanding); a
/// first timer retransmission much later than that (seconds on a path of milliseconds)
/// is an RTO. The margin (one more RTT and 50 ms) allows for an SRTT above the
/// handshake RTT. Unknown RTT or original: not ruled out.
fn probe_in_time(rtt: Option<u64>, previous_tx: Option<Timestamp>, now: Timestamp) -> bool {
    match (rtt, previous_tx) {
        (Some(r), Some(p)) => {
            let limit = r
                .saturating_mul(3)
                .saturating_add(TCP_RTO_MIN_NS + PROBE_MARGIN_NS);
            now.elapsed_since(p) <= limit
        }
        _ => true,
    }
}

/// Records one retransmission with its trigger.
#[allow(clippy::too_many_arguments)]
fn record(
    d: &mut Dir,
    seg: &Segment<'_>,
    hs_rtt: Option<u64>,
    original: Option<(u64, Timestamp)>,
    expected: Option<(u64, Timestamp)>,
    hidden: u16,
    ambiguous: bool,
    acked_before: Option<(u64, Timestamp)>,
) {
    if d.retrans.len() >= MAX_RETRANS {
        d.dropped += 1;
        return;
    }
    let ev = seg.ev;
    let end = ev.rel_seq.saturating_add(u64::from(ev.payload_len));
    // Where this segment ends in sequence space, its FIN counted, as `highest_end` is: a
    // retransmitted last segment carrying the FIN is still the tail (tcp_send_loss_probe
    // retransmits the highest skb, FIN and all).
    let end_with_fin = end.saturating_add(u64::from(seg.pkt.flags.fin()));
    // The same bytes retransmitted before and still not acknowledged: a repeat.
    let prior = d
        .retrans
        .iter()
        .enumerate()
        .rev()
        .take(64)
        .find(|(_, r)| r.seq == ev.rel_seq && r.cover.is_none())
        .map(|(_, r)| (r.head, r.attempt, r.ts));
    let attempt = prior.map_or(u32::from(hidden.max(1)), |p| p.1 + 1);
    let head = prior.map_or(d.retrans.len(), |p| p.0);
    let previous_tx = prior
        .map(|p| p.2)
        .or(original.map(|o| o.1))
        .or(expected.map(|e| e.1));
    let window = hs_rtt.map_or(FAST_WINDOW_NO_RTT_NS, |r| {
        r.saturating_add(r / 4).saturating_add(FAST_SLACK_NS)
    });
    // Sooner than Linux's smallest RTO after the bytes' previous transmission, no
    // retransmission timer can have fired: with a loss signal since, the repair was the
    // signal's however long after it (an RTT grown by a queue, e.g. 95 ms behind a full
    // 63-packet queue at 8 Mbit/s with a 3 ms handshake RTT: sweep s1-080). The RTO is
    // SRTT + max(mdev, tcp_rto_min) (`__tcp_set_rto`, `tcp_rtt_estimator` keeps rttvar
    // at or above tcp_rto_min, 200 ms unless a route lowers it), and SRTT averages
    // samples no shorter than the path's RTT, of which the handshake is one: a
    // retransmission 201 ms after its original on a 12 ms path behind a 160 ms queue
    // was the SACKs' (sweep s10-056), not a timer's. Seen from the receiver, the gap
    // from the original's expected arrival is the sender's, the path's delay on both
    // sides.
    let rto_floor = TCP_RTO_MIN_NS.saturating_add(hs_rtt.unwrap_or(0));
    let too_soon_for_rto = previous_tx.is_some_and(|p| seg.ts.elapsed_since(p) < rto_floor);
    // A signal before the original as seen here counts when it asked for exactly these
    // bytes and this is their first retransmission: the receiver was already missing them
    // when the original passed, so the original was late (held behind later data, the
    // path reordering), and the duplicate ACKs that the later data drew are what the
    // sender repaired on (sweep s57-042 at the client, snaplen 64, every 60th packet 10 ms
    // late at 4 ms RTT: duplicate ACKs of byte 772,713, then its late original, then the
    // repair 11.2 ms after it, named a timeout; nstat: no RTO).
    let late_original = prior.is_none() && original.is_some();
    let signal = d.signals.iter().rev().find(|s| {
        s.ack <= ev.rel_seq
            && previous_tx.is_none_or(|p| s.last_ts >= p || (late_original && s.ack == ev.rel_seq))
            && (seg.ts.elapsed_since(s.last_ts) <= window || too_soon_for_rto)
    });
    // No timer fires sooner than a probe's floor (`timer_chain_fits`' first gap), except
    // the probe of the tail itself, which Linux's timer granularity lets fire sooner
    // (`probe_min`). Only the tail is probed (tcp_send_loss_probe resends the highest
    // segment), and nothing above it can ask for its fast retransmission.
    let tail = attempt == 1 && end_with_fin >= d.highest_end;
    let probed_tail =
        tail && previous_tx.is_some_and(|p| seg.ts.elapsed_since(p) >= probe_min(hs_rtt));
    let before_any_timer = !probed_tail
        && previous_tx.is_some_and(|p| seg.ts.elapsed_since(p) < first_timer_min(hs_rtt, true));
    let trigger = match signal {
        Some(s) if hidden == 0 => Trigger::Fast {
            signal_frame: s.first_frame,
            signal_ts: s.first_ts,
            last_frame: s.last_frame,
            last_ts: s.last_ts,
        },
        None if hidden == 0 && before_any_timer => Trigger::Unseen,
        _ if tail && probe_in_time(hs_rtt, previous_tx, seg.ts) => Trigger::Probe,
        _ => Trigger::Timeout,
    };
    if end == ev.rel_seq && trigger != Trigger::Probe {
        return; // a bare FIN counts only as a tail loss probe (the caller's note)
    }
    d.retrans.push(Retrans {
        frame: seg.frame,
        ts: seg.ts,
        seq: ev.rel_seq,
        end,
        tsval: seg.pkt.options.timestamps.map(|t| t.0),
        trigger,
        attempt,
        head,
        original,
        expected,
        hidden,
        ambiguous,
        acked_before,
        cover: None,
        dsack: None,
    });
}

/// Why a retransmission was not needed.
#[derive(Clone, Debug)]
enum Proof {
    Dsack(u64),
    AckedBefore(u64),
    Eifel {
        frame: u64,
        tsecr: u32,
        tsval: u32,
    },
    TooSoon {
        frame: u64,
        after_ns: u64,
        min_rtt_ns: u64,
    },
}

/// One retransmission with everything decided.
struct Classified {
    dir: usize,
    r: Retrans,
    trigger: Trigger,
    /// Lost transmissions before it, each with its trigger (receiver-side inference).
    hidden_triggers: Vec<Trigger>,
    proof: Option<Proof>,
    /// For the first retransmission of a recovery: when the original left (or would have
    /// arrived) and when the repair was done, on the capture's clock, cost removed.
    interval: Option<(i64, i64)>,
    /// When the capture saw the recovery's repair (its last retransmission).
    repaired_at: i64,
    /// Time from the original to this retransmission.
    fired_after_ns: Option<u64>,
    /// At the sender: time from the original to the ACK that covered it.
    ack_took_ns: Option<u64>,
    at_receiver: bool,
}

impl Classified {
    #[allow(clippy::too_many_arguments)]
    fn new(
        dir: usize,
        d: &Dir,
        i: usize,
        r: &Retrans,
        sack: bool,
        at_sender: bool,
        at_receiver: bool,
        rtt: u64,
    ) -> Classified {
        let mut trigger = r.trigger;
        if let Trigger::Fast {
            last_frame,
            last_ts,
            ..
        } = trigger
        {
            if !at_receiver {
                trigger = Trigger::Fast {
                    signal_frame: last_frame,
                    signal_ts: last_ts,
                    last_frame,
                    last_ts,
                };
            }
        }
        if trigger == Trigger::Probe && !sack {
            trigger = Trigger::Timeout; // Linux sends probes only on SACK connections
        }
        // Receiver-side chains: the lost ones were a probe (with SACK) then timeouts.
        let mut hidden_triggers = Vec::new();
        if r.hidden > 0 {
            for k in 1..=u32::from(r.hidden) {
                // Transmission k (0 = the original) of the chain.
                let t = if k == 1 && sack {
                    Trigger::Probe
                } else {
                    Trigger::Timeout
                };
                if k < u32::from(r.hidden) {
                    hidden_triggers.push(t);
                } else {
                    trigger = t;
                }
            }
        }
        // A bare FIN sent again costs no bandwidth and no cwnd: nothing spurious worth
        // naming, and the kernel counted none (s19-091: the server had ACKed the client's
        // FIN, the ACK was lost, and the probe resent it; no D-SACK in its nstat).
        let proof = if r.bare_fin() {
            None
        } else if let Some((f, _)) = r.dsack {
            Some(Proof::Dsack(f))
        } else if let Some((f, _)) = r.acked_before {
            Some(Proof::AckedBefore(f))
        } else {
            match (r.cover, r.tsval) {
                (Some((f, _, Some(tsecr))), Some(tsval))
                    if tsecr != 0 && (tsval.wrapping_sub(tsecr) as i32) > 0 && r.hidden == 0 =>
                {
                    Some(Proof::Eifel {
                        frame: f,
                        tsecr,
                        tsval,
                    })
                }
                (Some((f, t, _)), _) if at_sender => {
                    let after = t.elapsed_since(r.ts);
                    let min_rtt = d
                        .min_ack_rtt
                        .into_iter()
                        .chain(Some(rtt).filter(|&v| v > 0))
                        .min();
                    min_rtt.filter(|&m| after < m / 2).map(|m| Proof::TooSoon {
                        frame: f,
                        after_ns: after,
                        min_rtt_ns: m,
                    })
                }
                _ => None,
            }
        };
        let start = r.original.map(|o| o.1);
        // At the receiver, an original that arrived was ACKed at once: that ACK dates it.
        let arrived = r.acked_before.filter(|_| at_receiver).map(|a| a.1);
        let fired_after_ns = start
            .or(r.expected.map(|e| e.1))
            .or(arrived)
            .map(|t| r.ts.elapsed_since(t));
        let ack_took_ns = match (start, r.cover) {
            (Some(o), Some((_, t, _))) if at_sender => Some(t.elapsed_since(o)),
            _ => None,
        };
        // The recovery's cost interval, computed on its first retransmission from the
        // last one of the same bytes (the repair).
        let mut interval = None;
        let mut repaired_at = r.ts.nanos();
        if r.head == i && proof.is_none() {
            let last = d.retrans[i..]
                .iter()
                .rev()
                .find(|q| q.head == i)
                .unwrap_or(r);
            repaired_at = last.ts.nanos();
            if at_receiver {
                if let Some((_, e)) = r.expected.or(r.original) {
                    interval = Some((e.nanos(), last.ts.nanos()));
                }
            } else if let Some((_, o)) = r.original.or(r.expected) {
                let done = last
                    .cover
                    .map(|c| {
                        c.1.nanos()
                            .saturating_sub(i64::try_from(rtt).unwrap_or(i64::MAX))
                    })
                    .unwrap_or(last.ts.nanos());
                interval = Some((o.nanos(), done.max(o.nanos())));
            }
        }
        Classified {
            dir,
            r: r.clone(),
            trigger,
            hidden_triggers,
            proof,
            interval,
            repaired_at,
            fired_after_ns,
            ack_took_ns,
            at_receiver,
        }
    }

    fn kind(&self) -> Kind {
        Kind::of(self.trigger)
    }

    /// The cost interval of the recovery this (first) retransmission began, for
    /// [`attribute_ns`].
    fn span(&self, all: &[Classified]) -> Option<Span> {
        // A bare FIN's probe: the application had closed; the wait is the kernel's,
        // not a user's (s19-091's client, its FIN probed 211 ms after it was sent).
        if self.r.bare_fin() {
            return None;
        }
        let (start, end) = self.interval?;
        let kind = repair_kind(all, self);
        Some(Span {
            start,
            end,
            kind,
            timer_until: match kind {
                Kind::Fast => start,
                Kind::Probe | Kind::Timeout => self.repaired_at,
            },
        })
    }
}

/// The recovery kinds, in the order of [`attribute_ns`]'s result.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Kind {
    Fast = 0,
    Probe = 1,
    Timeout = 2,
}

impl Kind {
    /// Which kind gets the time of two recoveries that end together: the timer's wait
    /// is the longer cause.
    fn rank(self) -> u8 {
        self as u8
    }
    fn from_rank(r: u8) -> Kind {
        match r {
            0 => Kind::Fast,
            1 => Kind::Probe,
            _ => Kind::Timeout,
        }
    }
    fn of(t: Trigger) -> Kind {
        match t {
            Trigger::Fast { .. } | Trigger::Unseen => Kind::Fast,
            Trigger::Probe => Kind::Probe,
            Trigger::Timeout => Kind::Timeout,
        }
    }
    fn id(self) -> FindingId {
        match self {
            Kind::Fast => FindingId::LossFastRetransmit,
            Kind::Probe => FindingId::LossTailLossProbe,
            Kind::Timeout => FindingId::LossRto,
        }
    }
    fn name(self, n: usize) -> &'static str {
        match (self, n == 1) {
            (Kind::Fast, true) => "fast retransmission",
            (Kind::Fast, false) => "fast retransmissions",
            (Kind::Probe, true) => "tail loss probe",
            (Kind::Probe, false) => "tail loss probes",
            (Kind::Timeout, true) => "retransmission timeout",
            (Kind::Timeout, false) => "retransmission timeouts",
        }
    }
}

/// One recovery's cost interval, of the kind of its repair, and until when a timer of
/// that kind (an RTO or a tail loss probe: the repair was the timer's) held it: its
/// start when a duplicate ACK or SACK triggered the repair.
#[derive(Copy, Clone, Debug)]
struct Span {
    start: i64,
    end: i64,
    kind: Kind,
    timer_until: i64,
}

/// Each kind's share of the time the recoveries' intervals cover, counting every instant
/// once. An instant while a timer held a recovery (from its original to the timer's
/// retransmission) is the timer's: the sender sat idle until it fired, and every other
/// recovery open meanwhile waited for it too (tcp_retransmit_timer then retransmits
/// what was marked lost, tcp_enter_loss; seen as fast retransmissions right after the
/// RTO in suricata-verify syn-retransmit-with-ts-vlan, frames 239–246). Any other
/// instant is the one's of the recovery that ends last: the application gets the bytes
/// after a hole only once every hole before them is filled (RFC 9293 §3.10.7.4), so
/// with several open the data waits for the last, and without the ones that end
/// earlier it would have waited as long. Ties: RTO before probe before fast.
fn attribute_ns(mut v: Vec<Span>) -> [u64; 3] {
    use std::collections::BinaryHeap;
    let mut out = [0u64; 3];
    v.retain(|s| s.end > s.start);
    if v.is_empty() {
        return out;
    }
    v.sort_unstable_by_key(|s| s.start);
    let mut points: Vec<i64> = v
        .iter()
        .flat_map(|s| [s.start, s.end, s.timer_until.clamp(s.start, s.end)])
        .collect();
    points.sort_unstable();
    points.dedup();
    // Max-heaps of the recoveries started so far: by end (the last to end), and by how
    // long their RTO / probe timer held them. One whose end (timer) has passed is
    // dropped when it reaches the top: below it, every other has passed too.
    let mut by_end: BinaryHeap<(i64, u8)> = BinaryHeap::new();
    let mut timers: [BinaryHeap<i64>; 2] = [BinaryHeap::new(), BinaryHeap::new()];
    let mut next = 0;
    for w in points.windows(2) {
        let (x, y) = (w[0], w[1]);
        while next < v.len() && v[next].start <= x {
            let s = v[next];
            by_end.push((s.end, s.kind.rank()));
            match s.kind {
                Kind::Timeout => timers[1].push(s.timer_until.min(s.end)),
                Kind::Probe => timers[0].push(s.timer_until.min(s.end)),
                Kind::Fast => {}
            }
            next += 1;
        }
        for h in timers.iter_mut() {
            if h.peek().is_some_and(|&t| t <= x) {
                h.clear();
            }
        }
        while by_end.peek().is_some_and(|&(e, _)| e <= x) {
            by_end.pop();
        }
        let kind = if !timers[1].is_empty() {
            Kind::Timeout
        } else if !timers[0].is_empty() {
            Kind::Probe
        } else if let Some(&(_, rank)) = by_end.peek() {
            Kind::from_rank(rank)
        } else {
            continue;
        };
        let k = kind as usize;
        out[k] = out[k].saturating_add(y.saturating_sub(x).max(0) as u64);
    }
    out
}

fn side(dir: usize) -> &'static str {
    if dir == 0 {
        "client"
    } else {
        "server"
    }
}

fn report(conn: &Connection<'_>, _st: &Conn, all: &[Classified], rtt: u64, out: &mut Vec<Finding>) {
    let total = all.len() + all.iter().map(|c| c.hidden_triggers.len()).sum::<usize>();
    // A recovery's cost goes to the kind of its last (repairing) retransmission.
    let cost = attribute_ns(all.iter().filter_map(|c| c.span(all)).collect());
    for kind in [Kind::Fast, Kind::Probe, Kind::Timeout] {
        let mine: Vec<&Classified> = all.iter().filter(|c| c.kind() == kind).collect();
        let hidden: usize = all
            .iter()
            .flat_map(|c| c.hidden_triggers.iter())
            .filter(|t| {
                matches!(
                    (kind, t),
                    (Kind::Probe, Trigger::Probe) | (Kind::Timeout, Trigger::Timeout)
                )
            })
            .count();
        let n = mine.len() + hidden;
        if n == 0 {
            continue;
        }
        // Retransmissions that reached the capture point after lost ones of this kind
        // (inferred at the receiver from skipped IP IDs).
        let carriers: Vec<&Classified> = all
            .iter()
            .filter(|c| c.hidden_triggers.iter().any(|t| Kind::of(*t) == kind))
            .collect();
        let mut f = conn.finding(kind.id());
        f.cost_ns = cost[kind as usize];
        f.share = Some(f.cost_ns as f64 / conn.active_ns().max(1) as f64);
        let spurious = mine.iter().filter(|c| c.proof.is_some()).count();
        for c in &mine {
            cite_one(&mut f, c);
        }
        for c in &carriers {
            let lost = c
                .hidden_triggers
                .iter()
                .filter(|t| Kind::of(**t) == kind)
                .count();
            f.cite(
                c.r.frame,
                c.r.ts,
                format!(
                    "{} {} of these bytes sent before this packet never reached the capture \
                     point (IP IDs skipped)",
                    lost,
                    kind.name(lost)
                ),
            );
        }
        f.evidence.sort_by_key(|e| e.frame);
        f.evidence.dedup_by_key(|e| e.frame);
        let mut who: Vec<&str> = mine.iter().chain(&carriers).map(|c| side(c.dir)).collect();
        who.sort_unstable();
        who.dedup();
        let lost_probe = !carriers.is_empty();
        f.explanation = explain(
            kind,
            all,
            &mine,
            n,
            spurious,
            rtt,
            &who.join(" and "),
            lost_probe,
        );
        f.fix = fixes(kind, spurious == mine.len() && hidden == 0);
        f.confidence = if mine.iter().chain(&carriers).any(|c| c.r.hidden > 0) {
            Confidence::Medium
        } else {
            Confidence::High
        };
        out.push(f);
    }
    let spurious: Vec<&Classified> = all.iter().filter(|c| c.proof.is_some()).collect();
    if !spurious.is_empty() {
        let mut f = conn.finding(FindingId::RetransmitSpurious);
        for c in &spurious {
            cite_one(&mut f, c);
            if let Some(p) = &c.proof {
                let (frame, note) = proof_note(p, c);
                f.cite(frame, c.r.ts, note);
            }
        }
        f.evidence.sort_by_key(|e| e.frame);
        // Timestamps of proofs: look them up from the retransmission's cover / dsack.
        for e in f.evidence.iter_mut() {
            for c in &spurious {
                if let Some((df, dt)) = c.r.dsack {
                    if e.frame == df {
                        e.ts = dt;
                    }
                }
                if let Some((cf, ct, _)) = c.r.cover {
                    if e.frame == cf {
                        e.ts = ct;
                    }
                }
            }
        }
        f.explanation = explain_spurious(&spurious, total, conn.summary);
        f.fix = spurious_fixes(&spurious);
        f.confidence = Confidence::High;
        out.push(f);
    }
}

/// The kind of the retransmission that repaired `c`'s recovery (the last of its group).
fn repair_kind(all: &[Classified], c: &Classified) -> Kind {
    all.iter()
        .rev()
        .find(|q| q.dir == c.dir && q.r.head == c.r.head)
        .map_or(c.kind(), |q| q.kind())
}

/// " 260 ms after the original", measured from what the capture saw of it.
fn after(c: &Classified) -> String {
    let Some(n) = c.fired_after_ns else {
        return String::new();
    };
    let from = if c.r.original.is_some() {
        "the original"
    } else if c.r.hidden > 0 {
        "the sender's previous packet"
    } else if c.r.expected.is_some() {
        "the segment past the hole"
    } else {
        "the original arrived"
    };
    format!(" {} after {from}", ms(n))
}

fn cite_one(f: &mut Finding, c: &Classified) {
    let who = side(c.dir);
    let what = match c.trigger {
        Trigger::Fast {
            signal_frame,
            signal_ts,
            ..
        } => format!(
            "{who} retransmits bytes {}–{} after the loss signal in frame {signal_frame} ({} \
             earlier): fast retransmit",
            c.r.seq,
            c.r.end,
            ms(c.r.ts.elapsed_since(signal_ts))
        ),
        Trigger::Unseen => format!(
            "{who} retransmits bytes {}–{}{}, sooner than any timer fires: fast retransmit \
             (its loss signal not in the capture)",
            c.r.seq,
            c.r.end,
            after(c)
        ),
        Trigger::Probe if c.r.bare_fin() => format!(
            "{who} retransmits its FIN (sequence {}), the last thing it sent{}: tail loss probe",
            c.r.seq,
            after(c)
        ),
        Trigger::Probe => format!(
            "{who} retransmits its last segment (bytes {}–{}){}: tail loss probe",
            c.r.seq,
            c.r.end,
            after(c)
        ),
        Trigger::Timeout => format!(
            "{who} retransmits bytes {}–{}{}: retransmission timeout{}",
            c.r.seq,
            c.r.end,
            after(c),
            if c.r.attempt > 1 {
                format!(", attempt {} (backoff)", c.r.attempt)
            } else {
                String::new()
            }
        ),
    };
    let what = if c.r.hidden > 0 {
        format!(
            "{what}; {} earlier transmission(s) of these bytes never reached the capture \
             point (IP IDs skipped before this packet)",
            c.r.hidden
        )
    } else {
        what
    };
    if let Some((of, ot)) = c.r.original {
        if f.evidence.iter().all(|e| e.frame != of) {
            f.cite(
                of,
                ot,
                if c.r.bare_fin() {
                    format!("original transmission of the FIN (sequence {})", c.r.seq)
                } else {
                    format!("original transmission of bytes {}–{}", c.r.seq, c.r.end)
                },
            );
        }
    } else if let Some((ef, et)) = c.r.expected {
        if f.evidence.iter().all(|e| e.frame != ef) {
            let note = if c.r.hidden > 0 {
                "the sender's last packet before the lost transmissions"
            } else {
                "first segment past the hole: the original should have arrived with it"
            };
            f.cite(ef, et, note);
        }
    }
    f.cite(c.r.frame, c.r.ts, what);
}

fn proof_note(p: &Proof, c: &Classified) -> (u64, String) {
    match *p {
        Proof::Dsack(f) => (
            f,
            format!(
                "D-SACK: the receiver got bytes {}–{} twice (retransmission in frame {})",
                c.r.seq, c.r.end, c.r.frame
            ),
        ),
        Proof::AckedBefore(f) => (
            f,
            format!(
                "had already acknowledged bytes up to {} before the retransmission in frame {} \
                 passed: the original had arrived",
                c.r.end, c.r.frame
            ),
        ),
        Proof::Eifel {
            frame,
            tsecr,
            tsval,
        } => (
            frame,
            format!(
                "first ACK covering the retransmission echoes TSval {tsecr}, older than the \
                 retransmission's {tsval}: it answers the original (Eifel, RFC 3522)"
            ),
        ),
        Proof::TooSoon {
            frame,
            after_ns,
            min_rtt_ns,
        } => (
            frame,
            format!(
                "ACK covering the retransmission {} after it, less than half the smallest RTT \
                 ({}): it answers the original",
                ms(after_ns),
                ms(min_rtt_ns)
            ),
        ),
    }
}

#[allow(clippy::too_many_arguments)]
fn explain(
    kind: Kind,
    all: &[Classified],
    mine: &[&Classified],
    n: usize,
    spurious: usize,
    rtt: u64,
    who: &str,
    lost_probe: bool,
) -> String {
    let mut s = format!("{n} {} by the {who}", kind.name(n));
    match kind {
        Kind::Fast => {
            let delays: Vec<u64> = mine
                .iter()
                .filter_map(|c| match c.trigger {
                    Trigger::Fast { signal_ts, .. } => Some(c.r.ts.elapsed_since(signal_ts)),
                    _ => None,
                })
                .collect();
            let at_recv = mine.iter().any(|c| c.at_receiver);
            s.push_str(
                ": the receiver's duplicate ACKs / SACK blocks reported a hole and the sender \
                 repaired it without waiting for a timer (RFC 6675, RACK RFC 8985)",
            );
            if let Some(&longest) = delays.iter().max() {
                s.push_str(&format!(
                    "; the repair {} {} after the loss signal{}",
                    if at_recv { "arrived" } else { "left" },
                    ms(longest),
                    if at_recv {
                        " (at the receiver a fast retransmission arrives one RTT after the dup \
                         ACKs)"
                    } else {
                        ""
                    }
                ));
            }
            let unseen = mine.len() - delays.len();
            if unseen > 0 {
                s.push_str(&format!(
                    "; {unseen} came sooner after the original than any timer fires (a probe \
                     waits 2·SRTT, an RTO 200 ms more), with their loss signal not in the \
                     capture (SACK blocks cut by the snaplen, or ACKs it missed)"
                ));
            }
            s.push('.');
        }
        Kind::Probe => {
            let latest = mine
                .iter()
                .filter(|c| c.fired_after_ns.is_some())
                .max_by_key(|c| c.fired_after_ns);
            s.push_str(&format!(
                ": the last segment of a burst went unacknowledged and no duplicate ACK could \
                 follow a tail, so the probe timer (2·SRTT, + 200 ms with one segment \
                 outstanding, Linux tcp_early_retrans=3) retransmitted it{}. (A Linux sender \
                 is assumed: with SACK its first timer retransmission of a tail is a probe; \
                 stacks without TLP would have waited for their RTO.)",
                latest.map(|c| after(c)).unwrap_or_default()
            ));
            if mine.iter().any(|c| c.r.bare_fin()) {
                s.push_str(
                    " A probe of a bare FIN costs nothing here: the application had already \
                     closed, and the wait was its kernel's.",
                );
            }
            let lost_again = lost_probe
                || mine.iter().any(|c| {
                    c.r.hidden > 1
                        || all.iter().any(|q| {
                            q.dir == c.dir && q.r.head == c.r.head && q.r.frame > c.r.frame
                        })
                });
            if lost_again {
                s.push_str(
                    " The probe did not repair the loss (it was lost too): the \
                     retransmission timeout finding holds the cost.",
                );
            }
        }
        Kind::Timeout => {
            // Backoff chains: every retransmission of the same bytes, probes included.
            let mut by_chain: Vec<&Classified> = all.iter().collect();
            by_chain.sort_by_key(|c| (c.dir, c.r.head));
            let chain = |(dir, head): (usize, usize)| {
                let from = by_chain.partition_point(|c| (c.dir, c.r.head) < (dir, head));
                let to = by_chain.partition_point(|c| (c.dir, c.r.head) <= (dir, head));
                by_chain.get(from..to).unwrap_or_default()
            };
            let worth = |h| {
                let group = chain(h);
                group.len() >= 2 || group.iter().any(|c| c.r.hidden > 1)
            };
            let (heads, more) = chains_to_list(mine.iter().map(|c| (c.dir, c.r.head)), worth);
            let mut chains = Vec::new();
            for h in heads {
                let group = chain(h);
                if group.len() >= 2 {
                    let gaps: Vec<String> = group
                        .windows(2)
                        .map(|w| ms(w[1].r.ts.elapsed_since(w[0].r.ts)))
                        .collect();
                    let frames: Vec<String> = group.iter().map(|c| c.r.frame.to_string()).collect();
                    chains.push(format!(
                        "frames {} sent {} apart",
                        frames.join(", "),
                        gaps.join(" then ")
                    ));
                }
                if let Some(c) = group.iter().find(|c| c.r.hidden > 1) {
                    chains.push(format!(
                        "{} transmissions of the bytes in frame {} (the original and {} \
                         retransmissions) were lost before the capture point (IP IDs \
                         skipped); frame {} arrived {} after the sender's previous packet",
                        c.r.hidden,
                        c.r.frame,
                        c.r.hidden - 1,
                        c.r.frame,
                        c.fired_after_ns.map(ms).unwrap_or_default()
                    ));
                }
            }
            if more > 0 {
                chains.push(format!("{more} more chain(s) not listed"));
            }
            let fired: Vec<u64> = mine
                .iter()
                .filter(|c| c.r.attempt == 1)
                .filter_map(|c| c.fired_after_ns)
                .collect();
            s.push_str(&format!(
                ": nothing acknowledged the data and no duplicate ACK came, so the \
                 retransmission timer fired (RFC 6298: at least 200 ms on Linux, 1 s before \
                 any RTT sample){}; each repeat doubles the wait and cwnd falls to one segment.",
                fired
                    .iter()
                    .min()
                    .map(|m| format!(", first {} after the original", ms(*m)))
                    .unwrap_or_default()
            ));
            if !chains.is_empty() {
                s.push_str(&format!(" Backoff chain: {}.", chains.join("; ")));
            }
        }
    }
    if rtt > 0 {
        s.push_str(&format!(
            " Cost: from each original to the ACK of its repair, minus one RTT ({}); \
             recoveries that overlap count once.",
            ms(rtt)
        ));
    }
    if spurious > 0 {
        s.push_str(&format!(
            " {spurious} of them {} spurious (see retransmit.spurious) and cost no waiting.",
            plural(spurious as u64, "was", "were")
        ));
    }
    s.push_str(" The window reduction after a loss is not included (not estimated).");
    s
}

/// The backoff chains a timeout finding lists, by `(direction, head)`: each once, in the
/// order `heads` first names it (the chains of two segments resent at every expiry
/// alternate there), only those `worth` telling, at most [`MAX_CHAINS`]; with the number
/// of the others.
fn chains_to_list(
    heads: impl Iterator<Item = (usize, usize)>,
    worth: impl Fn((usize, usize)) -> bool,
) -> (Vec<(usize, usize)>, usize) {
    let (mut seen, mut listed, mut more) = (Vec::new(), Vec::new(), 0);
    for h in heads {
        let Err(at) = seen.binary_search(&h) else {
            continue;
        };
        seen.insert(at, h);
        if !worth(h) {
            continue;
        }
        if listed.len() < MAX_CHAINS {
            listed.push(h);
        } else {
            more += 1;
        }
    }
    (listed, more)
}

fn explain_spurious(sp: &[&Classified], total: usize, s: &ConnSummary) -> String {
    let mut by: Vec<String> = Vec::new();
    for kind in [Kind::Probe, Kind::Timeout, Kind::Fast] {
        let k: Vec<&&Classified> = sp.iter().filter(|c| c.kind() == kind).collect();
        if k.is_empty() {
            continue;
        }
        let fired = k.iter().filter_map(|c| c.fired_after_ns).max();
        let took = k.iter().filter_map(|c| c.ack_took_ns).max();
        let mut t = format!("{} {}", k.len(), kind.name(k.len()));
        if kind != Kind::Fast {
            if let Some(f) = fired {
                t.push_str(&format!(" fired {} after sending", ms(f)));
            }
            if let Some(a) = took {
                t.push_str(&format!(" while the ACKs took {}", ms(a)));
            }
        }
        by.push(t);
    }
    let proofs = {
        let n = |f: fn(&Proof) -> bool| {
            sp.iter()
                .filter(|c| c.proof.as_ref().is_some_and(f))
                .count()
        };
        let mut v = Vec::new();
        let d = n(|p| matches!(p, Proof::Dsack(_)));
        let a = n(|p| matches!(p, Proof::AckedBefore(_)));
        let e = n(|p| matches!(p, Proof::Eifel { .. }));
        let t = n(|p| matches!(p, Proof::TooSoon { .. }));
        if d > 0 {
            v.push(format!("{d} by D-SACK"));
        }
        if a > 0 {
            v.push(format!("{a} already acknowledged at the capture point"));
        }
        if e > 0 {
            v.push(format!("{e} by the timestamp echo (Eifel)"));
        }
        if t > 0 {
            v.push(format!("{t} by an ACK sooner than any RTT"));
        }
        v.join(", ")
    };
    let total = total.max(sp.len());
    let mut out = format!(
        "{} of {total} {} {} spurious (the original had arrived; proven {}): {}.",
        sp.len(),
        plural(total as u64, "retransmission", "retransmissions"),
        plural(sp.len() as u64, "was", "were"),
        proofs,
        by.join("; ")
    );
    let timer = sp.iter().any(|c| c.kind() != Kind::Fast);
    if timer {
        let later = [&s.dirs[0], &s.dirs[1]]
            .iter()
            .filter_map(|d| {
                d.rtt_ack
                    .iter()
                    .chain(d.rtt_ts.iter())
                    .map(|r| r.median_ns)
                    .max()
            })
            .max();
        let hs = s.handshake_rtt_ns();
        // The seed-02 story holds when the timers fired sooner than an ACK could come
        // back at the RTT measured later.
        let fired = sp
            .iter()
            .filter(|c| c.kind() != Kind::Fast)
            .filter_map(|c| c.fired_after_ns)
            .max();
        match (hs, later) {
            (Some(h), Some(l)) if l > h.max(1).saturating_mul(2) && fired.is_none_or(|f| f < l) => {
                out.push_str(&format!(
                    " The timers were computed from the {} RTT of the handshake, but data took {} \
                 to be acknowledged: the path's RTT grew after the handshake (a proxy or load \
                 balancer near one end answering it?), so the probe and retransmission timers \
                 fired before the ACKs could arrive.",
                    ms(h),
                    ms(l)
                ))
            }
            _ => out.push_str(
                " The timers fired before the ACKs arrived: the ACKs were delayed (RTT \
                 variation, delayed ACKs, a stalled receiver) beyond the sender's estimate.",
            ),
        }
    }
    if sp.iter().any(|c| c.kind() == Kind::Fast) {
        out.push_str(
            " The fast retransmissions answered duplicate ACKs / SACKs for data that was only \
             late: packets were reordered on the path (later ones overtook the original, \
             which arrived after all).",
        );
    }
    out.push_str(
        " A spurious retransmission costs no waiting itself; the window reduction it caused \
         is not estimated.",
    );
    out
}

fn fixes(kind: Kind, all_spurious: bool) -> Vec<Fix> {
    if all_spurious {
        return vec![Fix {
            host: Host::Both,
            action: "the retransmissions were not needed: see retransmit.spurious for the cause"
                .into(),
        }];
    }
    let mut v = vec![Fix {
        host: Host::Both,
        action: "find where packets are dropped: interface and qdisc drops (`ip -s link`, `tc -s \
                 qdisc`), policers, a congested link on the path; `nstat -az TCPLossProbes \
                 TCPFastRetrans TCPTimeouts` on the sender counts the recoveries"
            .into(),
    }];
    match kind {
        Kind::Fast => v.push(Fix {
            host: Host::Both,
            action: "keep SACK on (net.ipv4.tcp_sack=1); BBR slows down less than CUBIC on random \
                     loss"
                .into(),
        }),
        Kind::Probe => {}
        Kind::Timeout => v.push(Fix {
            host: Host::Both,
            action: "on low-RTT paths a smaller minimum RTO shortens each wait: `ip route change \
                     … rto_min 50ms` on the sender; keep SACK and TLP on (tcp_early_retrans=3)"
                .into(),
        }),
    }
    v
}

fn spurious_fixes(sp: &[&Classified]) -> Vec<Fix> {
    let mut v = Vec::new();
    if sp.iter().any(|c| c.kind() != Kind::Fast) {
        v.push(Fix {
            host: Host::Both,
            action: "make the sender measure the real RTT: a proxy or load balancer that answers \
                     the handshake near one end hides the path's RTT; if the RTT varies, \
                     `sysctl -w net.ipv4.tcp_early_retrans=2` disables tail loss probes"
                .into(),
        });
    }
    if sp.iter().any(|c| c.kind() == Kind::Fast) {
        v.push(Fix {
            host: Host::Both,
            action: "find the reordering element (seed 03: veth from a container without RPS): \
                     enable RPS/RSS so one flow stays on one CPU, or raise \
                     net.ipv4.tcp_reordering on the sender"
                .into(),
        });
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_backoff_chain_is_listed_once_and_a_few_at_most() {
        // Two segments resent at every expiry: their chains alternate.
        let alternating = [(0, 7), (0, 8), (0, 7), (0, 8), (0, 7), (0, 8)];
        assert_eq!(
            chains_to_list(alternating.into_iter(), |_| true),
            (vec![(0, 7), (0, 8)], 0)
        );
        // The same head in the other direction is another chain; a head not worth
        // telling is neither listed nor counted.
        let heads = [(1, 7), (0, 9), (0, 7), (1, 7), (0, 9)];
        assert_eq!(
            chains_to_list(heads.into_iter(), |h| h != (0, 9)),
            (vec![(1, 7), (0, 7)], 0)
        );
        // Beyond MAX_CHAINS, counted in the order first named.
        let many = (0..MAX_CHAINS + 3).rev().flat_map(|h| [(0, h), (0, h)]);
        let (listed, more) = chains_to_list(many, |_| true);
        let want: Vec<(usize, usize)> = (3..MAX_CHAINS + 3).rev().map(|h| (0, h)).collect();
        assert_eq!((listed, more), (want, 3));
    }

    #[test]
    fn overlapping_recoveries_count_once() {
        use Kind::*;
        let span = |start, end, kind, timer_until| Span {
            start,
            end,
            kind,
            timer_until,
        };
        let fast = |a, b| span(a, b, Fast, a);
        assert_eq!(
            attribute_ns(vec![fast(0, 10), fast(5, 20), fast(30, 40)]),
            [30, 0, 0]
        );
        assert_eq!(attribute_ns(vec![]), [0, 0, 0]);
        // suricata-verify syn-retransmit-with-ts-vlan (µs): fast retransmits from +0.2,
        // an RTO fired at 999.6 for an original sent at 0.209; the bytes fast-
        // retransmitted right after the RTO were covered a little after the RTO's
        // repair. The wait is the RTO's, once.
        assert_eq!(
            attribute_ns(vec![fast(0, 999_700), span(209, 999_650, Timeout, 999_615)]),
            [209 + 85, 0, 999_406]
        );
        // A probe inside a longer fast recovery, its timer already fired: the
        // recovery that ends last holds the data.
        assert_eq!(
            attribute_ns(vec![fast(0, 100), span(10, 20, Probe, 10)]),
            [100, 0, 0]
        );
        // An RTO chain starting during a fast recovery and ending after it.
        assert_eq!(
            attribute_ns(vec![fast(0, 50), span(40, 300, Timeout, 280)]),
            [40, 0, 260]
        );
        // Empty or reversed intervals count nothing.
        assert_eq!(
            attribute_ns(vec![fast(5, 5), span(9, 3, Timeout, 9)]),
            [0, 0, 0]
        );
    }

    /// tail-loss (client.pcap frame 18): one lost transmission, 260 ms after the sender's
    /// last packet on a 25 ms path; rto (client.pcap frame 6): three lost, 925 ms.
    #[test]
    fn timer_chains() {
        let rtt = Some(25_000_000);
        assert!(timer_chain_fits(1, 260_000_000, rtt, true));
        assert!(timer_chain_fits(3, 925_000_000, rtt, true));
        // 4 transmissions cannot be lost in 52 ms; nor can a probe take 5 s.
        assert!(!timer_chain_fits(4, 52_000_000, rtt, true));
        assert!(!timer_chain_fits(1, 5_000_000_000, rtt, true));
        assert!(!timer_chain_fits(1, 20_000_000, rtt, true));
        // Without SACK the first is an RTO: at least 200 ms.
        assert!(!timer_chain_fits(1, 150_000_000, rtt, false));
    }

    /// A tail probe: 2·SRTT + 2 ms less a 10 ms tick, SRTT at least ¾ of the handshake's
    /// RTT; nothing at the 1.1 ms of sweep s34-045 (its probe came after 8.69 ms); 10 ms
    /// without an RTT.
    #[test]
    fn probe_floor() {
        assert_eq!(probe_min(Some(1_100_000)), 0);
        assert_eq!(probe_min(Some(25_000_000)), 29_500_000);
        assert_eq!(probe_min(None), HIDDEN_MIN_GAP_NS);
    }
}
