//! `slow_start.restart_after_idle`: a persistent connection that idled longer than one
//! retransmission timeout starts its next response from a small restart window.
//!
//! Mechanism (RFC 5681 §4.1, RFC 2861): a sender that has sent no data for more than one
//! RTO resets cwnd to the restart window RW = min(IW, cwnd) before sending again. Linux
//! does it when data is queued (`tcp_slow_start_after_idle_check`, enabled by
//! `net.ipv4.tcp_slow_start_after_idle=1`, the default): `tcp_cwnd_restart` halves cwnd
//! once per RTO of idle time, never below min(IW, cwnd). Congestion control modules with
//! their own `cong_control` hook (BBR) skip it; CUBIC and Reno do not. Linux's RTO is
//! SRTT + max(4·RTTVAR, 200 ms), so a few hundred ms of idle are enough.
//!
//! Signature, the same from both ends because it is read from response rounds: on a
//! connection whose earlier response already sent a round of W bytes, a response that
//! follows a gap with no data from the sender longer than the estimated RTO starts with a
//! round of at most W/2 (at least one halving; ≈ IW after a long idle), and the rounds
//! after it roughly double again (up to the slow-start threshold). Rounds are the ACK
//! clock's when the segments carry timestamps (`Exchange::clocked`: data echoing the ACK of the
//! round before), read the same at either end and in the middle; without timestamps, at
//! the server bursts of data leaving between the returns of ACKs, at the client bursts
//! arriving one RTT apart, with the path's jitter's splits joined. The RTO estimate is
//! the kernel's own ([`LinuxRtt`]: `tcp_rtt_estimator` from the handshake's RTT, one
//! sample per ACK): at the server each data → ACK sample; at the client or in the middle
//! each client ACK of new data, from when the newest data it covers was seen to the
//! server's first data echoing the ACK's timestamp in the middle of a response (the
//! kernel's sample, the ACK delay included; the request → response samples hold the
//! server's think time and are left out); without samples, the path RTT as a first
//! measurement (RTTVAR = RTT/2, RFC 6298 §2.2). The RTO is never taken below RFC 6298's filter fed one sample
//! per round of the earlier responses ([`rto_from_rounds`]): the kernel's RTTVAR forgets
//! an RTT change only a quarter per RTT.
//!
//! W, the sender's window before the idle, is its largest round or, with no loss before
//! the idle, what slow start had grown cwnd to (the initial window plus every segment of
//! a response that filled the window, up to twice the flight of one that did not, halved
//! per RTO of an earlier idle: [`window_before`]); a response of a round or two never
//! shows it as a round.
//!
//! Cost: per restarted response, (rounds observed − rounds it would have needed starting
//! from W and doubling, or in rounds of W once an earlier response showed slow start's
//! end: [`slow_start_end`]) × the response's own round time (first to last round start per
//! round: the RTT may have changed since the handshake), summed over the connection. A
//! restart whose response needed no more rounds than the warm window is named at no cost
//! (the kernel cut cwnd all the same; a larger response pays).
//!
//! Fix (on the sender, usually the server): `sysctl -w
//! net.ipv4.tcp_slow_start_after_idle=0`, or BBR; keep the connection busy.
//!
//! Known false positives: an application that writes a response in pieces (a small
//! first piece, then the rest once it is ready) also makes a small first round; a first
//! round with a less than full-sized segment and the doubling check reject them. A loss
//! or an RTO at the end of the previous response also shrinks cwnd. After a timeout's
//! repair (cwnd to one segment), or a loss within the restarted response, nothing is
//! reported. After fast recoveries (repairs, or the sender's IP IDs skipped where a
//! transmission was lost before the capture point), each of which at most halves cwnd
//! and leaves it at that ssthresh (`tcp_reno_ssthresh`, `tcp_end_cwnd_reduction`), the
//! window before the idle is at least the largest round halved per recovery episode, and
//! only a first round below that bound is a restart. The idle runs from the sender's last
//! data of any kind, a repair included (`lsndtime`). A sender whose congestion control
//! skips the restart (BBR) may still begin a response with fewer bytes than slow start's
//! count of its window. A restart leaves at most that window halved once per RTO of idle,
//! never below the initial window: a first round above what the fewest halvings the idle
//! can have made leave (the RTO at most what the longest RTT sample allows:
//! [`rto_ceiling`]) is a window the idle did not cut. Where the idle was too short for
//! that bound to tell, and the response ends in its second round, the bytes each ACK
//! released tell the two apart ([`Release`]: two per byte acknowledged after a restart,
//! one from a level window), from the timestamp echoes, or at the server from the order
//! of ACKs and data; a capture without echoes seen away from the server cannot tell.

use crate::detector::{
    emptied_deque, emptied_vec, ms, Connection, Detector, Reusable, Segment, Slots,
};
use crate::exchange::{joined_rounds, Exchange, Span};
use crate::finding::{Confidence, Finding, FindingId, Fix, Host};
use std::collections::VecDeque;
use tcpwhy_capture::Timestamp;
use tcpwhy_track::seq::seq_le;
use tcpwhy_track::{ConnSummary, SegmentKinds, Side, Vantage};

use crate::catalogue::Entry;

/// `slow_start.restart_after_idle` in the catalogue (crate::catalogue).
pub const RESTART_AFTER_IDLE: Entry = Entry {
    id: "slow_start.restart_after_idle",
    title: "slow start after idle",
    meaning: "a persistent connection idle for longer than one RTO restarts its next response from the initial window",
    fix_goes_to: "the sender: `tcp_slow_start_after_idle=0`",
    part_of: None,
    decided_by: Some(crate::host::BundleSide::Server),
    judge: Some(crate::host::slow_start_after_idle::judge_restart_after_idle),
};

/// Linux `TCP_RTO_MIN` (200 ms): the floor of the variance term of its RTO.
pub const TCP_RTO_MIN_NS: u64 = 200_000_000;
/// The smallest shrink counted as a restart: one halving of the earlier window
/// (`tcp_cwnd_restart` halves once per RTO of idle).
pub const MIN_SHRINK_FACTOR: u64 = 2;
/// The earlier window must be at least this many segments for a halving to stand out
/// from a window of one or two segments (noise of small, ACK-clocked exchanges).
pub const MIN_WINDOW_BEFORE_SEGMENTS: u64 = 4;
/// Slow start doubles per round; a round that grows less than this much over the one
/// before (both full, i.e. not the last) is not slow start — the small first round had
/// another cause (the application wrote a small piece first).
pub const MIN_GROWTH: f64 = 1.5;
/// The share of cwnd that `tcp_cwnd_restart` keeps as ssthresh (`tcp_current_ssthresh`:
/// max(ssthresh, ¾ cwnd)), where the restarted slow start ends.
pub const SSTHRESH_KEPT: f64 = 0.75;
/// Linux's slow start keeps growing cwnd up to this multiple of the largest flight
/// (`tcp_is_cwnd_limited`).
pub const SLOW_START_FLIGHT_FACTOR: u64 = 2;
/// When pricing, no round is assumed to carry more than this multiple of the largest
/// round the path was seen to carry: slow start's next round after it (RFC 5681 §3.1
/// doubles cwnd per round), beyond which the path's capacity, not cwnd, is unknown.
pub const ROUND_CAP_FACTOR: u64 = 2;
/// Gaps remembered per connection (one per response after an idle period).
const MAX_GAPS: usize = 4096;
/// Retransmission frames remembered per connection.
const MAX_RETRANS: usize = 4096;
/// Linux's default initial window in segments (RFC 6928), for the explanation only.
const LINUX_IW_SEGMENTS: u64 = 10;

/// RFC 6298 §2 smoothed RTT and variation, in nanoseconds: the filter
/// [`rto_from_rounds`] feeds one sample per round.
#[derive(Copy, Clone, Debug, Default, PartialEq)]
pub struct RttEstimator {
    srtt: Option<f64>,
    rttvar: f64,
}

impl RttEstimator {
    pub fn sample(&mut self, r_ns: u64) {
        let r = r_ns as f64;
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.rttvar = r / 2.0;
            }
            Some(s) => {
                self.rttvar = 0.75 * self.rttvar + 0.25 * (s - r).abs();
                self.srtt = Some(0.875 * s + 0.125 * r);
            }
        }
    }

    /// SRTT + max(4·RTTVAR, TCP_RTO_MIN).
    pub fn rto_ns(&self) -> Option<u64> {
        let s = self.srtt?;
        Some((s + (4.0 * self.rttvar).max(TCP_RTO_MIN_NS as f64)) as u64)
    }
}

/// Linux's RTO estimator, per sample as the kernel runs it (`tcp_rtt_estimator`,
/// `__tcp_set_rto`), in nanoseconds. Unlike RFC 6298's filter, which lets RTTVAR decay a
/// quarter per sample, the kernel raises `rttvar_us` at once to the largest deviation
/// (`mdev_max_us`) and lowers it toward that only once per window of data (when snd_una
/// passes `rtt_seq`), and damps the deviation's update when the RTT falls (Eifel). After
/// a step in the RTT each ACK of the next windows raises the deviation again while SRTT
/// catches up, so the RTO stays far above SRTT + 200 ms: sweep s22-014 (Reno, 153 ms at
/// the handshake, 377 ms after it) had tcp_info's RTO at 936 ms before a 970 ms idle
/// (cwnd 27 → 13), where RFC 6298 per sample estimated 597 ms.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct LinuxRtt {
    srtt: Option<i64>,
    /// Four times the mean deviation (`mdev_us`), its largest in the current window
    /// (`mdev_max_us`), and the RTO's variation term (`rttvar_us`).
    mdev: i64,
    mdev_max: i64,
    rttvar: i64,
    /// The sender's next sequence number when the current window began (`rtt_seq`).
    rtt_seq: u64,
}

impl LinuxRtt {
    /// A sample of `rtt_ns` taken by an ACK of `una`, with the sender's data sent up to
    /// `nxt` (relative sequence numbers).
    pub fn sample(&mut self, rtt_ns: u64, una: u64, nxt: u64) {
        let m = i64::try_from(rtt_ns).unwrap_or(i64::MAX / 8);
        let rto_min = TCP_RTO_MIN_NS as i64;
        let Some(srtt) = self.srtt else {
            self.srtt = Some(m);
            self.mdev = m.saturating_mul(2);
            self.rttvar = self.mdev.max(rto_min);
            self.mdev_max = self.rttvar;
            self.rtt_seq = nxt;
            return;
        };
        let err = m - srtt;
        self.srtt = Some((srtt + err / 8).max(1));
        let step = if err < 0 {
            let e = -err - self.mdev / 4;
            if e > 0 {
                e / 8
            } else {
                e
            }
        } else {
            err - self.mdev / 4
        };
        self.mdev += step;
        if self.mdev > self.mdev_max {
            self.mdev_max = self.mdev;
            self.rttvar = self.rttvar.max(self.mdev_max);
        }
        if una > self.rtt_seq {
            if self.mdev_max < self.rttvar {
                self.rttvar -= (self.rttvar - self.mdev_max) / 4;
            }
            self.rtt_seq = nxt;
            self.mdev_max = rto_min;
        }
    }

    /// SRTT + RTTVAR (`__tcp_set_rto`).
    pub fn rto_ns(&self) -> Option<u64> {
        let s = self.srtt?;
        u64::try_from(s.saturating_add(self.rttvar)).ok()
    }

    /// The RTO from one measurement: RTT + max(2 × RTT, TCP_RTO_MIN), as RFC 6298 §2.2
    /// has it too.
    pub fn rto_from_rtt(rtt_ns: u64) -> u64 {
        let mut e = LinuxRtt::default();
        e.sample(rtt_ns, 0, 0);
        e.rto_ns().unwrap_or(TCP_RTO_MIN_NS)
    }
}

/// A client ACK of new data waiting for the server's echo of its timestamp.
#[derive(Copy, Clone, Debug)]
struct PendingAck {
    /// When it was seen, and its lag after the newest server data it covers (the
    /// tracker's data → ACK sample, `SegmentEvent::ack_rtt`; 0 when Karn's rule leaves
    /// it out).
    at: Timestamp,
    lag: u64,
    ack: u64,
    tsval: Option<u32>,
}

/// The estimates when the server started sending again after a pause.
#[derive(Clone, Debug)]
struct Gap {
    /// The first data frame after the pause.
    frame: u64,
    /// RTO from samples valid at the server's vantage, and away from it (the client's or
    /// a middle one's).
    rto_server_view: Option<u64>,
    rto_client_view: Option<u64>,
    /// The server's last data of any kind before the pause (frame, time): a repair sent
    /// after the response's last new data is a send too (`tcp_event_data_sent` sets
    /// `lsndtime`, from which `tcp_cwnd_restart` counts the idle).
    last_send: Option<(u64, Timestamp)>,
    /// How the response after the pause was released ([`Release`]), told by the data's
    /// timestamp echoes (any vantage) and by the order in which ACKs and data were seen
    /// (at the server only); written when the response ends ([`Conn::end_release`]).
    release_by_echo: Option<Growth>,
    release_by_order: Option<Growth>,
}

#[derive(Default)]
struct Conn {
    /// Full-RTT samples of the server's data if the capture is at the server.
    est_server_view: LinuxRtt,
    /// The same estimator away from the server (at the client or in the middle): one
    /// sample per client ACK of new data, as the kernel takes one per ACK
    /// ([`Conn::pending`]). Fed the echoes alone it saw a fraction of the kernel's
    /// samples: s12-078's client (19 → 160 ms step) 239 ms where tcp_info had 460 ms.
    est_client_view: LinuxRtt,
    /// The client's ACKs of new data not yet valued. The kernel times a sample from the
    /// send of the newest data an ACK covers to the ACK's arrival (`tcp_clean_rtx_queue`),
    /// the receiver's ACK delay included, and closes its window of samples (`rtt_seq`)
    /// when an ACK passes the data sent when the window began. Here, at the client or in
    /// the middle, an ACK's sample runs from when the newest data it covers was seen to
    /// the server's first data echoing the ACK's timestamp, and what the server had sent
    /// when the ACK arrived is what has been seen by then. Valued by whatever echo came
    /// next, all at the latest acknowledgement, the client's view left out every delayed
    /// ACK's wait, ended a window at every echo (little is seen unacknowledged at the
    /// client) and so let the deviation the kernel holds for a window decay at once; in
    /// the middle it had no sample at all. Held-out sweeps s37-014, s39-094 and s34-086
    /// (BBR, 81–105 ms at the handshake, ≈ 345 after it) put idles of 726, 670 and 628
    /// ms against RTOs of 725, 612 and 588 ms at the client, 334–358 at the router, where
    /// the server's view (and tcp_info) had 869, 903 and 902 ms.
    pending: Vec<PendingAck>,
    /// The latest echo's round trip, for the ACKs still pending when a pause begins.
    last_echo_ns: Option<u64>,
    /// The client's latest acknowledgement and the end of the server's data sent so far
    /// (relative): the estimator's windows.
    client_ack: u64,
    server_nxt: u64,
    last_server_data: Option<Timestamp>,
    /// The server's last data segment came after the client's last one (mid-response).
    server_mid_response: bool,
    /// The acknowledgement number of the server's previous data segment.
    last_server_ack: Option<u64>,
    gaps: Vec<Gap>,
    /// The server's retransmissions, and its data after transmissions lost before the
    /// capture point.
    server_retrans: Vec<Repair>,
    /// The server's latest data segment of any kind (frame, time): a repair's timer
    /// test, and where an idle begins.
    last_server_send: Option<(u64, Timestamp)>,
    /// The open recovery episode's recovery point (the end of the server's data when it
    /// began: Linux's `high_seq`).
    recovery_point: Option<u64>,
    /// Per episode begun so far (index episode − 1): its repairs, and how many of them a
    /// D-SACK reported needless. At most one per repair, so bounded by `MAX_RETRANS`.
    undo: Vec<(u32, u32)>,
    /// The response after the latest pause, while it lasts.
    release: Release,
    /// The longest time from server data seen to the client's ACK of it (the tracker's
    /// sample): at the server the sender's own RTT samples, at the client how long it
    /// held an ACK, in the middle that and the rest of the path ([`longest_sample`]).
    longest_client_sample: u64,
}

/// One repair by the server (see [`Conn::server_retrans`]).
#[derive(Copy, Clone, Debug)]
struct Repair {
    frame: u64,
    ts: Timestamp,
    /// Its recovery episode, counted from 1. Linux cuts cwnd once per episode
    /// (`tcp_enter_recovery` sets ssthresh once; the episode lasts until an ACK passes
    /// `high_seq`, the data sent when it began). At the client or in the middle an ACK
    /// seen covering the point may still cross a repair of the same episode in flight:
    /// that repair counts as a new episode, which only lowers the window assumed.
    episode: u32,
    /// Sent after the server had sent nothing for Linux's smallest RTO (`TCP_RTO_MIN`): a
    /// timeout's repair (cwnd to one segment, `tcp_enter_loss`), not a fast one.
    timer: bool,
    /// Not a repair but the data after a transmission lost before the capture point.
    hidden: bool,
    /// A D-SACK reported it needless (RFC 2883).
    dsacked: bool,
}

impl Reusable for Conn {
    fn empty(&mut self) {
        *self = Conn {
            pending: emptied_vec(&mut self.pending),
            gaps: emptied_vec(&mut self.gaps),
            server_retrans: emptied_vec(&mut self.server_retrans),
            undo: emptied_vec(&mut self.undo),
            release: self.release.emptied(),
            ..Conn::default()
        };
    }
}

impl Conn {
    /// The response after the pause ended (the client's next request): its release
    /// goes to its gap, and the ACKs kept for it are dropped.
    fn end_release(&mut self) {
        if let Some(i) = self.release.gap.take() {
            if let Some(g) = self.gaps.get_mut(i) {
                (g.release_by_echo, g.release_by_order) = self.release.measured();
            }
            self.release.acks.clear();
        }
    }

    /// The repair's episode was undone: a D-SACK reported each of its repairs needless,
    /// and Linux restores the window it had cut (`tcp_try_undo_dsack`,
    /// `tcp_try_undo_loss`: `tcp_undo_cwnd_reduction`; RFC 3708). Sweep s72-062: an RTO
    /// fired as the path's RTT stepped from 34 to 317 ms, its repair D-SACKed; tcp_info's
    /// cwnd 27 before the idle, 13 after it.
    fn undone(&self, r: &Repair) -> bool {
        let e = r.episode.saturating_sub(1) as usize;
        self.undo.get(e).is_some_and(|&(n, d)| d >= n)
    }

    /// The pending ACKs whose timestamp the server's data at `now` echoes (`tsecr`), as
    /// samples (see [`Conn::pending`]).
    fn value_echoed(&mut self, now: Timestamp, tsecr: u32) {
        let n = self
            .pending
            .iter()
            .take_while(|p| p.tsval.is_some_and(|v| seq_le(v, tsecr)))
            .count();
        for p in self.pending.drain(..n) {
            let sample = now.elapsed_since(p.at).saturating_add(p.lag);
            self.est_client_view.sample(sample, p.ack, self.server_nxt);
        }
    }

    /// The ACKs still pending when the server pauses (no echo will come in time): each
    /// one's lag plus the latest echo's round trip.
    fn value_pending_acks(&mut self) {
        if let Some(ns) = self.last_echo_ns {
            for p in &self.pending {
                self.est_client_view
                    .sample(ns.saturating_add(p.lag), p.ack, self.server_nxt);
            }
        }
        self.pending.clear();
    }
}

/// The server's data after a pause as the client's ACKs released it. While cwnd limits
/// it, a restarted slow start (`tcp_slow_start`: cwnd grows by every segment acknowledged)
/// sends two bytes for each byte acknowledged until cwnd reaches ssthresh, which
/// `tcp_cwnd_restart` keeps at ¾ of the window before at least ([`SSTHRESH_KEPT`]), 1.5
/// times a window halved once: over a second round, at least 1.5 bytes per byte
/// acknowledged. A window the idle left alone holds level and sends one (BBR: `tcp_slow_start_after_idle_check` returns for a congestion control
/// with its own `cong_control`, and `bbr_set_cwnd` keeps cwnd at its model's target).
/// Where a response ends in its second round no full round shows the doubling, and only
/// this tells a restarted window from one that was never larger (sweep s56-030, BBR, 60
/// → 330 ms: 18 segments, then one per segment acknowledged; s51-046, CUBIC: 10, then
/// two per segment).
///
/// What the server had received when it sent a data segment is counted low, so that the
/// ratio errs only against naming the restart. The data's timestamp echo names the newest
/// ACK the server had processed (`tcp_store_ts_recent`), and so every ACK sent before
/// it, at any vantage; TSvals tick in milliseconds, and of the ACKs of the echoed tick
/// only the first is sure. At the server without echoes, of the ACKs seen since its
/// previous data segment only the first is sure: a burst of ACKs reaches the capture
/// before the stack has processed it (sweep s74-046: six ACKs in 9 µs, then the two
/// segments the first of them released). Arrival times elsewhere tell nothing of it
/// (s82-006 at the client: two segments of one TSO packet arriving 35 µs apart, the
/// second later than the next ACK's round trip would allow). Data released by one ACK (one
/// echo, or at the server one run of ACKs) is a batch; where the sender then waited for
/// a later ACK its window was full, and the bytes released through that batch against
/// the bytes acknowledged is the window's growth by then. The batch that released most
/// per byte acknowledged is kept, among those with at least
/// [`MIN_WINDOW_BEFORE_SEGMENTS`] acknowledged: a delayed ACK's two segments counted too
/// few would lift a smaller count of a level window to [`MIN_GROWTH`] ((4 + 2) / 4),
/// while slow start doubles at every batch.
#[derive(Default)]
struct Release {
    /// The pause the response followed (its index in `Conn::gaps`), while it lasts.
    gap: Option<usize>,
    /// The relative sequence number of the first data after the pause.
    start: u64,
    /// The fewest bytes acknowledged at a batch that is judged.
    min_acked: u64,
    /// The client's ACKs of that data no echo has passed yet: (TSval, bytes acknowledged).
    acks: VecDeque<(u32, u64)>,
    /// The bytes acknowledged by the newest ACK whose TSval an echo has passed.
    echoed: u64,
    /// An ACK without timestamps, or more ACKs waiting than kept: no echo tells.
    echo_unknown: bool,
    /// The client's previous TSval.
    last_tsval: Option<u32>,
    /// Data echoing at least this was sent on an ACK of the response: the first such ACK's
    /// TSval, or one tick later when the client's segment before it had the same TSval
    /// (data sent on that one echoes the tick too).
    released_from: Option<u32>,
    /// The bytes acknowledged by the latest ACK seen, and how many ACKs of the response.
    acked: u64,
    acks_seen: u32,
    /// The bytes acknowledged by the first ACK seen since the server's latest data, and
    /// the count of ACKs then (a run of ACKs, at the server one batch).
    run: Option<(u32, u64)>,
    by_echo: Batches,
    by_order: Batches,
}

/// Client ACKs of a response kept waiting for an echo to pass them: a round's worth at
/// the client (one per one or two segments), 2 KB; beyond it the echo tells nothing.
const MAX_RELEASE_ACKS: usize = 128;

/// A response's data in batches released by one ACK each ([`Release`]).
#[derive(Default)]
struct Batches {
    /// The current batch's ACK (an echo, or the count of ACKs seen when its run began)
    /// and the bytes acknowledged then.
    current: Option<(u32, u64)>,
    /// Batches begun.
    begun: u32,
    released: u64,
    /// The batches after which the sender waited for a later ACK, with at least
    /// `min_acked` acknowledged or the first, in order: (bytes released through each,
    /// bytes acknowledged), the first [`MAX_JUDGED`] of them.
    judged: Vec<(u64, u64)>,
}

/// Batches of one response kept for judging: a second round's worth of ACKs of two
/// segments each at 64 segments a round; later batches have more acknowledged, and only
/// the earlier ones can be judged at all once the response runs short ([`Batches::most`]).
const MAX_JUDGED: usize = 32;

/// How a response after a pause was released: of its judged batches, the one that
/// released most per byte acknowledged (bytes released through it, bytes acknowledged);
/// None when no batch could be judged.
#[derive(Default, Clone, Copy, Debug)]
struct Growth(Option<(u64, u64)>);

impl Batches {
    /// At the server the first batch is judged whatever it acknowledged: its ACK was the
    /// first of the response's to reach the sender, after a round trip in which it had
    /// nothing to process, so the data it released are its own (the later ACKs of a
    /// burst may reach the capture before the stack has processed the ones ahead of
    /// them: sweep s95-014, [`Batches::most`]). An echo's first batch is not: of its
    /// tick only the first ACK counts, and its few segments acknowledged are the noise
    /// `min_acked` keeps out (s76-022 at the client: BBR's level window read as growing).
    /// `first_min_acked` is the first batch's least acknowledged to be judged.
    fn data(&mut self, by: u32, acked: u64, len: u64, min_acked: u64, first_min_acked: u64) {
        let least = if self.begun == 1 {
            first_min_acked
        } else {
            min_acked
        };
        match self.current {
            Some((k, before)) if k != by && before >= least && self.judged.len() < MAX_JUDGED => {
                self.judged.push((self.released, before));
            }
            _ => {}
        }
        if self.current.is_none_or(|(k, _)| k != by) {
            self.begun = self.begun.saturating_add(1);
        }
        self.current = Some((by, acked));
        self.released = self.released.saturating_add(len);
    }

    /// The judged batch that released most per byte acknowledged, among those the
    /// response had the bytes to tell: a batch shows the window's growth only if what
    /// the response released after its first ACK, to its end, reaches `growth` × the
    /// bytes acknowledged at it; past that a low ratio is the response running out, not
    /// a level window (sweep s95-014 at the server: CUBIC halved by the idle to 19
    /// segments, the 10 left released two per ACK, and the ACKs of the first round kept
    /// arriving after the last was sent: 11,584 B released against 17,376 acknowledged).
    fn most(&self, growth: f64) -> Growth {
        let told = |&&(_, acked): &&(u64, u64)| acked as f64 * growth <= self.released as f64;
        // released / acknowledged, compared without division.
        let more = |a: &(u64, u64), b: &(u64, u64)| {
            (u128::from(a.0) * u128::from(b.1)).cmp(&(u128::from(b.0) * u128::from(a.1)))
        };
        Growth(self.judged.iter().filter(told).copied().max_by(more))
    }
}

impl Growth {
    /// Every judged batch released less than `growth` bytes per byte acknowledged: the
    /// window held level. None when no batch was judged.
    fn level(&self, growth: f64) -> Option<bool> {
        let (released, acked) = self.0?;
        Some((released as f64) < growth * acked as f64)
    }
}

impl Release {
    /// The first data after a pause, at relative sequence number `seq`: the response
    /// following pause number `gap`, from a sender of `mss`-byte segments.
    fn start(&mut self, seq: u64, gap: usize, mss: u64) {
        let last_tsval = self.last_tsval;
        *self = Release {
            gap: Some(gap),
            start: seq,
            min_acked: MIN_WINDOW_BEFORE_SEGMENTS.saturating_mul(mss),
            last_tsval,
            // The buffers go on to this response.
            ..self.emptied()
        };
    }

    /// The default, holding this one's buffers (taken) for the next response or
    /// connection.
    fn emptied(&mut self) -> Release {
        let batches = |b: &mut Batches| Batches {
            judged: emptied_vec(&mut b.judged),
            ..Batches::default()
        };
        Release {
            acks: emptied_deque(&mut self.acks),
            by_echo: batches(&mut self.by_echo),
            by_order: batches(&mut self.by_order),
            ..Release::default()
        }
    }

    /// A client segment acknowledging `ack` (relative) with TSval `tsval`.
    fn client(&mut self, ack: u64, tsval: Option<u32>) {
        let acked = ack.saturating_sub(self.start);
        if self.gap.is_some() && acked > self.acked {
            self.acked = acked;
            self.acks_seen = self.acks_seen.saturating_add(1);
            self.run.get_or_insert((self.acks_seen, acked));
            match tsval {
                _ if self.echo_unknown => {}
                Some(v) if self.acks.len() < MAX_RELEASE_ACKS => {
                    if self.released_from.is_none() {
                        let same_tick = self.last_tsval == Some(v);
                        self.released_from = Some(if same_tick { v.wrapping_add(1) } else { v });
                    }
                    self.acks.push_back((v, acked));
                }
                _ => self.echo_unknown = true,
            }
        }
        self.last_tsval = tsval;
    }

    /// New data from the server, `len` bytes echoing `tsecr`.
    fn data(&mut self, len: u64, tsecr: Option<u32>) {
        if self.gap.is_none() {
            return;
        }
        // A run of ACKs since the last data begins a batch; without one the batch goes on.
        if let Some((run, acked)) = self.run.take().or(self.by_order.current) {
            self.by_order.data(run, acked, len, self.min_acked, 0);
        }
        let Some(echo) = tsecr.filter(|_| !self.echo_unknown) else {
            self.echo_unknown = true;
            return;
        };
        if !self.released_from.is_some_and(|from| seq_le(from, echo)) {
            return; // sent before an ACK of the response reached the server
        }
        while let Some(&(v, a)) = self.acks.front() {
            if v == echo || !seq_le(v, echo) {
                break;
            }
            self.echoed = a;
            self.acks.pop_front();
        }
        let acked = match self.acks.front() {
            Some(&(v, a)) if v == echo => a,
            _ => self.echoed,
        };
        self.by_echo
            .data(echo, acked, len, self.min_acked, self.min_acked);
    }

    /// The batches as the echoes tell them, and as the order seen tells them (true at
    /// the server only).
    fn measured(&self) -> (Option<Growth>, Option<Growth>) {
        let echo = (!self.echo_unknown).then(|| self.by_echo.most(MIN_GROWTH));
        (echo, Some(self.by_order.most(MIN_GROWTH)))
    }
}

/// Most pending client ACKs turned into samples at once. They all carry the same value
/// and open no new window after the first, so beyond this the estimate no longer moves:
/// SRTT keeps 0.875^64 < 0.02 % of its distance from the sample, and the deviation
/// likewise.
const MAX_PENDING_SAMPLES: u32 = 64;

#[derive(Default)]
pub struct RestartAfterIdle {
    conns: Slots<Conn>,
}

impl RestartAfterIdle {
    /// A segment with data, or the client's with an RTT sample (not a capture duplicate).
    #[inline]
    fn segment(&mut self, seg: &Segment<'_>, client_sample: Option<(u64, u64)>) {
        let ev = seg.ev;
        let c = self.conns.get_or_default(seg);
        // The server's first sample is its SYN/ACK's (`tcp_synack_rtt_meas`): the
        // handshake's RTT, the whole path's at any vantage.
        if c.est_server_view.srtt.is_none() {
            if let Some(h) = ev.conn.handshake_rtt_ns() {
                c.est_server_view.sample(h, 0, 0);
                c.est_client_view.sample(h, 0, 0);
            }
        }
        if ev.from_client {
            let ack = ev.rel_ack.unwrap_or(0);
            if ev.payload_len > 0 {
                c.end_release();
            }
            c.release
                .client(ack, seg.pkt.options.timestamps.map(|t| t.0));
            if c.recovery_point.is_some_and(|p| ack >= p) {
                c.recovery_point = None;
            }
            if let Some(f) = ev.dsack_of {
                if let Ok(i) = c.server_retrans.binary_search_by_key(&f, |r| r.frame) {
                    let r = &mut c.server_retrans[i];
                    if !r.dsacked {
                        r.dsacked = true;
                        if let Some(u) = c.undo.get_mut(r.episode.saturating_sub(1) as usize) {
                            u.1 = u.1.saturating_add(1);
                        }
                    }
                }
            }
            if ack > c.client_ack
                && c.server_nxt > 0
                && c.pending.len() < MAX_PENDING_SAMPLES as usize
            {
                c.pending.push(PendingAck {
                    at: seg.ts,
                    lag: ev.ack_rtt.map_or(0, |(_, ns)| ns),
                    ack,
                    tsval: seg.pkt.options.timestamps.map(|t| t.0),
                });
            }
            c.client_ack = c.client_ack.max(ack);
            // The server's data → this ACK: a full RTT when the capture is at the server.
            if let Some((_, ns)) = client_sample {
                c.est_server_view.sample(ns, c.client_ack, c.server_nxt);
                c.longest_client_sample = c.longest_client_sample.max(ns);
            }
            if ev.payload_len > 0 {
                // A request: the echoes of the ACKs before it come after the server's
                // think time.
                c.value_pending_acks();
                c.server_mid_response = false;
            }
            return;
        }
        // The client's ACK → this data echoing it: a full RTT at the client, unless the
        // echoed segment was a request (then it holds the server's think time).
        if c.server_mid_response && ev.payload_len > 0 {
            if let Some((_, ns)) = ev.ts_rtt {
                c.last_echo_ns = Some(ns);
            }
            if let Some((_, tsecr)) = seg.pkt.options.timestamps {
                c.value_echoed(seg.ts, tsecr);
            }
        }
        if ev.payload_len == 0 {
            return;
        }
        c.server_nxt = c
            .server_nxt
            .max(ev.rel_seq.saturating_add(u64::from(ev.payload_len)));
        // A repair the capture cannot show as one: transmissions lost before the capture
        // point leave the sender's IP IDs skipped (`IdStep::hidden`) and the repair looks
        // like new data here (sweep s15-003 at client and router: the first response's
        // tail dropped upstream and resent, the loss's cwnd cut read as a restart). A
        // segment acknowledging more than the server's previous data may follow a lost
        // pure ACK of a request instead, which lowers no cwnd.
        let hidden_loss =
            ev.ip_id.hidden().is_some() && c.last_server_ack.is_some_and(|a| ev.rel_ack == Some(a));
        c.last_server_ack = ev.rel_ack;
        let prev_send = c.last_server_send.replace((seg.frame, seg.ts));
        let timer = prev_send.is_some_and(|(_, t)| seg.ts.elapsed_since(t) >= TCP_RTO_MIN_NS);
        // Where the original was lost before the capture point, its repair fills a hole
        // (out of order here): after such a silence it was the timer's.
        let late_fill = timer && ev.kinds.has(SegmentKinds::OUT_OF_ORDER);
        if (ev.kinds.has(SegmentKinds::RETRANSMISSION) || hidden_loss || late_fill)
            && c.server_retrans.len() < MAX_RETRANS
        {
            if c.recovery_point.is_none() || timer {
                c.recovery_point = Some(c.server_nxt);
                c.undo.push((0, 0));
            }
            if let Some(u) = c.undo.last_mut() {
                u.0 = u.0.saturating_add(1);
            }
            c.server_retrans.push(Repair {
                frame: seg.frame,
                ts: seg.ts,
                episode: u32::try_from(c.undo.len()).unwrap_or(u32::MAX),
                timer,
                hidden: hidden_loss,
                dsacked: false,
            });
        }
        let new = ev.kinds.0 & (SegmentKinds::RETRANSMISSION | SegmentKinds::OUT_OF_ORDER) == 0;
        if new {
            let paused = c
                .last_server_data
                .is_some_and(|prev| seg.ts.elapsed_since(prev) >= TCP_RTO_MIN_NS);
            if paused && c.gaps.len() < MAX_GAPS {
                // The previous response's last ACKs, valued by its last echo.
                c.value_pending_acks();
                c.gaps.push(Gap {
                    frame: seg.frame,
                    rto_server_view: c.est_server_view.rto_ns(),
                    rto_client_view: c.est_client_view.rto_ns(),
                    last_send: prev_send,
                    release_by_echo: None,
                    release_by_order: None,
                });
                // A pause inside a response (rounds more than 200 ms apart) is not where
                // one begins.
                if c.release.gap.is_none() {
                    let mss = mss_or_default(ev.conn.mss(Side::Server));
                    c.release.start(ev.rel_seq, c.gaps.len() - 1, mss);
                }
            }
            c.release.data(
                u64::from(ev.payload_len),
                seg.pkt.options.timestamps.map(|t| t.1),
            );
            c.last_server_data = Some(seg.ts);
        }
        c.server_mid_response = true;
    }
}

impl Detector for RestartAfterIdle {
    // Judges exchanges: data.
    const JUDGES_DATALESS: bool = false;

    /// Inlined into the registry's dispatch: the segments that change nothing (the
    /// server's pure ACKs, the client's duplicate ACKs) cost a test, not a call.
    #[inline]
    fn on_segment(&mut self, seg: &Segment<'_>) {
        let ev = seg.ev;
        if ev.kinds.has(SegmentKinds::CAPTURE_DUPLICATE) {
            return;
        }
        let client_sample = ev.from_client.then(|| ev.ack_rtt.or(ev.ts_rtt)).flatten();
        if ev.payload_len > 0 || client_sample.is_some() || ev.dsack_of.is_some() {
            self.segment(seg, client_sample);
        } else if ev.from_client && !ev.kinds.has(SegmentKinds::DUP_ACK) {
            // An ACK without a sample (one covering part of a TSO packet, or a repair):
            // it still released data.
            let c = self.conns.get_or_default(seg);
            let tsval = seg.pkt.options.timestamps.map(|t| t.0);
            c.release.client(ev.rel_ack.unwrap_or(0), tsval);
        }
    }

    fn on_connection(&mut self, conn: &Connection<'_>, out: &mut Vec<Finding>) {
        // Its buffers go back to the slot for the next connection (`Reusable`).
        let taken = self.conns.take_reusing(conn);
        let none = Conn::default();
        let st: &Conn = taken.as_deref().unwrap_or(&none);
        let Some(rtt) = conn.rtt_ns.filter(|&r| r > 0) else {
            return; // rounds and their cost need the path RTT
        };
        let mss = sender_mss(conn.summary);
        let mut restarts = Vec::new();
        for (i, x) in conn.exchanges.iter().enumerate() {
            if let Some(r) = restart(conn, st, &conn.exchanges[..i], x, rtt) {
                restarts.push(r);
            }
        }
        if restarts.is_empty() {
            return;
        }
        let mut f = conn.finding(FindingId::SlowStartRestartAfterIdle);
        f.cost_ns = restarts.iter().map(|r| r.cost_ns).sum();
        f.share = Some(f.cost_ns as f64 / conn.active_ns().max(1) as f64);
        for r in &restarts {
            let seg = |b: u64| b.div_ceil(mss);
            f.cite(
                r.big_round_frame,
                r.big_round_ts,
                format!(
                    "response {}: a round of {} B (≈ {} segments) sent back to back",
                    r.before_index + 1,
                    r.largest_round,
                    seg(r.largest_round)
                ),
            );
            // The first loss before the idle, cited on its own frame unless it is the
            // last data before the idle too.
            let repair = r.recovery.as_ref().map(|rec| {
                let what = if rec.hidden {
                    "the sender's IP IDs skip a transmission lost before the capture point"
                } else {
                    "a fast repair"
                };
                let note = format!(
                    "{what}: the first of {} loss recovery episode(s) before the idle, each \
                     cutting cwnd at most in half",
                    rec.episodes
                );
                (rec.frame, rec.ts, note)
            });
            let mut last_note = format!("response {}: last data before the idle", r.prev_index + 1);
            match repair {
                Some((frame, _, note)) if frame == r.last_before_frame => {
                    last_note = format!("{last_note}, {note}");
                }
                Some((frame, ts, note)) => f.cite(frame, ts, note),
                None => {}
            }
            f.cite(r.last_before_frame, r.last_before_ts, last_note);
            f.cite(
                r.first_frame,
                r.first_ts,
                format!(
                    "response {}: first data after {} idle (RTO ≈ {}): a round of only {} B \
                     (≈ {} segments)",
                    r.index + 1,
                    ms(r.idle_ns),
                    ms(r.rto_ns),
                    r.window_after,
                    seg(r.window_after)
                ),
            );
            if let Some((frame, ts, bytes)) = r.second_round {
                f.cite(
                    frame,
                    ts,
                    format!(
                        "next round one RTT later: {} B (≈ {} segments), slow start again",
                        bytes,
                        seg(bytes)
                    ),
                );
            }
        }
        let r = &restarts[0];
        let more = if restarts.len() > 1 {
            format!(
                " {} responses restarted like this; in all they cost {}.",
                restarts.len(),
                ms(f.cost_ns)
            )
        } else {
            String::new()
        };
        let halvings = (r.idle_ns / r.rto_ns.max(1)).max(1);
        let before_note = if let Some(rec) = &r.recovery {
            format!(
                "{} fast recovery episode(s) after its round of {} B had left cwnd at no less \
                 than ≈ {} B (≈ {} segments: a recovery at most halves it and ends at that \
                 ssthresh, `tcp_reno_ssthresh`, CUBIC keeps 0.7), where congestion avoidance \
                 adds a segment a round",
                rec.episodes,
                r.largest_round,
                r.window_before,
                r.window_before.div_ceil(mss)
            )
        } else if r.avoidance {
            format!(
                "slow start had ended at ≈ {} B (≈ {} segments: an earlier response's rounds \
                 stopped doubling there), where congestion avoidance adds a segment a round",
                r.window_before,
                r.window_before.div_ceil(mss)
            )
        } else if r.window_before > r.largest_round {
            format!(
                "its congestion window had reached ≈ {} B (≈ {} segments: slow start added \
                 each acknowledged segment to its first round while the window was in \
                 use, with no loss before the idle; its largest round was {} B)",
                r.window_before,
                r.window_before.div_ceil(mss),
                r.largest_round
            )
        } else {
            format!(
                "it had already sent rounds of {} B (≈ {} segments)",
                r.window_before,
                r.window_before.div_ceil(mss)
            )
        };
        let iw_note = if r.window_after.div_ceil(mss) <= LINUX_IW_SEGMENTS + 1 {
            ", back at the initial window"
        } else {
            ""
        };
        let cap_note = if r.round_cap < r.window_before {
            format!(
                " (no round is counted above {} B, twice the largest the path was seen to \
                 carry)",
                r.round_cap
            )
        } else {
            String::new()
        };
        let rounds_note = if r.rounds > r.rounds_needed {
            format!(
                "needed {} rounds of {} instead of {}{cap_note}",
                r.rounds,
                ms(r.round_ns),
                r.rounds_needed
            )
        } else {
            format!(
                "needed {} rounds of {}, no more than the warm window would have: its later \
                 rounds carried what the first held back, so the restart cost this response \
                 nothing (a larger one would pay)",
                r.rounds,
                ms(r.round_ns)
            )
        };
        f.explanation = format!(
            "The connection was idle {} before response {}, longer than the sender's \
             retransmission timeout (≈ {}: SRTT + max(4·RTTVAR, 200 ms)), so the sender \
             restarted slow start: {before_note}, but this response began with {} B (≈ {} \
             segments{iw_note}) and {rounds_note}. Linux halves cwnd once per RTO of idle \
             ({} here) down to the initial window.{more}",
            ms(r.idle_ns),
            r.index + 1,
            ms(r.rto_ns),
            r.window_after,
            r.window_after.div_ceil(mss),
            halvings,
        );
        f.fix = vec![
            Fix {
                host: Host::Server,
                action: "sysctl -w net.ipv4.tcp_slow_start_after_idle=0 (on the host that sends \
                         the responses), or use BBR there (it skips the restart)"
                    .into(),
            },
            Fix {
                host: Host::Client,
                action: "keep the connection busy (requests closer together than the RTO) or \
                         accept the cost"
                    .into(),
            },
        ];
        f.confidence = if restarts.iter().all(|r| r.growth_seen) {
            Confidence::High
        } else {
            Confidence::Medium
        };
        out.push(f);
    }

    /// Nothing is kept across connections: each one's state is dropped in `on_connection`.
    fn absorb(&mut self, _other: Self) {}
}

/// Fast recoveries before an idle: the first repair and how many episodes.
struct Recovery {
    frame: u64,
    ts: Timestamp,
    /// The first is the sender's IP IDs skipping a transmission lost upstream.
    hidden: bool,
    episodes: u32,
}

/// One response that restarted from a small window.
struct Restart {
    index: u32,
    before_index: u32,
    /// The response before the idle (its last data began it).
    prev_index: u32,
    idle_ns: u64,
    rto_ns: u64,
    /// The sender's congestion window before the idle, as estimated ([`window_before`]).
    window_before: u64,
    /// Slow start had ended before the idle (see [`Warm`]).
    avoidance: bool,
    /// The fast recoveries since the largest round, which `window_before` allows for.
    recovery: Option<Recovery>,
    /// The most a round is assumed to carry when pricing: twice the largest seen.
    round_cap: u64,
    largest_round: u64,
    window_after: u64,
    rounds: usize,
    rounds_needed: usize,
    /// The time of one of its rounds (first to last round start, per round).
    round_ns: u64,
    cost_ns: u64,
    growth_seen: bool,
    big_round_frame: u64,
    big_round_ts: Timestamp,
    last_before_frame: u64,
    last_before_ts: Timestamp,
    first_frame: u64,
    first_ts: Timestamp,
    second_round: Option<(u64, Timestamp, u64)>,
}

fn restart(
    conn: &Connection<'_>,
    st: &Conn,
    earlier: &[Exchange],
    x: &Exchange,
    rtt: u64,
) -> Option<Restart> {
    let resp = x.response.as_ref()?;
    let gap_at = st.gaps.iter().position(|g| g.frame == resp.first_frame);
    let gap = gap_at.map(|i| &st.gaps[i]);
    // The response's rounds: the ACK clock's when the timestamps tell them and they hold
    // the whole response (`Exchange::clocked`), else the bursts with the jitter's splits joined
    // (`joined_rounds`).
    let clocked = x.clock_rounds();
    let joined;
    let x_rounds = match clocked {
        Some(r) => r,
        None => {
            joined = joined_rounds(&x.rounds);
            &joined[..]
        }
    };
    if x_rounds.len() < 2 {
        return None; // it fitted in one round: the restart cost nothing
    }
    // The previous response (the last data the sender sent before the pause) and the
    // largest round any earlier response reached.
    let prev = earlier.iter().rev().find(|e| e.response.is_some())?;
    let prev_resp = prev.response.as_ref()?;
    let (big_x, big) = earlier
        .iter()
        .flat_map(|e| e.rounds.iter().map(move |r| (e, r)))
        .max_by_key(|(_, r)| (r.bytes, std::cmp::Reverse(r.first_frame)))?;
    if big.bytes < MIN_WINDOW_BEFORE_SEGMENTS * sender_mss(conn.summary) {
        return None;
    }
    // The idle runs from the last data of any kind, a repair after the response's last
    // new data included.
    let (last_before_frame, last_before_ts) = gap
        .and_then(|g| g.last_send)
        .filter(|&(_, t)| t > prev_resp.end)
        .unwrap_or((prev_resp.last_frame, prev_resp.end));
    let idle_ns = resp.start.elapsed_since(last_before_ts);
    let sampled = gap.and_then(|g| match conn.vantage {
        Vantage::Server => g.rto_server_view,
        Vantage::Client | Vantage::Middle => g.rto_client_view,
        Vantage::Unknown => None,
    });
    let rto_ns = sampled
        .unwrap_or_else(|| LinuxRtt::rto_from_rtt(rtt))
        .max(rto_from_rounds(rtt, earlier));
    if idle_ns <= rto_ns {
        return None;
    }
    // A loss since the largest round may have shrunk cwnd instead of the idle.
    let repairs = || {
        st.server_retrans
            .iter()
            .filter(|r| r.frame >= big.first_frame && r.frame <= resp.last_frame)
            .filter(|r| !st.undone(r))
    };
    if repairs().any(|r| r.frame >= resp.first_frame || r.timer) {
        return None;
    }
    let recovery = repairs()
        .next()
        .zip(repairs().next_back())
        .map(|(a, b)| Recovery {
            frame: a.frame,
            ts: a.ts,
            hidden: a.hidden,
            episodes: b.episode - a.episode + 1,
        });
    let Warm {
        cwnd: window_before,
        avoidance,
    } = match &recovery {
        // Fast recoveries: each cuts cwnd at most in half (`tcp_reno_ssthresh`; CUBIC
        // keeps 0.7, RFC 9438) and leaves it at that ssthresh (`tcp_end_cwnd_reduction`),
        // where congestion avoidance goes on. cwnd was at least the largest round when
        // the first began.
        Some(r) => Warm {
            cwnd: big.bytes >> r.episodes.min(63),
            avoidance: true,
        },
        None => window_before(
            st,
            earlier,
            resp.first_frame,
            big.bytes,
            rto_ns,
            sender_mss(conn.summary),
        ),
    };
    let first = x_rounds[0];
    // A window-limited round is made of full-sized segments; a short one means the
    // application wrote a small piece first (NNTP's status line before the article).
    // Full-sized is the sender's own segment size (the kernel's mss_cache), as its
    // largest earlier round shows it, not the SYNs' MSS: a snaplen that cut the SYN's
    // options hides the timestamps that take 12 bytes off every segment (1460 read,
    // 1448 sent: the sweep's restart misses at snaplen 64 and 96, s3-006 and others).
    // With TSO/GSO a sender-side capture sees super-packets of any multiple of the MSS
    // (tcp_mss_split_point / tcp_tso_autosize cut at mss_cache multiples), so the
    // largest round's average packet is no segment size: a round whose bytes are a whole
    // number of the sender's MSS is full-sized too (sweep s3-046 at the server: a first
    // round of two 7240-byte packets against a largest round averaging 15,978 bytes).
    let full_segment = (big.bytes / u64::from(big.segments.max(1))).max(1);
    let mss = sender_mss(conn.summary);
    let whole_mss = first.bytes > 0 && first.bytes % mss == 0;
    if first.bytes < u64::from(first.segments) * full_segment && !whole_mss {
        return None;
    }
    // Without a loss the idle must have halved the window at least once; after one the
    // window is known only from below, and a round under that bound fell further than
    // any recovery leaves it.
    let shrunk = if recovery.is_none() {
        first.bytes.saturating_mul(MIN_SHRINK_FACTOR) <= window_before
    } else {
        first.bytes < window_before
    };
    if !shrunk {
        return None;
    }
    // `tcp_cwnd_restart` leaves max(W >> halvings, min(IW, W)), one halving per RTO of
    // idle: a first round larger than what the fewest halvings the idle can have made
    // leave is a window the idle did not cut (BBR's, whose own `cong_control` skips the
    // restart: sweep s77-022, 18 segments after 1,404 ms idle at 84 ms, where an RTO of
    // at most 422 ms halved a window of 38 three times, to the initial window). The fewest
    // halvings come from the longest RTO the sender can have had ([`rto_ceiling`]); a
    // window known only from below (after a loss) is not bounded so.
    if recovery.is_none() {
        let halvings = idle_ns / rto_ceiling(longest_sample(conn, st, earlier, x, rtt)).max(1);
        let iw = earlier
            .iter()
            .find_map(|e| e.response.as_ref().and(e.rounds.first()))
            .map_or(0, |r| r.bytes);
        // The largest first round a restart can leave, and a segment of the rounds' noise.
        let most_after_restart = (window_before >> halvings.min(63))
            .max(iw.min(window_before))
            .saturating_add(mss);
        if halvings >= 1 && iw > 0 && first.bytes > most_after_restart {
            return None;
        }
    }
    // A response in two rounds has no full round to double; how its second round was
    // released tells instead ([`Release`]): a window that grew by less than half of what
    // was acknowledged did not restart slow start.
    if x_rounds.len() == 2 {
        // The response still under way at the end of the connection is still measured.
        let (by_echo, by_order) = match gap_at {
            Some(i) if st.release.gap == Some(i) => st.release.measured(),
            _ => gap.map_or((None, None), |g| (g.release_by_echo, g.release_by_order)),
        };
        let release = match conn.vantage {
            Vantage::Server => by_order.or(by_echo),
            _ => by_echo,
        };
        if release.and_then(|b| b.level(MIN_GROWTH)) == Some(true) {
            return None;
        }
    }
    // Slow start again: each full round (not the last, which may be cut by the response's
    // end) grows by about ×2 over the one before, until it reaches the slow-start
    // threshold: `tcp_cwnd_restart` keeps ssthresh at least ¾ of the window before
    // (`tcp_current_ssthresh`), and beyond it congestion avoidance adds a segment a round
    // (s13-009: 10, 20, 40, then rounds of 95–107 segments after a warm window of 109
    // with ssthresh 88). The restarted round itself must be followed by growth: a
    // sender that did not restart sends flat rounds from its first one (sweep s14-014,
    // BBR, which skips the restart: rounds of 18, 18 segments against a largest of 17).
    let threshold = big.bytes as f64 * SSTHRESH_KEPT;
    let full = &x_rounds[..x_rounds.len() - 1];
    let mut growth_seen = false;
    for (i, w) in full.windows(2).enumerate() {
        let doubled = MIN_GROWTH * w[0].bytes as f64;
        let floor = if i == 0 {
            doubled
        } else {
            doubled.min(threshold)
        };
        // After the first growth, slow start may end below that threshold: CUBIC's
        // HyStart (`hystart_update`) exits on a rising delay or a long ACK train and sets
        // ssthresh to the cwnd then, and congestion avoidance adds at most a segment or so
        // a round: such rounds hold level (sweep s38-014, the RTT 3 → 18 ms: 10, 20, 28,
        // 30 segments after a window of 120, tcp_info's ssthresh 28 after the restart).
        let level = i > 0 && w[1].bytes.saturating_add(mss) >= w[0].bytes;
        if (w[1].bytes as f64) < floor && !level {
            return None;
        }
        growth_seen = true;
    }
    // The warm window sends a round of at most cwnd, but the capture shows only what the
    // path carried: a round of X passed it, and slow start's next, 2X, showed no sign of
    // a limit. A round beyond twice the largest one seen on the connection (before the
    // idle or in this response) would be a guess about the path's capacity, not about
    // cwnd (idle-restart-cubic: cwnd 522 segments in tcp_info, rounds of 202 at most,
    // the warm response measured at 2.3 RTTs, not 1).
    let largest_seen = clocked
        .unwrap_or(&x.rounds)
        .iter()
        .map(|r| r.bytes)
        .max()
        .unwrap_or(0)
        .max(big.bytes);
    // In congestion avoidance the warm window would have grown by a segment a round, not
    // doubled.
    let round_cap = if avoidance {
        window_before
    } else {
        largest_seen.saturating_mul(ROUND_CAP_FACTOR)
    };
    let rounds_needed = rounds_from_capped(window_before, resp.bytes, round_cap);
    let rounds = x_rounds.len();
    // A restart whose response took no more rounds than the warm window would have (its
    // later rounds carried what the first held back) is named at no cost: the kernel
    // still cut cwnd, and the next larger response pays.
    let extra = rounds.saturating_sub(rounds_needed) as u64;
    let second = x_rounds[1];
    // A round lasts the RTT of the moment, which may no longer be the handshake's (a
    // path whose delay rose after the SYN/ACK: seed 2's s2-006, 1 ms → 10 ms): the
    // response's own rounds, first to last start, give it.
    let last = x_rounds[rounds - 1];
    let round_ns = last.start.elapsed_since(first.start) / (rounds as u64 - 1);
    let round_ns = if round_ns > 0 { round_ns } else { rtt };
    Some(Restart {
        index: x.index,
        before_index: big_x.index,
        prev_index: prev.index,
        idle_ns,
        rto_ns,
        window_before,
        avoidance,
        recovery,
        round_cap,
        largest_round: big.bytes,
        window_after: first.bytes,
        rounds,
        rounds_needed,
        round_ns,
        cost_ns: extra.saturating_mul(round_ns),
        growth_seen,
        big_round_frame: big.first_frame,
        big_round_ts: big.start,
        last_before_frame,
        last_before_ts,
        first_frame: first.first_frame,
        first_ts: first.start,
        second_round: Some((second.first_frame, second.start, second.bytes)),
    })
}

/// The longest RTO Linux can have had when none of its RTT samples exceeded `sample_ns`:
/// `tcp_rtt_estimator` keeps srtt among the samples and `mdev_us` (four times the mean
/// deviation) at most four times the largest error, itself below the largest sample, and
/// `tcp_set_rto` adds `rttvar_us` — max(mdev_max, `TCP_RTO_MIN`) — to srtt.
fn rto_ceiling(sample_ns: u64) -> u64 {
    sample_ns.saturating_add(sample_ns.saturating_mul(4).max(TCP_RTO_MIN_NS))
}

/// The longest RTT sample the server can have taken up to response `x`: a sample runs
/// from its data's send to the ACK's arrival (`tcp_clean_rtx_queue`). At the server the
/// tracker times the same span; elsewhere it is the path's round trip — the
/// handshake's, or the longest that rounds of a response were apart, one round trip each
/// — plus how long the client held an ACK as seen here (which in the middle holds the
/// rest of the path too: longer, still a bound). The ACKs are those of the whole
/// connection, later ones included: a longer bound only halves less.
fn longest_sample(
    conn: &Connection<'_>,
    st: &Conn,
    earlier: &[Exchange],
    x: &Exchange,
    rtt: u64,
) -> u64 {
    let path = earlier
        .iter()
        .chain(std::iter::once(x))
        .flat_map(|e| e.rounds.windows(2))
        .map(|w| w[1].start.elapsed_since(w[0].start))
        .fold(rtt, u64::max);
    match conn.vantage {
        Vantage::Server => path.max(st.longest_client_sample),
        _ => path.saturating_add(st.longest_client_sample),
    }
}

/// The RTO with one RTT sample per round: the handshake's, then each round of the earlier
/// responses (one RTT from the start of a round to the next). The kernel's RTO
/// (`__tcp_set_rto`: srtt + rttvar) lets the variation from an RTT change fall by at most
/// a quarter per RTT: `tcp_rtt_estimator` raises `rttvar_us` at once to the largest
/// deviation and lowers it toward `mdev_max_us` (≥ TCP_RTO_MIN) only once per window of
/// data (when snd_una passes `rtt_seq`), so after a step in the RTT the RTO stays high for
/// several rounds. The per-sample filter of the capture's RTT samples forgets the step
/// within a round, and without samples (a snaplen that cut the timestamps at the client)
/// the handshake's RTT knows nothing of it: sweep s6-086 (135 ms at the handshake, 367 ms
/// after it, BBR) put a 541 ms idle against an RTO of 407 ms from the handshake, where
/// tcp_info had 880 ms and cwnd unchanged. Per round, a stable RTT converges to
/// srtt + 200 ms like the kernel's.
fn rto_from_rounds(rtt: u64, earlier: &[Exchange]) -> u64 {
    let mut e = RttEstimator::default();
    e.sample(rtt);
    for x in earlier {
        for w in x.rounds.windows(2) {
            let d = w[1].start.elapsed_since(w[0].start);
            if d > 0 {
                e.sample(d);
            }
        }
    }
    e.rto_ns().unwrap_or(TCP_RTO_MIN_NS)
}

/// The sender's congestion window before the idle, in bytes: at least its largest round,
/// and, while no loss has lowered it, what slow start grew it to. Slow start adds each
/// acknowledged segment to cwnd (RFC 5681 §3.1) while the sender counts as using its
/// window (`tcp_is_cwnd_limited`): either the window was full at a send in the current
/// window of data (`tp->is_cwnd_limited`, set by `tcp_cwnd_validate` and kept until a
/// send after snd_una has passed `cwnd_usage_seq`), or cwnd is below twice the most
/// packets out (`max_packets_out`). So, response by response from the connection's first
/// round (its initial window):
/// - a response sent in two rounds or more filled the window (it waited for ACKs): its
///   sends kept the flag set and no send follows its last ACKs before the next response,
///   so every one of its segments grew cwnd (sweep s1-086: IW 10 + 21 segments = 31 in
///   tcp_info, where twice the largest round, 22, was assumed before);
/// - a response sent in one round never filled the window: cwnd grows only up to twice
///   that flight (10 stays 10 after 5 segments);
/// - a response after an idle gap longer than the RTO started from the restarted window
///   (`tcp_cwnd_restart`: halved once per RTO of idle, not below min(IW, cwnd)).
///
/// At the receiver the tracker's flight is only what it has not yet acknowledged, so
/// rounds, not flights, are counted. A response of a round or two (seed 1's rtt_step
/// cases: 18 to 35 segments after a 10-segment first round) never shows the grown window
/// as a round, yet the kernel's cwnd had grown by every segment. Segments, not bytes:
/// each response's bytes are counted in whole segments of `mss`.
fn window_before(
    st: &Conn,
    earlier: &[Exchange],
    first_frame: u64,
    largest_round: u64,
    rto_ns: u64,
    mss: u64,
) -> Warm {
    let lost = st
        .server_retrans
        .iter()
        .any(|r| r.frame < first_frame && !st.undone(r));
    let iw = earlier
        .iter()
        .find_map(|e| e.response.as_ref().and(e.rounds.first()))
        .map_or(0, |r| r.bytes);
    if lost || iw == 0 {
        return Warm {
            cwnd: largest_round,
            avoidance: false,
        };
    }
    let mut cwnd = iw;
    // Slow start's end as a response's clocked rounds showed it: its plateau.
    let mut ssthresh: Option<u64> = None;
    let mut prev_end: Option<Timestamp> = None;
    for e in earlier {
        let Some(r) = e.response.as_ref() else {
            continue;
        };
        if let Some(end) = prev_end {
            // tcp_cwnd_restart: one halving per RTO of idle, floor min(IW, cwnd).
            let halvings = (r.start.elapsed_since(end) / rto_ns.max(1)).min(63);
            cwnd = (cwnd >> halvings).max(cwnd.min(iw));
        }
        let clocked = e.clock_rounds();
        if let Some(plateau) = clocked.and_then(slow_start_end) {
            ssthresh = Some(ssthresh.map_or(plateau, |s| s.max(plateau)));
        }
        // cwnd counts packets: a response's last, partial segment grew it by a whole one
        // (sweep s72-065: 230,384 B in 160 packets, cwnd 10 → 170 in tcp_info, then
        // halved to 85 by the idle; in bytes the window was ≈ 169.1 segments, and 85
        // segments no halving of it).
        let grown = cwnd.saturating_add(r.bytes.div_ceil(mss.max(1)).saturating_mul(mss));
        cwnd = if e.rounds.len() >= 2 {
            // Slow start adds what was acknowledged up to ssthresh; beyond it congestion
            // avoidance adds about a segment a round, which the largest round shows.
            match ssthresh {
                Some(t) => grown.min(t.max(cwnd)),
                None => grown,
            }
        } else {
            cwnd.max(grown.min(r.bytes.saturating_mul(SLOW_START_FLIGHT_FACTOR)))
        };
        prev_end = Some(r.end);
    }
    let cwnd = cwnd.max(largest_round);
    Warm {
        cwnd,
        avoidance: ssthresh.is_some_and(|t| cwnd >= t),
    }
}

/// The sender's congestion window before an idle, as [`window_before`] estimates it.
struct Warm {
    cwnd: u64,
    /// Slow start had ended (a response's rounds stopped doubling) and cwnd is at or
    /// above where it ended: the warm window would have grown by a segment a round.
    avoidance: bool,
}

/// Where slow start ended in a response's clocked rounds, in bytes: the largest of its
/// full rounds (all but the last), when one of them grew less than [`MIN_GROWTH`] over
/// the one before (HyStart, or cwnd reaching ssthresh: `tcp_slow_start` stops there and
/// congestion avoidance adds a segment a round). None while every full round doubled.
fn slow_start_end(rounds: &[Span]) -> Option<u64> {
    let full = rounds.get(..rounds.len().checked_sub(1)?)?;
    let stalled = full
        .windows(2)
        .any(|w| (w[1].bytes as f64) < MIN_GROWTH * w[0].bytes as f64);
    stalled.then(|| full.iter().map(|r| r.bytes).max().unwrap_or(0))
}

/// Rounds slow start needs to send `bytes` starting from a window of `window` bytes.
pub fn rounds_from(window: u64, bytes: u64) -> usize {
    rounds_from_capped(window, bytes, u64::MAX)
}

/// Rounds slow start needs to send `bytes` starting from a window of `window` bytes when
/// no round carries more than `cap` bytes.
pub fn rounds_from_capped(window: u64, bytes: u64, cap: u64) -> usize {
    let cap = cap.max(1);
    let (mut w, mut sent, mut n) = (window.clamp(1, cap), 0u64, 0usize);
    while sent < bytes && n < crate::exchange::MAX_ROUNDS {
        sent = sent.saturating_add(w);
        w = w.saturating_mul(2).min(cap);
        n += 1;
    }
    n
}

/// The server's segment size: the connection's effective MSS ([`ConnSummary::mss`]:
/// seed 01's client offered 1424, less the 12 bytes of timestamps, 1412); 1448 (Ethernet
/// with timestamps) when the handshake was not captured or the snaplen cut its options.
fn sender_mss(s: &ConnSummary) -> u64 {
    mss_or_default(s.mss(Side::Server))
}

/// An effective MSS, or 1448 when unknown (see [`sender_mss`]).
fn mss_or_default(mss: Option<u32>) -> u64 {
    mss.map_or(tcpwhy_track::model::ETHERNET_TIMESTAMPS_MSS, u64::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(ms: f64) -> Timestamp {
        Timestamp::from_nanos((ms * 1e6) as i64)
    }

    /// Response 1 of s13-009 in clocked rounds (segments of 1448 B): slow start doubled
    /// to 80, then the rounds stopped doubling (ssthresh 88 in tcp_info): its plateau is
    /// the largest full round, 100. Rounds that kept doubling, or whose only short round
    /// is the last one, show no end.
    #[test]
    fn slow_start_ends_where_full_rounds_stop_doubling() {
        let rounds = |n: &[u32]| -> Vec<Span> {
            n.iter()
                .enumerate()
                .map(|(i, &k)| Span {
                    first_frame: i as u64,
                    last_frame: i as u64,
                    start: ts(i as f64 * 5.0),
                    end: ts(i as f64 * 5.0 + 1.0),
                    bytes: u64::from(k) * 1448,
                    segments: k,
                    max_gap_ns: 0,
                })
                .collect()
        };
        let r1 = rounds(&[10, 20, 40, 80, 80, 95, 100, 84]);
        assert_eq!(slow_start_end(&r1), Some(100 * 1448));
        assert_eq!(slow_start_end(&rounds(&[10, 20, 40, 80, 30])), None);
        assert_eq!(slow_start_end(&rounds(&[10])), None);
        assert_eq!(slow_start_end(&[]), None);
    }

    /// s22-014's server: 153 ms at the handshake, then ACKs of 377 ms. Linux's first
    /// window: SRTT 153 + 224/8 = 181, mdev 306 + 224 − 306/4 = 453.5 (its largest,
    /// which rttvar takes at once); four more 377 ms samples in the same window raise
    /// mdev to 580.3 while SRTT reaches 262.0: RTO 842.4 ms, where RFC 6298 per sample
    /// lets RTTVAR decay and stays near SRTT + 200 ms. The next window lowers rttvar a
    /// quarter of its excess only over mdev_max, still 580.3.
    #[test]
    fn linux_rto_keeps_an_rtt_steps_deviation_for_a_window() {
        const MS: u64 = 1_000_000;
        let mut e = LinuxRtt::default();
        e.sample(153 * MS, 0, 0);
        assert_eq!(e.rto_ns(), Some(153 * MS + 306 * MS));
        e.sample(377 * MS, 1, 100);
        for _ in 0..4 {
            e.sample(377 * MS, 1, 100);
        }
        let rto = e.rto_ns().unwrap() as f64 / 1e6;
        assert!((rto - 842.4).abs() < 0.5, "{rto}");
        e.sample(377 * MS, 101, 200);
        let rto = e.rto_ns().unwrap() as f64 / 1e6;
        assert!((rto - 856.7).abs() < 0.5, "{rto}");
    }

    /// 25 ms path, one sample: RTO = 25 + max(4 × 12.5, 200) = 225 ms.
    #[test]
    fn rto_is_srtt_plus_the_200_ms_floor_on_short_paths() {
        assert_eq!(LinuxRtt::rto_from_rtt(25_000_000), 225_000_000);
        // 100 ms: 100 + max(200, 200) = 300 ms; 200 ms: 200 + 400 = 600 ms.
        assert_eq!(LinuxRtt::rto_from_rtt(100_000_000), 300_000_000);
        assert_eq!(LinuxRtt::rto_from_rtt(200_000_000), 600_000_000);
    }

    /// Seed 01's response: 512 segments of 1448 B. From a warm round of 202 segments it
    /// needs 2 rounds (202 + 404 ≥ 512); from IW 10, 6 (10+20+40+80+160+320).
    /// [`Release`] at the server without echoes: each ACK of one 1448-byte segment
    /// followed by one segment (a level window) or by two (slow start), after a first
    /// round of 10 sent before any ACK.
    #[test]
    fn a_level_window_releases_one_byte_per_byte_acknowledged() {
        let level = |per_ack: u64| {
            let mut r = Release::default();
            r.start(0, 0, 1448);
            for _ in 0..10 {
                r.data(1448, None);
            }
            for i in 1..=8u64 {
                r.client(i * 1448, None);
                for _ in 0..per_ack {
                    r.data(1448, None);
                }
            }
            let (echo, order) = r.measured();
            assert!(echo.is_none());
            order.and_then(|b| b.level(MIN_GROWTH))
        };
        assert_eq!(level(1), Some(true));
        assert_eq!(level(2), Some(false));
        // With echoes, every ACK of one tick: only its first is sure, no batch is judged.
        let mut r = Release::default();
        r.start(0, 0, 1448);
        r.client(0, Some(100));
        r.start(0, 0, 1448);
        r.data(14_480, Some(100));
        for i in 1..=8u64 {
            r.client(i * 1448, Some(200));
            r.data(1448, Some(200));
        }
        let (echo, _) = r.measured();
        assert_eq!(echo.and_then(|b| b.level(MIN_GROWTH)), None);
    }

    /// Responses that end in their second round, 10 segments after a first round of
    /// 18–19, at the server, by the order of ACKs and data. s95-014 (CUBIC, halved by
    /// the idle): the first ACK released two segments, the next two, and then a burst of
    /// ACKs reached the capture ahead of the data the earlier ones released (nine ACKs,
    /// two segments; one ACK, two; seven ACKs, the last two). s77-022 (BBR, level): the
    /// first ACK released one, then chunks of three as its pacing allowed.
    #[test]
    fn the_first_ack_tells_where_a_burst_of_acks_hides_the_release() {
        const SEG: u64 = 1448;
        let send = |r: &mut Release, n: u64| {
            for _ in 0..n {
                r.data(SEG, None);
            }
        };
        let mut cubic = Release::default();
        cubic.start(0, 0, SEG);
        send(&mut cubic, 19);
        for (acks, sent) in [
            (1..=1, 2),
            (2..=2, 2),
            (3..=11, 2),
            (12..=12, 2),
            (13..=19, 2),
        ] {
            for i in acks {
                cubic.client(i * SEG, None);
            }
            send(&mut cubic, sent);
        }
        // Judged: the first batch (2 segments for 1) and the fourth (8 more for 12),
        // which the response's 10 segments could never have shown as ×1.5.
        assert_eq!(cubic.by_order.judged, [(2 * SEG, SEG), (8 * SEG, 12 * SEG)]);
        let (_, order) = cubic.measured();
        assert_eq!(order.and_then(|b| b.level(MIN_GROWTH)), Some(false));

        let mut bbr = Release::default();
        bbr.start(0, 0, SEG);
        send(&mut bbr, 18);
        for (acks, sent) in [(1..=1, 1), (2..=6, 3), (7..=7, 3), (8..=18, 3)] {
            for i in acks {
                bbr.client(i * SEG, None);
            }
            send(&mut bbr, sent);
        }
        let (_, order) = bbr.measured();
        assert_eq!(order.and_then(|b| b.level(MIN_GROWTH)), Some(true));
    }

    #[test]
    fn rounds_needed_from_a_window() {
        let b = 741_342;
        assert_eq!(rounds_from(202 * 1448, b), 2);
        assert_eq!(rounds_from(10 * 1448, b), 6);
        assert_eq!(rounds_from(600 * 1448, b), 1);
        // idle-restart-cubic: cwnd 522 segments, rounds of 202 at most seen: 404 + 108.
        assert_eq!(rounds_from_capped(522 * 1448, b, 404 * 1448), 2);
        assert_eq!(rounds_from_capped(10 * 1448, b, 404 * 1448), 6);
    }
}
