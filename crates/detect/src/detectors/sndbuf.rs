//! `sndbuf.limited`: the sender's own send buffer, not the network nor the receiver,
//! capped its data in flight (mechanisms.md "sndbuf.limited", seed 02).
//!
//! Mechanism: a sender can keep in flight only what its send buffer holds: unacknowledged
//! data stays in the buffer until ACKed (RFC 9293 §3.8.6 leaves the buffer to the
//! implementation). Linux doubles the value given to `SO_SNDBUF` and setting it turns
//! send-buffer autotuning off (`SOCK_SNDBUF_LOCK`); without it the buffer grows up to
//! `net.ipv4.tcp_wmem`'s max. Proxies often relay through fixed buffers of their own. At
//! a high RTT a small buffer caps throughput at buffer / RTT: seed 02's 32 KB proxy
//! buffer held a 150 ms path to ≈ 220 KB/s.
//!
//! Signature: the tracker's accounting (`tcpwhy_track::limits`) says the direction was
//! held by the sender's own window (data outstanding below the receiver's edge) for at
//! least [`MIN_SHARE`] of its transfer time, and by its application or by the receiver's
//! window at most [`MAX_APP_SHARE`] each; which of congestion window and send buffer the
//! wire cannot tell per instant. This detector decides per connection: the flight,
//! measured at any vantage point
//! as the most data sent within one RTT (nothing sent within the last RTT can have been
//! ACKed yet, so an ACK-clocked sender's burst and a paced sender's spread-out window
//! measure the same), stays on a plateau, within [`PLATEAU_SPREAD`], for at least
//! [`PLATEAU_ROUNDS`] RTTs in a row (each below the receiver's window of that RTT) — or
//! under a ceiling it comes back to in at least half of them, dipping as far as the
//! buffer's wake-up lets it ([`CEILING_SPREAD`]) — below
//! the receiver's window (its least possible value when the snaplen cut the window
//! scale: the tracker's `window_floor`, or the plateau's smallest window field scaled by
//! the largest flight over its field, `scale_floor`), with
//! no retransmission in that direction and no RTT growth (p95 at most [`MAX_RTT_GROWTH`] ×
//! the minimum), and the plateau's ceiling (its data per RTT) needing at least
//! [`MIN_SHARE`] of the data's span for the bytes: a reader that reopens its window slowly
//! holds a transfer far below that ceiling, whatever the shares say at the receiver. Each
//! round must stay within the receiver's window too: a round is one flight, and one larger
//! than the window was the window reopening within it.
//!
//! A congestion window does not plateau without loss: slow start doubles it each RTT,
//! congestion avoidance (after a loss or a cached ssthresh) adds a segment
//! per RTT, CUBIC more. Nor does it fall without a loss or ECN echo; a send buffer whose
//! writes overshoot it does not plateau either (sndbuf-capped: 20–99 segments per RTT
//! under a 29-segment cap), so a response whose rounds fall by more than one ACK's
//! release with nothing lost, and then do not grow like slow start for
//! [`PLATEAU_ROUNDS`] rounds, is judged the same way (`held_run`).
//!
//! Cost: the transfer time minus the time the same bytes take without the buffer: a
//! window doubling each RTT from the initial window (the model of `rwnd.limited`,
//! `windows::unlimited_ns`), but never faster than the receiver's window allows, one
//! window per RTT (s20-016: 3.0 MB under a 64 KB window at 99.8 ms need 4.6 s whatever
//! the send buffer; slow start alone would take 0.7 s); bounded by the time the sender's
//! own window held it.
//!
//! Fix: on the sender: remove or raise SO_SNDBUF (or the proxy's buffer setting), raise
//! `net.ipv4.tcp_wmem`'s max, and leave autotuning on.
//!
//! Confidence: judged by the wire alone. On the lab's 6.18 kernel tcp_info's
//! `sndbuf_limited` stayed 0 with a 32 KB SO_SNDBUF, and writes of 8 KB or more overshot
//! the buffer (examples/lab/small-sndbuf, crates/lab/README.md); so the finding is
//! "medium" at the sender and "low" elsewhere. Known false positives: a sender pacing at
//! a constant rate (a rate limiter writing exactly one window per RTT) or a congestion
//! controller holding a constant window on a clean path (BBR's cwnd gain on a path it has
//! probed) look the same; a bottleneck link shows as RTT growth or loss, or, behind a
//! controller that keeps no queue (BBR), as data spaced evenly at the link's rate, which
//! a buffer's bursts and pacing slots never are ([`Spacing`]).

use crate::detector::{emptied_vec, ms, Connection, Detector, Reusable, Seat, Segment, Slots};
use crate::detectors::early_exit::ROUND_NOISE_SEGMENTS;
use crate::detectors::windows::{rate, roles, shares_text, span_ns, thousands, unlimited_ns};
use crate::exchange::{add_to_rounds, Span, MIN_ROUND_GAP_NS};
use crate::finding::{Confidence, Finding, FindingId, Fix};
use tcpwhy_capture::{TcpFlags, Timestamp};
use tcpwhy_track::limits::ETHERNET_MSS;
use tcpwhy_track::model::ETHERNET_TIMESTAMPS_MSS;
use tcpwhy_track::{RttStats, SegmentKinds, Side, WindowScale};

use crate::catalogue::Entry;

/// `sndbuf.limited` in the catalogue (crate::catalogue).
pub const SNDBUF_LIMITED: Entry = Entry {
    id: "sndbuf.limited",
    title: "send buffer limit",
    meaning: "the flight stuck at the sender's buffer, below the window, without loss",
    fix_goes_to: "the sender's SO_SNDBUF / proxy buffer",
    part_of: None,
    decided_by: Some(crate::host::BundleSide::Server),
    judge: Some(crate::host::buffer_below_bdp::judge_send_buffer),
};

/// The sender's own window held the transfer at least half its time (the dominant limit).
pub const MIN_SHARE: f64 = 0.5;
/// An application that leaves the connection idle more than this share is `app.limited`;
/// a receiver's window full for more than this share is a limit of its own.
pub const MAX_APP_SHARE: f64 = 0.2;
/// At least this many consecutive RTTs on the plateau: slow start alone lasts about
/// log2(window / IW) rounds, a handful; a buffer cap holds for the rest of the transfer
/// (small-sndbuf: ≈ 50 RTTs).
pub const PLATEAU_ROUNDS: u32 = 8;
/// Largest / smallest data per RTT on a plateau: ACK-clock jitter and delayed ACKs move
/// one RTT's worth by a segment or two out of ≈ 28 on the lab's 150 ms path; CUBIC's
/// growth without loss is faster than 25 % over 8 RTTs only in slow start.
pub const PLATEAU_SPREAD: f64 = 1.25;
/// Largest / smallest flight under a send buffer's ceiling: the writer asleep on a full
/// buffer is woken only when the ACKs have freed a third of it (`sk_stream_write_space`
/// wakes when `sk_stream_wspace` ≥ `sk_stream_min_wspace`, the free space at least half
/// the queued memory), so the flight falls to two thirds of the buffer before it is
/// refilled, ×3/2; and a flight is measured to within one slice of an RTT
/// ([`SLICES`]), ×8/7. BBR's drain phase (pacing gain 0.75 for a round of eight) dips
/// within it too. A dip does not make a ceiling: at least half the rounds must come
/// back to it, within one ACK's release ([`at_ceiling`]): a buffer holds the same
/// segments each time it fills (s49-032 at the server, by tshark's times: 91–92
/// segments in 11 of 14 RTTs, BBR's drain and the writer's wake-ups dipping to 64 of
/// them), where a congestion window measured through a path whose RTT moves jumps between
/// levels (control s55-023, CUBIC at 21 ms: 140–291 KB from one RTT to the next), and BBR
/// probing a bottleneck rises above its level one round in eight.
pub const CEILING_SPREAD: f64 = 1.5 * SLICES as f64 / (SLICES as f64 - 1.0);

/// Whether a flight of `bytes` came back to `ceiling`, within `noise` (one ACK's
/// release, [`ROUND_NOISE_SEGMENTS`]).
fn at_ceiling(bytes: u64, ceiling: u64, noise: u64) -> bool {
    bytes.saturating_add(noise) >= ceiling
}

/// p95 RTT over the minimum beyond which the path queued (congestion, not the buffer).
pub const MAX_RTT_GROWTH: f64 = 1.5;
/// The plateau must hold at least this many full segments per RTT: one small segment
/// per RTT is an application waiting for each reply, or Nagle holding small writes
/// (tcptrace-fast-reuse.pcap: 62 B per 600 ms RTT), not a buffer.
pub const MIN_PLATEAU_SEGMENTS: u64 = 4;
/// A held flight's later half grows less than this over its earlier half (medians of
/// data per RTT): one doubling, where slow start makes one per RTT.
pub const MAX_HELD_GROWTH: f64 = 2.0;
/// The slowest a congestion window grows in congestion avoidance without loss, in
/// segments per RTT: Reno adds one (`tcp_cong_avoid_ai`), CUBIC at least its
/// TCP-friendly estimate's 3(1 − β)/(1 + β) = 0.53 with β = 0.7 (RFC 9438 §4.3,
/// `bictcp_update`'s `tcp_friendliness`). A held flight's trend stays below it: the send
/// buffer does not grow (sndbuf-capped run 4: 0.41 per round while cwnd went 148 → 220
/// above the flight; s16-064, s19-032, s20-016: 0).
pub const MIN_AVOIDANCE_GROWTH: f64 = 0.5;
/// The most RTTs between the starts of consecutive held rounds (median): one for an
/// ACK-clocked flight, two when the path's jitter merges a pair.
pub const MAX_ROUND_SPACING_RTTS: u64 = 2;
/// Full Ethernet segments, with and without the 12 bytes of timestamps, for a sender
/// whose MSS the snaplen hid.
const ETHERNET_SEGMENTS: [u32; 2] = [ETHERNET_TIMESTAMPS_MSS as u32, ETHERNET_MSS as u32];
/// RTT samples needed to judge RTT growth.
const MIN_RTT_SAMPLES: u64 = 10;
/// Plateau rounds cited.
const CITED_ROUNDS: usize = 4;

/// One run of RTT-long intervals with similar data.
#[derive(Copy, Clone, Debug, Default)]
struct Run {
    rounds: u32,
    min: u64,
    max: u64,
    bytes: u64,
    /// Of `rounds`, those whose data came after a pause of half an RTT or more (a new
    /// round, as exchange.rs splits them): a flight that waited for its ACKs.
    paused: u32,
    /// The least-squares line through every round's bytes ([`Run::trend`]).
    line: Fit,
    /// The receiver's smallest window (its field when the scale is unknown) in the run's
    /// intervals; 0 for a run of rounds (`held_run`).
    low: u64,
    /// First data frame of the first rounds.
    frames: [(u64, Timestamp, u64); CITED_ROUNDS],
    /// The least-squares line through the rounds at the highest ([`at_ceiling`]): the
    /// ceiling's own trend, which the dips below it do not move; its points are the
    /// rounds that came back to it ([`Run::returns`]).
    ceiling: Fit,
    /// Gaps between its data segments, and those shorter than the plateau's spacing
    /// ([`Spacing`]).
    spacing: Spacing,
}

/// Gaps between a direction's data segments measured against the spacing of data sent at
/// the plateau's rate (one flight per RTT, of the interval before): a gap shorter than
/// 8/9 of that spacing is a burst's (an ACK's release, a pacing slot of two or more
/// segments: tcp_tso_autosize's `tcp_min_tso_segs`), one at it or longer the rate itself.
/// The flight that sets the spacing is measured to within one slice's data ([`SLICES`]:
/// an eighth), so an even gap may read as 8/9 of it.
#[derive(Copy, Clone, Debug, Default)]
struct Spacing {
    gaps: u32,
    short: u32,
}

impl Spacing {
    fn add(&mut self, other: Spacing) {
        self.gaps = self.gaps.saturating_add(other.gaps);
        self.short = self.short.saturating_add(other.short);
    }

    /// The data arrived evenly at the plateau's rate: fewer than [`MAX_SHORT_GAPS`] of the
    /// gaps were a burst's. A paced sender's slots put at least half its gaps within a
    /// slot, an ACK-clocked one most of them within its bursts; a link busy at its own
    /// rate spaces every packet by its serialization time.
    fn even(&self) -> bool {
        self.gaps > 0 && (self.short as f64) < MAX_SHORT_GAPS * self.gaps as f64
    }
}

/// At most this share of a link-paced run's gaps are short: half of the least a paced
/// sender's two-segment slots leave (every other gap within a slot).
pub const MAX_SHORT_GAPS: f64 = 0.25;

/// A least-squares line through points added one at a time.
#[derive(Copy, Clone, Debug, Default)]
struct Fit {
    n: f64,
    sum_x: f64,
    sum_xx: f64,
    sum_y: f64,
    sum_xy: f64,
}

impl Fit {
    fn add(&mut self, x: f64, y: f64) {
        self.n += 1.0;
        self.sum_x += x;
        self.sum_xx += x * x;
        self.sum_y += y;
        self.sum_xy += x * y;
    }

    /// The slope, 0 for fewer than two distinct x.
    fn slope(&self) -> f64 {
        let den = self.n * self.sum_xx - self.sum_x * self.sum_x;
        if den <= 0.0 {
            return 0.0;
        }
        (self.n * self.sum_xy - self.sum_x * self.sum_y) / den
    }
}

impl Run {
    /// Adds an interval's flight `bytes` (first data `frame` at `ts`) to the run while
    /// its largest stays within `spread` × its smallest; else a new run starts with it.
    /// Rounds within `noise` of the run's highest are at its ceiling ([`at_ceiling`]).
    fn extend(
        &mut self,
        (spread, noise): (f64, u64),
        (frame, ts, bytes): (u64, Timestamp, u64),
        (paused, spacing): (bool, Spacing),
        low: u64,
    ) {
        let (lo, hi) = (self.min.min(bytes), self.max.max(bytes));
        if self.rounds > 0 && lo > 0 && hi as f64 <= spread * lo as f64 {
            // A new highest above the old by more than the noise leaves none of the
            // earlier rounds at it; a smaller rise keeps their count (within twice the
            // noise of it).
            if !at_ceiling(self.max, bytes, noise) {
                self.ceiling = Fit::default();
            }
            self.min = lo;
            self.max = hi;
            self.low = self.low.min(low);
        } else {
            *self = Run {
                min: bytes,
                max: bytes,
                low,
                ..Run::default()
            };
        }
        if let Some(slot) = self.frames.get_mut(self.rounds as usize) {
            *slot = (frame, ts, bytes);
        }
        let x = f64::from(self.rounds);
        self.line.add(x, bytes as f64);
        if at_ceiling(bytes, self.max, noise) {
            self.ceiling.add(x, bytes as f64);
        }
        self.rounds = self.rounds.saturating_add(1);
        self.bytes = self.bytes.saturating_add(bytes);
        self.paused = self.paused.saturating_add(u32::from(paused));
        self.spacing.add(spacing);
    }

    /// The rounds at the run's ceiling.
    fn returns(&self) -> u32 {
        self.ceiling.n as u32
    }

    /// The least-squares slope of the rounds' bytes in bytes per round (0 for fewer than
    /// two).
    fn trend(&self) -> f64 {
        self.line.slope()
    }
}

#[derive(Default)]
struct Dir {
    first_data: Option<(u64, Timestamp)>,
    last_data: Option<(u64, Timestamp)>,
    /// The current RTT-long interval of the grid.
    bucket: Option<Bucket>,
    /// The last closed interval's flight.
    last_peak: u64,
    /// The data of the last RTT, in [`SLICES`] slices: the most sent within one RTT.
    window: RttWindow,
    run: Run,
    best: Run,
    /// The run of flights under one ceiling, with the send buffer's dips below it
    /// ([`CEILING_SPREAD`]), and the longest that stayed at its ceiling.
    ceiling_run: Run,
    best_ceiling: Run,
    /// The receiver's largest window after the data began.
    max_window: u64,
    /// The receiver's latest window.
    window_now: u64,
    /// The receiver echoed ECN congestion (ECE): cwnd may have been cut without a loss.
    ecn_echo: bool,
    /// The last new data segment ended short of a full segment (a write's end on the
    /// wire), and no data from the peer has come since.
    pending_short: bool,
    /// Short segments followed by more of this sender's data with no request between:
    /// writes whose end the kernel sent with nothing behind it ([`write_boundaries`]).
    mid_short: u32,
    /// The client's own rounds, for data that is no response (an upload): segments
    /// grouped while the gaps stay under half the RTT, as exchange.rs groups a
    /// response's (and a server's that speaks first, `Connection::server_first_rounds`).
    rounds: Vec<Span>,
    /// The peer sent data before this direction's first: its data are responses.
    answers_request: bool,
}

/// One RTT-long interval of the grid.
#[derive(Copy, Clone, Debug)]
struct Bucket {
    /// Its first data frame and the interval's start.
    frame: u64,
    start: Timestamp,
    /// The most data sent within one RTT ending in this interval ([`RttWindow`]).
    peak: u64,
    /// Data in it came after a pause of half an RTT or more.
    paused: bool,
    /// The receiver's largest and smallest window while it lasted.
    window: u64,
    low: u64,
    /// Its data's gaps against the previous interval's flight ([`Spacing`]).
    spacing: Spacing,
}

/// Slices of an RTT in [`RttWindow`]: the sum of the last `SLICES` covers between
/// (SLICES − 1) / SLICES of an RTT and one RTT, so a flight is measured to within one
/// slice's data (an eighth of a paced flight, less than one ACK's release of a burst).
const SLICES: usize = 8;

/// The data sent in the last RTT, in slices of an RTT: a sliding window at any vantage
/// point, bounded whatever the rate.
#[derive(Copy, Clone, Debug, Default)]
struct RttWindow {
    slices: [u64; SLICES],
    /// The slice being filled and its start.
    at: usize,
    start: Option<Timestamp>,
    sum: u64,
}

impl RttWindow {
    /// Adds `len` bytes sent at `ts` and returns the data of the RTT ending there.
    #[inline]
    fn add(&mut self, ts: Timestamp, len: u64, rtt: u64) -> u64 {
        let slice = (rtt / SLICES as u64).max(1);
        let start = *self.start.get_or_insert(ts);
        let elapsed = ts.elapsed_since(start);
        // Most segments fall in the slice being filled: the division only past its end.
        if elapsed >= slice {
            let ahead = elapsed / slice;
            // Slices that ended empty, at most a whole window of them.
            for _ in 0..ahead.min(SLICES as u64) {
                self.at = (self.at + 1) % SLICES;
                self.sum = self.sum.saturating_sub(self.slices[self.at]);
                self.slices[self.at] = 0;
            }
            let moved = ahead.saturating_mul(slice);
            self.start = Some(Timestamp(
                start
                    .0
                    .saturating_add(i64::try_from(moved).unwrap_or(i64::MAX)),
            ));
        }
        self.slices[self.at] = self.slices[self.at].saturating_add(len);
        self.sum = self.sum.saturating_add(len);
        self.sum
    }
}

impl Dir {
    /// Ends the grid's interval, of a sender whose full segment is `segment`. When the
    /// window's scale is known (`scale_known`), an interval whose flight came within one
    /// ACK's release ([`ROUND_NOISE_SEGMENTS`]) of the receiver's window was the window's,
    /// and ends the run.
    fn close_bucket(&mut self, segment: u64, scale_known: bool) {
        let Some(Bucket {
            frame,
            start: ts,
            peak: bytes,
            paused,
            window,
            low,
            spacing,
        }) = self.bucket.take()
        else {
            return;
        };
        self.last_peak = bytes;
        let noise = ROUND_NOISE_SEGMENTS.saturating_mul(segment);
        if scale_known && bytes.saturating_add(noise) > window {
            self.break_run();
            return;
        }
        let growing_at = MIN_AVOIDANCE_GROWTH * segment as f64;
        let r = &mut self.run;
        r.extend(
            (PLATEAU_SPREAD, noise),
            (frame, ts, bytes),
            (paused, spacing),
            low,
        );
        // A plateau does not grow like a congestion window in congestion avoidance
        // ([`MIN_AVOIDANCE_GROWTH`]): CUBIC after HyStart's exit grows a few segments
        // per round, less than ×1.25 over eight rounds of 140 segments (control
        // s58-095: 194 → 238 KB at 21 ms, no send buffer set).
        if r.rounds > self.best.rounds && r.trend() < growing_at {
            self.best = *r;
        }
        let w = &mut self.ceiling_run;
        w.extend(
            (CEILING_SPREAD, noise),
            (frame, ts, bytes),
            (paused, spacing),
            low,
        );
        if w.returns().saturating_mul(2) < w.rounds {
            // Most of its rounds no longer come back to its highest (one high reading
            // above a lower ceiling): no ceiling; the next run starts here.
            *w = Run::default();
            w.extend(
                (CEILING_SPREAD, noise),
                (frame, ts, bytes),
                (paused, spacing),
                low,
            );
        }
        if w.rounds > self.best_ceiling.rounds && w.ceiling.slope() < growing_at {
            self.best_ceiling = *w;
        }
    }

    fn break_run(&mut self) {
        self.run = Run::default();
        self.ceiling_run = Run::default();
    }
}

#[derive(Default)]
struct Conn {
    /// The handshake RTT, once known (the connection model's).
    rtt_ns: Option<u64>,
    dirs: [Dir; 2],
}

impl Reusable for Conn {
    fn empty(&mut self) {
        // Every field named: one added is a compile error here until it is reset.
        let Conn { rtt_ns, dirs } = self;
        *rtt_ns = None;
        for d in dirs {
            *d = Dir {
                rounds: emptied_vec(&mut d.rounds),
                ..Dir::default()
            };
        }
    }
}

#[derive(Default)]
pub struct SndbufLimited {
    conns: Slots<Conn>,
}

impl Detector for SndbufLimited {
    // Judges the time the tracker's limits accounted to a direction's data (`judge`).
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
        if flags.syn() {
            return;
        }
        if c.rtt_ns.is_none() {
            c.rtt_ns = ev.conn.handshake_rtt_ns().filter(|&r| r > 0);
        }
        let (me, peer) = (ev.sender(), ev.receiver());
        if ev.payload_len > 0 {
            // A request (or any data) from this sender: the other direction's short
            // segment ended a response, not a write in the middle of one.
            let other = &mut c.dirs[peer];
            other.pending_short = false;
            other.answers_request |= other.first_data.is_none();
        }
        if flags.ack() && flags.0 & TcpFlags::RST == 0 {
            let d = &mut c.dirs[peer];
            d.window_now = ev.window_bytes;
            if d.first_data.is_some() {
                d.max_window = d.max_window.max(ev.window_bytes);
                d.ecn_echo |= flags.has(TcpFlags::ECE);
                if let Some(b) = d.bucket.as_mut() {
                    b.window = b.window.max(ev.window_bytes);
                    b.low = b.low.min(ev.window_bytes);
                }
            }
        }
        if ev.payload_len == 0 || !ev.kinds.has(SegmentKinds::NEW_DATA) {
            return;
        }
        let Some(rtt) = c.rtt_ns else {
            return;
        };
        let d = &mut c.dirs[me];
        d.first_data.get_or_insert((seg.frame, seg.ts));
        // A pause of half an RTT starts a new round (exchange.rs).
        let round_gap = (rtt / 2).max(MIN_ROUND_GAP_NS);
        let since_last = d.last_data.map(|(_, t)| seg.ts.elapsed_since(t));
        let paused = since_last.is_some_and(|g| g >= round_gap);
        d.last_data = Some((seg.frame, seg.ts));
        let len = u64::from(ev.payload_len);
        if std::mem::take(&mut d.pending_short) {
            d.mid_short = d.mid_short.saturating_add(1);
        }
        // Own rounds only for a client's data that answers no request, an upload (the
        // exchanges hold a response's rounds, and those of a server that speaks first).
        if !d.answers_request && ev.from_client {
            add_to_rounds(
                &mut d.rounds,
                since_last,
                round_gap,
                None,
                (seg.frame, seg.ts, ev.payload_len),
            );
        }
        d.pending_short = match ev.conn.mss(me) {
            Some(m) => partial_segment(ev.payload_len, m),
            // The snaplen cut the SYNs' MSS options: short unless a whole number of
            // Ethernet segments, with timestamps or without (s3-048 at snaplen 64: each
            // 20,480 B write ends in a 208 B segment between GSO pairs of 2,896 B). Any
            // other MSS makes every segment "short", which only withholds the finding.
            None => ETHERNET_SEGMENTS
                .iter()
                .all(|&m| partial_segment(ev.payload_len, m)),
        };
        // RTT-long intervals on a fixed grid from the first data, each measured by the
        // most data sent within one RTT ending in it: a flight, whether ACK-clocked (one
        // window per RTT) or paced (BBR spreads a window over the RTT, so a grid
        // interval can hold most of two windows' data or little of one).
        let sent = d.window.add(seg.ts, len, rtt);
        // This gap against the spacing of data sent at the last interval's flight per RTT.
        // gap < 8/9 × len × rtt / peak ([`Spacing`]), without the division.
        let spacing = match since_last {
            Some(gap) if d.last_peak > 0 => {
                let slices = SLICES as u128;
                let seen = u128::from(gap) * u128::from(d.last_peak) * (slices + 1);
                Spacing {
                    gaps: 1,
                    short: u32::from(seen < slices * u128::from(len) * u128::from(rtt)),
                }
            }
            _ => Spacing::default(),
        };
        let start =
            match d.bucket.as_mut() {
                Some(b) if seg.ts.elapsed_since(b.start) < rtt => {
                    b.peak = b.peak.max(sent);
                    b.paused |= paused;
                    b.spacing.add(spacing);
                    return;
                }
                Some(b) => {
                    let start = b.start;
                    let elapsed = seg.ts.elapsed_since(start);
                    // The window's field is its size only with the scale both SYNs agreed.
                    let scale_known = ev.conn.dirs.iter().all(|m| m.syn.options().is_some());
                    let segment = ev.conn.mss(me).map_or(ETHERNET_TIMESTAMPS_MSS, u64::from);
                    d.close_bucket(segment, scale_known);
                    // A silence of a whole RTT or more: the sender paused; the run ends.
                    let skipped = elapsed / rtt;
                    if skipped >= 2 {
                        d.break_run();
                    }
                    Timestamp(start.0.saturating_add(
                        i64::try_from(skipped.saturating_mul(rtt)).unwrap_or(i64::MAX),
                    ))
                }
                // The first data: nothing before it, no pause.
                None => seg.ts,
            };
        d.bucket = Some(Bucket {
            frame: seg.frame,
            start,
            peak: sent,
            paused,
            window: d.window_now,
            low: d.window_now,
            spacing,
        });
    }

    fn on_connection(&mut self, conn: &Connection<'_>, out: &mut Vec<Finding>) {
        let Some(mut c) = self.conns.take_reusing(conn) else {
            return;
        };
        let Some(rtt) = c.rtt_ns else {
            return;
        };
        for (i, d) in c.dirs.iter_mut().enumerate() {
            // The last interval is cut short by the end of the data: not a round.
            d.bucket = None;
            if let Some(f) = judge(conn, d, i == 1, rtt) {
                out.push(f);
            }
        }
    }

    /// Nothing is kept across connections.
    fn absorb(&mut self, _other: Self) {}
}

/// The rounds of a response (exchange.rs: split where the data pauses for half an RTT,
/// so each is one RTT's flight at either end) from the flight's first fall on, when a
/// fall shows the flight was not cwnd-limited and it then did not grow. Rounds, not this
/// detector's fixed RTT grid: a burst-per-RTT flight whose RTT drifts from the
/// handshake's puts zero or two bursts in one grid interval (cached-ssthresh's
/// cwnd-limited server: 17–67 KB per interval, while its rounds fall by at most one
/// segment). Send buffers whose writes overshoot them do not
/// plateau: with MSS-sized writes appended to an unsent tail skb and the writer woken only
/// when a third of the buffer is free (`sk_stream_write_space`), sndbuf-capped's 64 KB
/// cap (29 segments) let 20 to 99 segments through per RTT (ss: unacked, `w` up to 185 KB
/// against `tb` 65 KB) while cwnd (148–220, no ssthresh) never limited. But cwnd falls
/// only on a loss, ECN echo or undo (`tcp_enter_recovery`, `tcp_enter_loss`,
/// `tcp_cwnd_reduction`; `tcp_cwnd_application_limited` only when not cwnd-limited), and
/// each ACKed segment frees its slot, so a cwnd-limited flight's data per RTT does not
/// fall: an interval more than [`ROUND_NOISE_SEGMENTS`] below an earlier one, with no loss
/// or ECN echo in the direction (checked by the caller), was held by the sender's buffer
/// or application (the tracker's shares tell those apart). From there, over at least
/// [`PLATEAU_ROUNDS`] RTTs, the flight must not grow like slow start: the later half's
/// median data per RTT below [`MAX_HELD_GROWTH`] × the earlier half's, where a doubling
/// window would have grown ×16 between them (a fall the grid made up in a slow-start
/// transfer is caught here). The overshoot's amplitude is not steady (run 4: medians 34
/// and 44 segments), so the plateau's ×1.25 would not hold.
fn held_run(rounds: &[Span], segment: u64, rtt: u64) -> Option<Run> {
    let noise = ROUND_NOISE_SEGMENTS.saturating_mul(segment);
    let mut peak = 0u64;
    let fall = rounds.iter().position(|r| {
        let fell = r.bytes.saturating_add(noise) < peak;
        peak = peak.max(r.bytes);
        fell
    })?;
    let held = &rounds[fall..];
    if held.len() < PLATEAU_ROUNDS as usize {
        return None;
    }
    // A flight held at a ceiling leaves one round per RTT, ACK-clocked: rounds further
    // apart waited for something else (the application, a slow link, the reader), and
    // their data per RTT is no ceiling (an FTP transfer in tcptrace-ipv6-ftp-nasa.pcap:
    // rounds of 1–16 KB, 6.3 MB in 7.4 s at 1.6 ms: 855 kB/s where 7.6 KB per RTT would
    // carry 4.7 MB/s).
    let mut spacing: Vec<u64> = held
        .windows(2)
        .map(|w| w[1].start.elapsed_since(w[0].start))
        .collect();
    let mid = spacing.len() / 2;
    let (_, median_spacing, _) = spacing.select_nth_unstable(mid);
    if *median_spacing > MAX_ROUND_SPACING_RTTS.saturating_mul(rtt) {
        return None;
    }
    let median = |part: &[Span]| {
        let mut v: Vec<u64> = part.iter().map(|r| r.bytes).collect();
        v.sort_unstable();
        v.get(v.len() / 2).copied().unwrap_or(0)
    };
    let (early, late) = held.split_at(held.len() / 2);
    if median(late) as f64 >= MAX_HELD_GROWTH * median(early) as f64 {
        return None;
    }
    // Nor like a congestion window in congestion avoidance (a clean CUBIC transfer at
    // 1–8 ms, s13-071, s17-071, s18-087: rounds split by the host's scheduling fall by
    // more than the noise, then grow 5–7 segments per round).
    if trend_segments(held, segment) >= MIN_AVOIDANCE_GROWTH {
        return None;
    }
    let mut run = Run {
        rounds: u32::try_from(held.len()).unwrap_or(u32::MAX),
        min: held.iter().map(|r| r.bytes).min()?,
        max: held.iter().map(|r| r.bytes).max()?,
        bytes: held.iter().fold(0u64, |a, r| a.saturating_add(r.bytes)),
        ..Run::default()
    };
    for (slot, r) in run.frames.iter_mut().zip(held) {
        *slot = (r.first_frame, r.start, r.bytes);
    }
    Some(run)
}

/// The trend of the rounds' data in segments per round: the median of the slopes between
/// every two rounds (Theil–Sen), which a few merged or split rounds do not move (a
/// pause-cut round can hold two bursts or half of one).
fn trend_segments(rounds: &[Span], segment: u64) -> f64 {
    let seg = segment.max(1) as f64;
    let mut slopes: Vec<f64> = Vec::with_capacity(rounds.len() * rounds.len() / 2);
    for (i, a) in rounds.iter().enumerate() {
        for (j, b) in rounds.iter().enumerate().skip(i + 1) {
            slopes.push((b.bytes as f64 - a.bytes as f64) / seg / (j - i) as f64);
        }
    }
    if slopes.is_empty() {
        return 0.0;
    }
    let mid = slopes.len() / 2;
    let (_, m, _) = slopes.select_nth_unstable_by(mid, f64::total_cmp);
    *m
}

/// Whether the application's writes, not the send buffer, reached the wire: `mid_short`
/// segments shorter than the sender's full segment (nor a multiple of it, for TSO/GRO
/// aggregates) were followed by more of its data with no request from the peer between,
/// in more than half of the `rounds` RTTs the direction's data spans (where the short
/// segments were counted: s20-016's 7 in 88 RTTs, a write split where the buffer
/// filled, are not the 10 RTTs of its plateau).
///
/// Linux's `tcp_sendmsg_locked` checks for buffer space only when it starts a new skb
/// (`new_segment:` → `sk_stream_memory_free`, else `wait_for_space`), after the previous
/// one was filled to `size_goal` (a multiple of the MSS): a writer held by its send buffer
/// puts full segments on the wire, and only the end of its data is short. The send-buffer
/// chrono (`tcp_cwnd_validate` → `TCP_CHRONO_SNDBUF_LIMITED`) likewise runs only while the
/// writer waits on `SOCK_NOSPACE` with more to write. A short segment in the middle of a
/// response is a write's end sent with nothing queued behind it: the write queue ran dry
/// and the sender waited for its application. When that happens in more than half the
/// RTTs, the buffer cannot have held the flight for the share [`MIN_SHARE`]
/// asks (s8-072-bulk: 23 writes of 7,168 B every 71 ms at a 136 ms RTT, each ending in a
/// 1,376 B segment; a flight of two writes that looked like a 14 KB cap, with
/// `sndbuf_limited` 0 and cwnd growing from 10 to 22 above it).
fn write_boundaries(mid_short: u32, rounds: u64) -> bool {
    u64::from(mid_short).saturating_mul(2) > rounds
}

/// The least time `bytes` take when at most `window` bytes travel per `rtt_ns`, less the
/// last round's (its ACK is not part of the transfer's data span): 0 without a window.
fn window_bound_ns(bytes: u64, window: u64, rtt_ns: u64) -> u64 {
    if window == 0 {
        return 0;
    }
    let rounds = bytes.div_ceil(window).saturating_sub(1);
    rounds.saturating_mul(rtt_ns)
}

/// p95 over min of RTT samples, when there are enough.
fn rtt_growth(r: Option<RttStats>) -> Option<f64> {
    let best = r?;
    (best.samples >= MIN_RTT_SAMPLES && best.min_ns > 0)
        .then(|| best.p95_ns as f64 / best.min_ns as f64)
}

fn judge(conn: &Connection<'_>, d: &Dir, sender_is_server: bool, rtt: u64) -> Option<Finding> {
    let s = conn.summary;
    let i = Side::from_index(usize::from(sender_is_server));
    let dir = &s.dirs[i];
    let l = &dir.limits;
    let total = l.total_ns();
    if total == 0 {
        return None;
    }
    let share = |v: u64| v as f64 / total as f64;
    if share(l.sender_ns) < MIN_SHARE || share(l.app_ns) > MAX_APP_SHARE {
        return None;
    }
    // A flight held by its send buffer stays below the receiver's window (checked
    // below), so the window's edge holds it no longer than the application may: a
    // window full for more was a limit of its own (held-out sweep s40-013 at the
    // client: a reader releasing 21.5 KB every 62 ms behind BBR, which paced at the
    // rate the reader had set, 12–14 KB per 33 ms RTT under a 49 KB window; the window
    // held it 38 % of the time; tcp_info's sndbuf_limited 0, rwnd_limited 1,092 ms).
    if share(l.rwnd_ns) > MAX_APP_SHARE {
        return None;
    }
    // Any sign of loss: a congestion window that was cut and grows back slowly looks
    // like a plateau (fast-retransmit/server.pcap: 8 RTTs within 7 % after one drop that
    // this capture shows only as duplicate ACKs and an out-of-order repair).
    let peer = &s.dirs[i.peer()].counts;
    let loss = dir.counts.retransmissions + dir.counts.out_of_order + peer.dup_acks + peer.dsacks;
    if loss > 0 {
        return None;
    }
    // The segment size: the receiver's MSS (as announced in its SYN) less the 12 bytes
    // of timestamps Linux sends, at most Ethernet's.
    let segment = s.dirs[i.peer()]
        .syn
        .and_then(|o| o.mss)
        .map_or(ETHERNET_TIMESTAMPS_MSS, |m| {
            u64::from(m).min(ETHERNET_TIMESTAMPS_MSS)
        });
    // The narrow plateau, else a ceiling the send buffer's wake-ups dip below.
    let grid = [(d.best, false), (d.best_ceiling, true)]
        .into_iter()
        .find(|(r, _)| r.rounds >= PLATEAU_ROUNDS);
    let held = grid.is_none();
    let dips = grid.is_some_and(|(_, ceiling)| ceiling);
    let run = if let Some((run, _)) = grid {
        run
    } else if d.ecn_echo {
        return None; // an ECN echo cuts cwnd without a loss: a fall proves nothing
    } else {
        // The longest response's rounds (exchange.rs), or for data that answered no
        // request (a bulk sender that speaks first, an upload) the direction's own; the
        // last cut by the end of the data.
        let responses = conn
            .exchanges
            .iter()
            .filter(|x| sender_is_server && x.response.is_some())
            .map(|x| x.rounds.as_slice())
            .max_by_key(|r| r.len());
        let own = if sender_is_server {
            conn.server_first_rounds
        } else {
            &d.rounds
        };
        let rounds = responses.unwrap_or(own);
        held_run(rounds.get(..rounds.len().checked_sub(1)?)?, segment, rtt)?
    };
    let span = span_ns(d.first_data, d.last_data);
    if write_boundaries(d.mid_short, span / rtt) {
        return None;
    }
    let per_rtt = run.bytes / u64::from(run.rounds.max(1));
    if per_rtt < MIN_PLATEAU_SEGMENTS.saturating_mul(segment) {
        return None;
    }
    // The data came evenly at the plateau's rate, every packet spaced like the next:
    // a link busy at its own rate set it, not the buffer. A congestion controller that
    // keeps no queue holds such a level flight without loss or RTT growth (sweep s90-008
    // at the client: BBR through 15 Mbit/s at 98 ms, 176,808 B per RTT = 1.79 MB/s, the
    // link's payload rate, one packet every 0.81 ms; tcp_info's sndbuf_limited 0). A
    // buffer's flight leaves in bursts or pacing slots whatever link carries it, with
    // gaps below that spacing inside them.
    if run.spacing.even() {
        return None;
    }
    // The receiver's window did not hold it: the data per RTT stays below the window by
    // more than one ACK's release ([`ROUND_NOISE_SEGMENTS`]). A window-limited flight
    // carries a window per RTT whether ACK-clocked or paced, and a paced one is at the
    // window's edge only at the end of each RTT, so the tracker's shares can call it
    // the sender's (s19-088's client: BBR under a 56 KB window, 54 KB per RTT, shares
    // 72 % sender). With the snaplen cutting the window scale, the least the window can
    // have been: the tracker's `window_floor`, from the largest flight and the window
    // fields (s19-032 at snaplen 64: a 259 KB flight, then rounds of 70 KB under the
    // same field).
    // The scale is fixed for the connection (RFC 7323 §2.3), so the largest flight over
    // the field it was sent under bounds it at every field: the run's smallest field
    // times that ratio is the least its window was (s67-056 at the server, snaplen 64: a
    // 66,608 B flight under a field of 169, fields up to 185 on the plateau, BBR held to
    // 44.5 segments per RTT by a 51,200 B send buffer). Without it the floor is the
    // largest flight, which a plateau that is that flight always reaches.
    let scale_known = !matches!(s.dirs[i.peer()].wscale, Some(WindowScale::Unknown) | None);
    let floor = dir.window_floor.unwrap_or(0);
    let by_scale = dir.scale_floor.map_or(0, |(flight, field)| {
        let w = u128::from(run.low) * u128::from(flight) / u128::from(field.max(1));
        u64::try_from(w).unwrap_or(u64::MAX)
    });
    let window = if scale_known {
        d.max_window
    } else {
        floor.max(by_scale)
    };
    let noise = ROUND_NOISE_SEGMENTS.saturating_mul(segment);
    if per_rtt.saturating_add(noise) > window {
        return None;
    }
    // Nor did any round carry more than the window: a flight is at most a window, so a
    // round beyond it is the window reopening within it, a receiver releasing data as it
    // reads (held-out sweep s44-085 at the client: a slow reader behind BBR without
    // window scaling, rounds of 2,896–95,568 B a read period apart under a 63,712 B
    // window; tcp_info's sndbuf_limited 0, rwnd_limited 1,468 ms). A round of one full
    // window (s20-016: 65,535 B once in 49 rounds) is the window's edge touched, and
    // allowed.
    if run.max > window.saturating_add(noise) {
        return None;
    }
    // RTT growth, from the samples that span the whole path at this vantage point:
    // data→ACK of this direction at its sender, the sender's echoes of the receiver's
    // timestamps at the receiver (its own data→ACK there is only its ACK delay).
    let seat = conn.seat(i);
    let at_sender = seat == Seat::Sender;
    let growth = match seat {
        Seat::Sender => rtt_growth(dir.rtt_ack),
        Seat::Receiver => rtt_growth(s.dirs[i.peer()].rtt_ts),
        Seat::Elsewhere => None,
    };
    if growth.is_some_and(|g| g > MAX_RTT_GROWTH) {
        return None;
    }
    // Where no sample spans the path (the receiver without timestamps, the middle), a
    // bottleneck cannot show as RTT growth; it shows as data that never pauses: its
    // queue delivers at the link's rate without a break, the same bytes on every RTT of
    // a grid set by the handshake (held-out sweep s50-008 at the client, snaplen 64: 7
    // Mbit/s behind a 938-packet FIFO, 56.6 KB per 67.6 ms, the link's 837 kB/s). A
    // flight held by its buffer waits for its ACKs: most of the plateau's RTTs start
    // after a pause of half an RTT, the pause that splits rounds (exchange.rs; s53-088
    // at the client: 33 KB bursts 82 ms apart).
    if growth.is_none() && !held && run.paused.saturating_mul(2) < run.rounds {
        return None;
    }
    let bytes = dir.unique_bytes;
    if span == 0 || bytes == 0 {
        return None;
    }
    // A buffer that held the flight to `per_rtt` a round accounts for the rounds its
    // ceiling needs for the bytes; when that is less than [`MIN_SHARE`] of the span,
    // something else held the transfer for most of its time, whatever the tracker's
    // shares say from a vantage that sees the window late (held-out sweep s40-013 at the
    // client: a slow reader behind BBR, 31.6 KB per 33.4 ms RTT on the plateau, 1.29 MB
    // in 3.56 s where that ceiling needs 1.36 s; the reopening window counted as the
    // sender's 62 % of the time; tcp_info's sndbuf_limited 0, rwnd_limited 1,092 ms).
    let ceiling_ns = bytes.div_ceil(per_rtt.max(1)).saturating_mul(rtt);
    if (ceiling_ns as f64) < MIN_SHARE * span as f64 {
        return None;
    }
    let slow_start = unlimited_ns(bytes, segment, rtt);
    let window_held = window_bound_ns(bytes, window, rtt);
    let alt = slow_start.max(window_held);
    let cost = span.saturating_sub(alt).min(l.sender_ns);
    if cost < rtt {
        return None;
    }
    let r = roles(sender_is_server);
    let avg = bytes as f64 / (span as f64 / 1e9);
    let mut f = conn.finding(FindingId::SndbufLimited);
    f.cost_ns = cost;
    f.share = Some(cost as f64 / conn.active_ns().max(1) as f64);
    let growth_text = growth.map_or("RTT growth not measured".to_string(), |g| {
        format!("RTT p95 {:.2} × its minimum", g)
    });
    // What a round's number is: the data of a response's round, or the most sent
    // within one RTT (the grid's flight), in the explanation and in the citations.
    let measure = if held {
        ("", "per RTT", "in it")
    } else {
        (
            "at most ",
            "within one RTT (its flight)",
            "within one RTT ending in it",
        )
    };
    f.explanation = format!(
        "The {tx} sent {at_most}≈ {per} B {per_what} for {n} RTTs in a row (between {lo} \
         and {hi} B{dipped}), below the {rx}'s window ({win} B), with no retransmission and no queueing \
         ({growth_text}): it sent as ACKs returned, what they freed. A congestion \
         window keeps growing without loss{fell}, so its send buffer held the data (Linux doubles \
         SO_SNDBUF and setting it turns autotuning off; a proxy's fixed buffer does the \
         same). Shares of the transfer: {shares}. Ceiling: {per} B per {rtt} RTT = {ceil}; \
         the transfer averaged {avg} ({b} B in {span}). Without the limit the {b} B would \
         have taken ≈ {alt} ({model}), so it cost \
         ≈ {cost}. Judged by the wire alone{where_}: tcp_info's sndbuf_limited (ss) on \
         the {tx} would confirm it, though some kernels (6.18) leave it at 0.",
        tx = r.sender,
        rx = r.receiver,
        at_most = measure.0,
        per_what = measure.1,
        per = thousands(per_rtt),
        n = run.rounds,
        lo = thousands(run.min),
        hi = thousands(run.max),
        dipped = if dips {
            format!(
                "; back within one ACK's release of {} B in {} of them, the dips \
                 a writer asleep on a full buffer, woken only once a third of it is free",
                thousands(run.max),
                run.returns()
            )
        } else {
            String::new()
        },
        win = if scale_known {
            thousands(d.max_window)
        } else {
            format!(
                "window scale cut by the snaplen; at least {}",
                thousands(window)
            )
        },
        shares = shares_text(l),
        rtt = ms(rtt),
        ceil = rate(per_rtt as f64 / (rtt as f64 / 1e9)),
        avg = rate(avg),
        b = thousands(bytes),
        span = ms(span),
        alt = ms(alt),
        model = if window_held > slow_start {
            format!(
                "the {}'s window lets at most {} B through per RTT",
                r.receiver,
                thousands(window)
            )
        } else {
            "a window doubling each RTT from 10 segments: the path's capacity cannot be \
             measured while the buffer holds the rate below it"
                .to_string()
        },
        cost = ms(cost),
        fell = if held {
            " and never falls without a loss or ECN echo, as the data per RTT did where these \
             RTTs begin"
        } else {
            ""
        },
        where_ = if at_sender {
            ""
        } else {
            " and from the receiving side"
        },
    );
    for &(fr, ts, b) in run
        .frames
        .iter()
        .take(run.rounds.min(CITED_ROUNDS as u32) as usize)
    {
        f.cite(
            fr,
            ts,
            format!(
                "an RTT of the plateau starts: {}{} B of the {}'s data {}",
                measure.0,
                thousands(b),
                r.sender,
                measure.2
            ),
        );
    }
    f.fix = vec![Fix {
        host: r.sender_host,
        action: format!(
            "raise the {}'s send buffer: remove SO_SNDBUF or set it to at least the \
             bandwidth-delay product (or the proxy's buffer setting), raise \
             net.ipv4.tcp_wmem's max, and leave autotuning on",
            r.sender
        ),
    }];
    f.confidence = if at_sender {
        Confidence::Medium
    } else {
        Confidence::Low
    };
    Some(f)
}

/// Whether `len` bytes are not a whole number of `mss`-byte segments. The division only
/// for a payload of more than one segment (a TSO/GSO packet): a data segment's full or
/// short payload is told by a compare (a 32-bit division a data segment, ≈ 26 cycles
/// though one instruction to callgrind).
fn partial_segment(len: u32, mss: u32) -> bool {
    match len.cmp(&mss) {
        std::cmp::Ordering::Less => len != 0,
        std::cmp::Ordering::Equal => false,
        std::cmp::Ordering::Greater => len % mss != 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_partial_segment_is_the_remainder_without_the_division() {
        for mss in [1, 536, 1448] {
            for len in [0, 1, mss - 1, mss, mss + 1, 2 * mss, 3 * mss - 7, 45 * mss] {
                assert_eq!(partial_segment(len, mss), len % mss != 0, "{len} / {mss}");
            }
        }
    }

    /// Full rounds of `segs` × 1448 B, 150 ms apart.
    fn rounds(segs: &[u64]) -> Vec<Span> {
        segs.iter()
            .enumerate()
            .map(|(i, &n)| {
                let start = Timestamp(i as i64 * 150_000_000);
                Span {
                    first_frame: i as u64 * 40 + 1,
                    last_frame: i as u64 * 40 + n,
                    start,
                    end: Timestamp(start.0 + 1_000_000),
                    bytes: n * 1448,
                    segments: n as u32,
                    max_gap_ns: 0,
                }
            })
            .collect()
    }

    /// sndbuf-capped run 4's server (/work/notes/sndbuf-capped-runs), its full rounds:
    /// 64 KB tcp_wmem max, cwnd 64 → 220 and never the limit (ss), no loss. The writes overshoot the
    /// buffer, so no 8 RTTs stay within ×1.25 (the longest: 32, 29, 29, 36) and the
    /// plateau rule found nothing; the fall from 83 to 44 segments is what cwnd cannot do.
    const RUN4: &[u64] = &[
        10, 20, 32, 29, 29, 36, 83, 44, 30, 30, 30, 29, 21, 41, 34, 35, 85, 36, 79, 34, 49, 48, 94,
        96, 44, 64, 25, 40, 36, 35, 40, 50, 39,
    ];

    #[test]
    fn a_flight_that_falls_without_loss_and_stops_growing_is_held() {
        let r = held_run(&rounds(RUN4), 1448, 150_000_000).expect("held");
        // From the fall (interval 8, 44 segments) to the end: 26 RTTs.
        assert_eq!((r.rounds, r.min, r.max), (26, 21 * 1448, 96 * 1448));
        assert_eq!(
            r.frames[0],
            (7 * 40 + 1, Timestamp(7 * 150_000_000), 44 * 1448)
        );
    }

    /// A clean CUBIC transfer at 8 ms (s13-071's server at snaplen 64): rounds split by
    /// scheduling fall by more than the noise, but the flight grows ≈ 6 segments per
    /// round: a congestion window, not a buffer.
    #[test]
    fn a_flight_growing_in_congestion_avoidance_is_not_held() {
        let segs = [
            10, 20, 40, 80, 264, 72, 253, 156, 164, 172, 14, 166, 15, 194, 200, 210, 220, 135, 90,
            148, 250,
        ];
        assert!(trend_segments(&rounds(&segs[5..]), 1448) > 5.0);
        assert!(held_run(&rounds(&segs), 1448, 150_000_000).is_none());
        assert!(trend_segments(&rounds(&RUN4[7..]), 1448) < MIN_AVOIDANCE_GROWTH);
    }

    /// The same rounds eleven RTTs apart (as an FTP transfer at 1.6 ms whose rounds waited
    /// for something else): their data per RTT is no ceiling.
    #[test]
    fn rounds_that_wait_between_them_hold_no_flight() {
        assert!(held_run(&rounds(RUN4), 1448, 150_000_000 / 11).is_none());
        assert!(held_run(&rounds(RUN4), 1448, 150_000_000 / 2).is_some());
    }

    /// A flight that fell once and then doubles again (slow start after an application
    /// pause) is not held.
    #[test]
    fn a_doubling_flight_is_not_held() {
        let segs = [10, 20, 40, 80, 10, 20, 40, 80, 160, 320, 640, 1280];
        assert!(held_run(&rounds(&segs), 1448, 150_000_000).is_none());
    }

    /// s8-072-bulk: 11 write ends in the middle of an 11-RTT plateau: the writes ran dry
    /// each RTT; a few (a buffer-held writer's last, or one per other RTT) do not count.
    #[test]
    fn write_ends_in_most_rounds_are_the_application() {
        assert!(write_boundaries(11, 11));
        assert!(write_boundaries(5, 8));
        assert!(!write_boundaries(4, 8));
        assert!(!write_boundaries(0, 11));
    }

    /// A paced sender's 1,000 B every ms at an 80 ms RTT has 80 KB within one RTT, to
    /// within one slice (10 KB); a silence longer than the RTT empties the window.
    #[test]
    fn the_rtt_window_holds_the_last_rtts_data() {
        let mut w = RttWindow::default();
        let ms = 1_000_000i64;
        let mut last = 0;
        for i in 0..200 {
            last = w.add(Timestamp(i * ms), 1_000, 80_000_000);
        }
        assert!((70_000..=80_000).contains(&last), "{last}");
        assert_eq!(w.add(Timestamp(500 * ms), 1_000, 80_000_000), 1_000);
    }

    /// A ceiling run counts the rounds that come back to its highest, and fits its line
    /// through them only: dips to two thirds do not tilt it, a rise above the noise
    /// starts the count again.
    #[test]
    fn a_ceiling_run_counts_its_returns_and_ignores_its_dips() {
        let noise = 4 * 1448;
        let mut r = Run::default();
        for b in [
            131_768u64, 133_216, 92_672, 131_768, 131_768, 101_360, 133_216,
        ] {
            r.extend(
                (CEILING_SPREAD, noise),
                (1, Timestamp(0), b),
                (false, Spacing::default()),
                0,
            );
        }
        assert_eq!((r.rounds, r.returns()), (7, 5));
        assert!(r.ceiling.slope().abs() < 1_448.0, "{}", r.ceiling.slope());
        r.extend(
            (CEILING_SPREAD, noise),
            (1, Timestamp(0), 150_000),
            (false, Spacing::default()),
            0,
        );
        assert_eq!((r.rounds, r.returns()), (8, 1));
        // Beyond ×12/7 of the least, a new run.
        r.extend(
            (CEILING_SPREAD, noise),
            (1, Timestamp(0), 160_000),
            (false, Spacing::default()),
            0,
        );
        assert_eq!((r.rounds, r.returns()), (1, 1));
    }

    /// Gaps at the plateau's spacing (a link's) are even; a paced sender's two-segment
    /// slots (every other gap within a slot) are not.
    #[test]
    fn even_spacing_is_a_links_not_a_pacing_slots() {
        let link = Spacing {
            gaps: 100,
            short: 6,
        };
        assert!(link.even());
        let slots = Spacing {
            gaps: 100,
            short: 50,
        };
        assert!(!slots.even());
        assert!(!Spacing::default().even());
    }

    #[test]
    fn a_fits_slope_is_its_least_squares_line() {
        let mut f = Fit::default();
        assert_eq!(f.slope(), 0.0);
        for (x, y) in [(1.0, 3.0), (4.0, 9.0), (6.0, 13.0)] {
            f.add(x, y);
        }
        assert!((f.slope() - 2.0).abs() < 1e-9);
    }

    /// The least-squares trend of a run's rounds, in bytes per round.
    #[test]
    fn a_runs_trend_is_its_slope() {
        let mut r = Run::default();
        for b in [100u64, 105, 110, 115] {
            r.extend(
                (PLATEAU_SPREAD, 0),
                (1, Timestamp(0), b),
                (false, Spacing::default()),
                0,
            );
        }
        assert!((r.trend() - 5.0).abs() < 1e-9);
        let mut one = Run::default();
        one.extend(
            (PLATEAU_SPREAD, 0),
            (1, Timestamp(0), 100),
            (false, Spacing::default()),
            0,
        );
        assert_eq!(one.trend(), 0.0);
    }

    /// Falls within one ACK's release (4 segments) are the grid's noise.
    #[test]
    fn falls_of_a_few_segments_prove_nothing() {
        let segs = [10, 20, 40, 38, 41, 37, 42, 40, 44, 41, 45, 43];
        assert!(held_run(&rounds(&segs), 1448, 150_000_000).is_none());
    }
}
