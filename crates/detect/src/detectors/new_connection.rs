//! `slow_start.new_connection`: the first response on a new connection was sent in slow
//! start, several round trips where a warm connection would have needed one or two
//! (mechanisms.md "connection.short_lived and slow_start.new_connection", seed 01).
//!
//! Mechanism (RFC 5681 §3.1, RFC 6928; Linux `tcp_init_cwnd`, `tcp_slow_start`): a new
//! connection starts with the initial window, IW = 10 segments on Linux (route attribute
//! `initcwnd`), and cwnd grows by the bytes acknowledged, so it roughly doubles per RTT.
//! A response larger than IW therefore goes out in rounds of IW, 2·IW, 4·IW … one RTT
//! apart. Seed 01: 741,342 bytes with MSS 1412 B took about 6 rounds instead of 1.
//!
//! Signature: the first request/response exchange of a connection whose handshake was
//! captured; the response split into rounds (see [`crate::exchange`]; at a LAN's RTT, where
//! no gap in time separates them, the ACK clock's by timestamp echo) whose sizes grow
//! ×1.3–×3 per round and which start about one RTT apart (the handshake's, or the
//! previous round's when a queue lengthened it), the first one holding at least
//! two full segments (less was the application's write, not the window).
//! - At the sender (server-side capture): each round leaves when the ACKs of the previous
//!   one return; bursts are back to back, rounds one RTT apart.
//! - At the receiver (client-side capture): the same bursts arrive one RTT apart.
//!   Both vantage points see the same rounds and the same handshake RTT, so the finding
//!   and its cost are the same (the lab's `new-connection-per-request` from both ends).
//!
//! Cost: (rounds observed − rounds a warm window would have needed) × handshake RTT.
//! The warm window, in order of preference:
//! 1. the largest round sent on an already-warm exchange (not the first on its connection,
//!    not restarted from the initial window) between the same client host and server
//!    endpoint in this capture, when that round was limited by the window (more rounds
//!    followed it) or is at least as large as this response;
//! 2. else the receiver's advertised window in its ACK that covers the round before the
//!    last one: that very ACK releases the last round, so the window it carries is what
//!    the sender could use then; being one packet, it is the same at either vantage point
//!    (the nearest sample in time would not be: the client sees a later ACK than the server
//!    does before the last round). Not the largest window of the connection: receive-window
//!    autotuning (Linux `tcp_rcv_space_adjust`) keeps growing it during this very
//!    transfer, to about twice what a connection warmed by one such response offers at the
//!    start of the next (lab keepalive-warm: 691,200 B at the second response, 2.1 MB at
//!    the end). With the window scale unknown (the SYNs' options cut by the snaplen), the
//!    largest round instead: the window held it at once, so it is a lower bound.
//!
//! The explanation says which one was used. The handshake RTT of the new connection is
//! `connection.short_lived`'s (or `connection.idle_close`'s) cost, not counted here.
//!
//! Fix: reuse connections (keep-alive, pooling) on the client and keep them open
//! (server idle timeout above the request interval), so responses go out on a warm
//! window; for paths where new connections are unavoidable, a larger initial window on
//! the sender (`ip route change … initcwnd 20`) and receiver (`initrwnd`).
//!
//! False positives and limits: a response whose first exchange was paced by the
//! application in growing chunks one RTT apart would look the same (rare; the growth and
//! spacing checks reject constant chunks). A transfer that leaves slow start and runs at
//! a steady rate (rounds stop growing, or merge into one continuous flow) is not
//! reported: its rounds no longer measure slow start. The first response of a
//! connection that is reused afterwards is reported too (it did pay slow start), with
//! the note that later exchanges did not.

use crate::detector::{
    emptied_vec, host_pair, in_parts, plural, Connection, Detector, HostPair, Ms, Reusable,
    Segment, Slots,
};
use crate::detectors::delayed_ack::DEFAULT_MSS;
use crate::exchange::{Exchange, Span};
use crate::finding::{Confidence, Finding, FindingId, Fix, Host, StreamRef};
use std::borrow::Cow;
use std::collections::HashMap;
use tcpwhy_capture::Timestamp;
use tcpwhy_track::limits::ETHERNET_MSS;
use tcpwhy_track::{ClientBy, ConnSummary, Endpoint, Side, Vantage};

use crate::catalogue::Entry;

/// `slow_start.new_connection` in the catalogue (crate::catalogue).
pub const NEW_CONNECTION: Entry = Entry {
    id: "slow_start.new_connection",
    title: "slow start on a new connection",
    meaning: "the first response grows from the initial window in rounds one RTT apart, where a warm connection needs one or two",
    fix_goes_to: "the client: keep-alive, a connection pool; the sender's initial window",
    part_of: None,
    decided_by: Some(crate::host::BundleSide::Server),
    judge: None,
};

/// Smallest growth between consecutive rounds that still reads as slow start: Linux
/// doubles (cwnd += packets acked); a stack with delayed ACKs and no byte counting grows
/// ×1.5; a receive window catching up can hold one round to ×1.4 (lab keepalive-warm:
/// 80 → 112 segments).
pub const MIN_GROWTH: f64 = 1.3;
/// Largest growth between consecutive rounds: ×2, plus the tail of one round slipping
/// into the next at the capture point.
pub const MAX_GROWTH: f64 = 3.0;
/// Rounds must start between these multiples of the RTT apart (the handshake's, or the
/// previous round's spacing when longer, `looks_like_slow_start`): slow-start rounds are
/// paced by the ACK clock, one RTT each; longer gaps are the application's or loss.
pub const MIN_ROUND_SPACING_RTT: f64 = 0.5;
pub const MAX_ROUND_SPACING_RTT: f64 = 2.0;
/// RFC 6928's (and Linux's) initial window, in segments: a warm exchange whose first
/// round is no larger than twice this was restarted from the initial window (or is
/// small) and says nothing about a warm window.
pub const RFC6928_IW_SEGMENTS: u64 = 10;
/// The smallest initial window of any stack since RFC 3390 (RFC 5681 §3.1: 2 to 4
/// segments): a first round below it was not held back by cwnd but by the application
/// (headers written before the body, pcapplusplus-four-ipv6-http-streams: 288 B, then
/// 807 B).
pub const MIN_IW_SEGMENTS: u64 = 2;
/// Segments may be a little under the SYN's MSS (path MTU, options): a round counts as
/// full at this fraction (pcapplusplus-one-tcp-stream-max-seq: 1360-byte segments with
/// MSS 1420, 0.96)
pub const FULL_SEGMENT_FRACTION: f64 = 0.9;
/// The TCP timestamp option's bytes in every segment when both sides use it (the
/// tracker's one constant).
const TIMESTAMP_OPTION_BYTES: u64 = tcpwhy_track::model::TIMESTAMPS_OPTION_BYTES as u64;
/// Window samples kept per connection during its first exchange; when full, every
/// other one is dropped (the lookup then finds a slightly earlier sample).
pub const MAX_WINDOW_SAMPLES: usize = 1024;
/// First exchanges held until the end of the capture (to learn warm windows from later
/// connections); beyond this, a candidate is judged at once with what is known.
pub const MAX_PENDING: usize = 65_536;

/// What `finish` needs of one first exchange: what its finding is made of, not the
/// finding. Up to [`MAX_PENDING`] are held to the end of the capture, and they were the
/// part of `analyze`'s memory that grows with a capture's length: each held a finding
/// with two citations' Strings and a copy of the whole exchange (the bench's 40 M-packet
/// capture, read from standard input, peaked at 1.28 × the 10 M-packet one's RSS).
struct Candidate {
    /// The connection the finding is on.
    stream: u64,
    endpoints: [Endpoint; 2],
    vantage: Vantage,
    /// Its SYN (frame, time) and first request, the finding's first citations.
    syn: (u64, Timestamp),
    request: Round,
    rtt_ns: u64,
    mss: u64,
    mss_note: MssNote,
    /// The size of the response, if there was one.
    response_bytes: Option<u64>,
    /// The response's rounds as judged: the ACK clock's, a paced sender's or the
    /// timestamps' (`on_connection`).
    rounds: Box<[Round]>,
    /// The receiver's advertised window in its ACK of the round before the last; with
    /// the window scale unknown, the largest round instead (a lower bound of it).
    rwnd_at_last_round: Option<u64>,
    /// The SYNs' options were cut or not captured: the window scale is unknown.
    scale_unknown: bool,
    /// With the scale unknown, the client SYN's window bounded it above the largest round.
    window_from_syn: bool,
    later_exchanges: usize,
    active_ns: u64,
}

impl Candidate {
    /// Its client host and server endpoint, whose warm window it is judged against.
    fn key(&self) -> HostPair {
        host_pair(&self.endpoints)
    }
}

/// What a held candidate keeps of a [`Span`] (a round, its request): what its finding
/// cites and counts.
#[derive(Clone, Copy)]
struct Round {
    first_frame: u64,
    start: Timestamp,
    bytes: u64,
    segments: u32,
}

impl Round {
    /// Its segments: packets, or MSS-sized pieces of TSO/GRO super-segments.
    fn segs(&self, mss: u64) -> u64 {
        u64::from(self.segments).max(self.bytes.div_ceil(mss.max(1)))
    }
}

impl From<&Span> for Round {
    fn from(s: &Span) -> Self {
        Round {
            first_frame: s.first_frame,
            start: s.start,
            bytes: s.bytes,
            segments: s.segments,
        }
    }
}

/// The warm window learned from warm exchanges of one client host → server endpoint.
#[derive(Default, Clone, Copy)]
struct Warm {
    max_round_bytes: u64,
    /// The largest round was followed by another (so the window limited it).
    limited: bool,
    stream: u64,
    frame: u64,
}

#[derive(Default)]
struct Live {
    /// (relative ACK, window) of the client's segments until its second request.
    windows: Vec<(u64, u64)>,
    /// Relative sequence number of the server's first data byte.
    server_first_seq: Option<u64>,
    /// The window of the client's SYN: never scaled (RFC 7323 §2.2), so bytes even when
    /// the snaplen cut the scale.
    syn_window: Option<u64>,
    done: bool,
}

impl Reusable for Live {
    fn empty(&mut self) {
        *self = Live {
            windows: emptied_vec(&mut self.windows),
            ..Live::default()
        };
    }
}

#[derive(Default)]
pub struct NewConnection {
    live: Slots<Live>,
    warm: HashMap<HostPair, Warm>,
    pending: Vec<Candidate>,
}

/// The fewest held candidates a thread of `finish` is started for: judging one takes a
/// few microseconds (13.6 k instructions on the mixed bench capture, callgrind), so
/// 256 are ≈ 1 ms, many times the cost of starting a thread.
const MIN_JUDGED_A_THREAD: usize = 256;

/// How [`sender_mss`] came to its value, for the finding's texts: written only into the
/// findings (a String per connection was made for every connection with its SYNs).
#[derive(Copy, Clone)]
enum MssNote {
    Plain { mss: u64 },
    LessTimestamps { mss: u64, eff: u64 },
    Seen { mss: u64 },
}

impl std::fmt::Display for MssNote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            MssNote::Plain { mss } => write!(f, "MSS {mss} B from the SYNs"),
            MssNote::Seen { mss } => write!(
                f,
                "segments of {mss} B as the first round carried them: the snaplen cut the SYNs' options"
            ),
            MssNote::LessTimestamps { mss, eff } => write!(
                f,
                "MSS {mss} B from the SYNs − {TIMESTAMP_OPTION_BYTES} B of timestamp option = {eff} B"
            ),
        }
    }
}

/// The sender's payload per segment: the smaller SYN MSS, minus the timestamp option.
/// When the snaplen cut the SYNs' options, whether the timestamps (12 bytes off every
/// segment) were among them is unknown: then the first response's first round's
/// payload per packet (`first_round`: slow start's first round is the initial window's
/// full segments), within the MSS read and 12 bytes less, or without one between RFC
/// 9293's default + 1 and an Ethernet segment (sweep s20-025 at snaplen 64: MSS 1460
/// read, rounds of 10 and 11.6 segments of 1,448 B, which a 1,460 B segment made
/// "fewer than the initial window").
fn sender_mss(s: &ConnSummary, first_round: Option<&Span>) -> Option<(u64, MssNote)> {
    let c = s.dirs[0].syn?;
    let srv = s.dirs[1].syn?;
    let read = match (c.mss, srv.mss) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (Some(a), None) | (None, Some(a)) => Some(a),
        (None, None) => None,
    };
    if s.dirs.iter().any(|d| d.syn_cut) {
        let r = first_round?;
        let (lo, hi) = read.map_or((DEFAULT_MSS + 1, ETHERNET_MSS), |m| {
            // An MSS option of 0 (any bytes can be a capture's) bounds nothing below 1:
            // `clamp` needs lo ≤ hi.
            let m = u64::from(m).max(1);
            (m.saturating_sub(TIMESTAMP_OPTION_BYTES).max(1), m)
        });
        let mss = (r.bytes / u64::from(r.segments.max(1))).clamp(lo, hi);
        return Some((mss, MssNote::Seen { mss }));
    }
    // The whole SYNs: the one rule, `ConnSummary::mss`.
    let mss = u64::from(read?);
    let eff = s.mss(Side::Server).map_or(mss, u64::from);
    if eff < mss {
        Some((eff, MssNote::LessTimestamps { mss, eff }))
    } else {
        Some((mss, MssNote::Plain { mss }))
    }
}

/// The segments of each round, space-separated ("10 2"), for the explanation.
struct SegmentsPerRound<'a> {
    rounds: &'a [Round],
    mss: u64,
}

impl std::fmt::Display for SegmentsPerRound<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, r) in self.rounds.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            write!(f, "{}", r.segs(self.mss))?;
        }
        Ok(())
    }
}

/// Do the rounds grow and space like slow start?
fn looks_like_slow_start(x: &Exchange, rtt_ns: u64, mss: u64) -> bool {
    rounds_of_slow_start(&x.rounds, rtt_ns, mss)
}

/// Whether these rounds read as slow start.
fn rounds_of_slow_start(r: &[Span], rtt_ns: u64, mss: u64) -> bool {
    grows_like_slow_start(r, mss) && spaced_like_slow_start(r, rtt_ns)
}

/// Whether the rounds of the ACK clock (`Exchange::clocked`, which hold the whole
/// response) read as slow start: they grow like it. Their spacing needs no check: each
/// is the data that echoes an ACK of the round before, a round trip of the ACK clock by
/// construction, and the time between them here holds the path's jitter, which at a
/// LAN's RTT can be several round trips (sweep s18-057's client at 1 ms: rounds of 10,
/// 20, 40 and 10 segments, the last 7 ms late).
///
/// Like rounds cut by time, they could cut an application's trickle into round-trip
/// pieces, so they need three growths ([`MIN_PACED_ROUNDS`]) — unless they also start a
/// round trip apart and the sender waited at every boundary, as rounds cut by time must
/// ([`spaced_like_slow_start`]): then one growth and the rest will do, as for those. Sweep
/// s93-041 at the client (BBR at 18 ms): rounds of 10, 20 and 27 segments 18.6 ms apart,
/// the paced ones with gaps of at most 1.6 ms inside, 18.6 and 7.4 ms of silence before
/// the second and third; cut by time, the third round's first two segments fell within
/// the second's round trip (10, 22, 25: no doubling).
fn clocked_slow_start(x: &Exchange, rtt_ns: u64, mss: u64) -> bool {
    x.clock_rounds().is_some_and(|r| {
        (r.len() >= MIN_PACED_ROUNDS
            || (r.len() >= MIN_PACED_ROUNDS - 1 && spaced_like_slow_start(r, rtt_ns)))
            && grows_like_slow_start(r, mss)
    })
}

/// The first round holds at least the initial window's full segments and each round
/// grows ×[`MIN_GROWTH`]–×[`MAX_GROWTH`] over the one before (the last may be smaller).
fn grows_like_slow_start(r: &[Span], mss: u64) -> bool {
    if r.len() < 2 {
        return false;
    }
    let min_first = (MIN_IW_SEGMENTS * mss) as f64 * FULL_SEGMENT_FRACTION;
    if (r[0].bytes as f64) < min_first {
        return false;
    }
    (1..r.len()).all(|i| {
        let g = r[i].bytes as f64 / r[i - 1].bytes.max(1) as f64;
        let last = i == r.len() - 1;
        // The last round holds what was left: it may be small, never much larger.
        g <= MAX_GROWTH && (last || g >= MIN_GROWTH)
    })
}

/// The rounds start about one round trip apart (see the loop's comment).
fn spaced_like_slow_start(r: &[Span], rtt_ns: u64) -> bool {
    if r.len() < 2 || rtt_ns == 0 {
        return false;
    }
    for i in 1..r.len() {
        // One round trip apart, the handshake's or, once a bottleneck queues the growing
        // flight, the previous round's: the queue a round meets is the excess of its
        // flight over the path's (Little's law at the drain rate), and slow start at most
        // doubles the flight per round (`tcp_slow_start`), so a round trip at most
        // doubles too; an application's pause is bounded by neither (sweep s6-041, 1.1
        // ms handshake RTT, TSO: rounds of 10, 20, 40, 80, 160 segments 1.36, 1.47, 1.62,
        // 3.03 ms apart as the lab's emulator queued them).
        let gap = r[i].start.elapsed_since(r[i - 1].start);
        let round_trip = if i >= 2 {
            rtt_ns.max(r[i - 1].start.elapsed_since(r[i - 2].start))
        } else {
            rtt_ns
        };
        let low = gap as f64 / rtt_ns as f64;
        let high = gap as f64 / round_trip as f64;
        if low < MIN_ROUND_SPACING_RTT || high > MAX_ROUND_SPACING_RTT {
            return false;
        }
    }
    // A boundary with less than half the RTT of silence before it, and no longer than
    // the sender paused within the rounds on either side, was drawn by the round trip
    // alone (`Exchange::paced_rounds`, one RTT each): a trickle cut into round-trip
    // pieces can grow once by chance, so such rounds must grow at least three times
    // before the last (sweep s10-057, BBR: 10, 20, 32, 64 segments, then 12;
    // suricata-verify-tls-subjectaltname stream 19, a CDN's 14 KB answer: 4 and 10
    // segments and a 2-segment piece, no slow start). A paced sender that waits for the
    // ACK clock pauses longer there than anywhere within a round: BBR's startup paces a
    // doubled round at 2.89 × the rate it measured (`bbr_high_gain`), over ≈ 0.7 RTT,
    // so the wait before the next round is ≈ 0.3 RTT, many pacing intervals (held-out
    // sweep s34-081 at 69 ms: 20 segments over 41 ms, 2–3 ms apart, then 28 ms of
    // silence before the last 16).
    let by_rtt = (1..r.len()).any(|i| {
        let silence = r[i].start.elapsed_since(r[i - 1].end);
        silence < rtt_ns / 2 && silence <= r[i - 1].max_gap_ns.max(r[i].max_gap_ns)
    });
    !by_rtt || r.len() >= MIN_PACED_ROUNDS
}

/// Rounds (the last included) a response cut into round trips by time alone needs to
/// read as slow start: three growths, then what was left.
pub const MIN_PACED_ROUNDS: usize = 4;

impl NewConnection {
    /// A segment with data, or from the client.
    #[inline]
    fn segment(&mut self, seg: &Segment<'_>) {
        let ev = seg.ev;
        let live = self.live.get_or_default(seg);
        if live.done {
            return;
        }
        if !ev.from_client {
            if ev.payload_len > 0 && live.server_first_seq.is_none() {
                live.server_first_seq = Some(ev.rel_seq);
            }
            return;
        }
        if seg.pkt.flags.syn() && !seg.pkt.flags.ack() {
            live.syn_window = Some(u64::from(seg.pkt.window));
        }
        if ev.payload_len > 0 && live.server_first_seq.is_some() {
            // The second request: the first exchange is over.
            live.done = true;
            return;
        }
        if live.windows.len() >= MAX_WINDOW_SAMPLES {
            let mut i = 0;
            live.windows.retain(|_| {
                i += 1;
                i % 2 == 0
            });
        }
        if let Some(ack) = ev.rel_ack {
            live.windows.push((ack, ev.window_bytes));
        }
    }

    /// Judges the first exchanges held to the end (the most work left after a pass) in
    /// contiguous parts on up to `outs.len()` threads, each part's findings given to
    /// `push` with its own out, on its thread ([`in_parts`]); nothing with no `outs`.
    pub(crate) fn judge_held<O: Send>(
        &mut self,
        outs: &mut [O],
        push: &(dyn Fn(&mut O, Finding) + Sync),
    ) {
        let pending = std::mem::take(&mut self.pending);
        let parts = outs.len().min(pending.len() / MIN_JUDGED_A_THREAD).max(1);
        let warm = &self.warm;
        let outs = outs.get_mut(..parts).unwrap_or_default();
        in_parts(&pending, outs, |c, out| {
            if let Some(f) = judge(c, warm.get(&c.key()).copied()) {
                push(out, f);
            }
        });
    }
}

impl Detector for NewConnection {
    // Judges a connection's first exchange and learns warm windows from the later ones: data.
    const JUDGES_DATALESS: bool = false;

    /// Inlined into the registry's dispatch: the server's pure ACKs change nothing and
    /// cost a test, not a call and a lookup.
    #[inline]
    fn on_segment(&mut self, seg: &Segment<'_>) {
        if seg.ev.from_client || seg.ev.payload_len > 0 {
            self.segment(seg);
        }
    }

    fn on_connection(&mut self, conn: &Connection<'_>, out: &mut Vec<Finding>) {
        let s = conn.summary;
        let taken = self.live.take_reusing(conn);
        let none = Live::default();
        let live = taken.as_deref().unwrap_or(&none);
        let key = host_pair(&s.endpoints);
        let first_round = conn
            .exchanges
            .first()
            .and_then(|x| x.response.as_ref().and(x.rounds.first()));
        let Some((mss, mss_note)) = sender_mss(s, first_round) else {
            return;
        };
        // Warm exchanges teach the warm window of this client host → server endpoint.
        for x in conn.exchanges.iter().skip(1) {
            let Some(first) = x.rounds.first() else {
                continue;
            };
            if first.bytes <= 2 * RFC6928_IW_SEGMENTS * mss {
                continue; // restarted from the initial window, or too small to tell
            }
            for (i, r) in x.rounds.iter().enumerate() {
                let w = self.warm.entry(key).or_default();
                if r.bytes > w.max_round_bytes {
                    *w = Warm {
                        max_round_bytes: r.bytes,
                        limited: i + 1 < x.rounds.len(),
                        stream: s.stream,
                        frame: r.first_frame,
                    };
                }
            }
        }
        let new_conn = s.client_by == ClientBy::Syn && s.handshake_rtt_ns().is_some();
        let (Some(x), Some(rtt_ns)) = (conn.exchanges.first(), conn.rtt_ns) else {
            return;
        };
        if !new_conn {
            return;
        }
        // The rounds the ACK clock separates, or else those of a paced sender.
        let x = if looks_like_slow_start(x, rtt_ns, mss) {
            Cow::Borrowed(x)
        } else if rounds_of_slow_start(&x.paced_rounds, rtt_ns, mss) {
            let mut paced = x.clone();
            paced.rounds = std::mem::take(&mut paced.paced_rounds);
            Cow::Owned(paced)
        } else if clocked_slow_start(x, rtt_ns, mss) {
            let mut clocked = x.clone();
            clocked.rounds = x.clock_rounds().unwrap_or_default().to_vec();
            Cow::Owned(clocked)
        } else {
            return;
        };
        let x = x.as_ref();
        // The ACK covering every round but the last releases the last round.
        let before_last: u64 = x.rounds[..x.rounds.len() - 1].iter().map(|r| r.bytes).sum();
        // With the window scale unknown (the snaplen cut the SYNs' options: issue 12
        // class 8) the window field is no byte count. The receiver's window was then at
        // least the largest round: a slow-start round leaves before any of it is ACKed,
        // and the sender never exceeds the receiver's window (RFC 9293 §3.8.6), so a warm
        // window of that size is a lower bound, which can only lower the extra rounds
        // (sweep s6-041 at snaplen 64: raw fields of 757-983 against 940,786 B). So was
        // the client SYN's window, which is never scaled, less what the server sent
        // before the response: a Linux receiver never moves its right edge left
        // (`tcp_select_window`), so that edge still stood (sweep s20-025 at snaplen 64:
        // rounds of 14,480 and 16,869 B, a SYN window of 64,240 B).
        let scale_unknown = s.dirs.iter().any(|d| d.syn_whole().is_none());
        let largest_round = x.rounds.iter().map(|r| r.bytes).max();
        let syn_edge = live.syn_window.map_or(0, |w| {
            w.saturating_sub(live.server_first_seq.unwrap_or(1).saturating_sub(1))
        });
        let window_from_syn = scale_unknown && largest_round.is_some_and(|m| syn_edge > m);
        let rwnd_at_last_round = if scale_unknown {
            largest_round.map(|m| m.max(syn_edge))
        } else {
            live.server_first_seq.and_then(|first| {
                live.windows
                    .iter()
                    .find(|(ack, _)| *ack >= first + before_last)
                    .map(|w| w.1)
            })
        };
        let c = Candidate {
            stream: s.stream,
            endpoints: s.endpoints,
            vantage: conn.vantage,
            syn: (s.first_frame, s.start),
            request: Round::from(&x.request),
            rtt_ns,
            mss,
            mss_note,
            response_bytes: x.response.as_ref().map(|r| r.bytes),
            rounds: x.rounds.iter().map(Round::from).collect(),
            rwnd_at_last_round,
            scale_unknown,
            window_from_syn,
            later_exchanges: conn.exchanges.len() - 1,
            active_ns: conn.active_ns(),
        };
        if self.pending.len() < MAX_PENDING {
            self.pending.push(c);
        } else if let Some(f) = judge(&c, self.warm.get(&key).copied()) {
            out.push(f);
        }
    }

    fn finish(&mut self, out: &mut Vec<Finding>) {
        self.judge_held(std::slice::from_mut(out), &|out, f| out.push(f));
    }

    fn absorb(&mut self, o: Self) {
        for (key, w) in o.warm {
            let mine = self.warm.entry(key).or_default();
            // One thread keeps the first largest round in stream order.
            if (w.max_round_bytes, std::cmp::Reverse(w.stream))
                > (mine.max_round_bytes, std::cmp::Reverse(mine.stream))
            {
                *mine = w;
            }
        }
        // In no particular order: each is judged alone, and the report sorts the
        // findings. The shorter list is moved (a candidate is a few hundred bytes, its
        // rounds beside it).
        let mut other = o.pending;
        if other.len() > self.pending.len() {
            std::mem::swap(&mut other, &mut self.pending);
        }
        self.pending.append(&mut other);
    }
}

/// Prices one candidate against the best warm window known.
fn judge(c: &Candidate, warm: Option<Warm>) -> Option<Finding> {
    let rounds = &c.rounds[..];
    let bytes = c.response_bytes?;
    let (window, source): (u64, Cow<'static, str>) = match warm {
        Some(w) if w.limited || w.max_round_bytes >= bytes => (
            w.max_round_bytes,
            format!(
                "the largest round sent on a warm connection between the same hosts (stream {}, \
                 frame {})",
                StreamRef(w.stream),
                w.frame
            )
            .into(),
        ),
        _ if c.window_from_syn => (
            c.rwnd_at_last_round?,
            "the client SYN's window, which is never scaled (RFC 7323) and whose right edge \
             a Linux receiver never moves back (the scale of later windows is unknown: the \
             SYNs' options were not captured whole; no warm connection between these hosts \
             in this capture)"
                .into(),
        ),
        _ if c.scale_unknown => (
            c.rwnd_at_last_round?,
            "the largest round, which the client's receive window held at once (its scale \
             is unknown: the SYNs' options were not captured whole; no warm connection \
             between these hosts in this capture)"
                .into(),
        ),
        _ => (
            c.rwnd_at_last_round?,
            "the receive window the client advertised in its ACK that released the last \
             round (no warm connection between these hosts in this capture)"
                .into(),
        ),
    };
    if window == 0 {
        return None;
    }
    let observed = rounds.len() as u64;
    let needed = bytes.div_ceil(window).max(1);
    if observed <= needed {
        return None;
    }
    let extra = observed - needed;
    // Made on this thread, which renders and frees it (`Analyzer::finish_into`): a
    // finding made by the pass's threads and freed here took the malloc arena of the
    // thread that made it from under that thread (futex waits: 12 % of a part's time).
    let mut f = Finding::new(
        FindingId::SlowStartNewConnection,
        c.stream,
        c.endpoints,
        c.vantage,
    );
    f.cite(
        c.syn.0,
        c.syn.1,
        format!("SYN: a new connection ({})", c.mss_note),
    );
    f.cite(
        c.request.first_frame,
        c.request.start,
        format!("request 1 ({} B)", c.request.bytes),
    );
    f.cost_ns = extra * c.rtt_ns;
    f.share = Some(f.cost_ns as f64 / c.active_ns.max(1) as f64);
    // The texts below are written straight into the finding's (7,290 findings on the
    // 1 M-packet prefix of the mixed bench capture, each with a dozen Strings made only
    // to be copied into another one before).
    let sizes = SegmentsPerRound { rounds, mss: c.mss };
    for (i, r) in rounds.iter().enumerate() {
        let n = r.segs(c.mss);
        let segments = plural(n, "segment", "segments");
        let note = if i == 0 {
            format!(
                "round 1: {n} {segments} ({} B), the initial window",
                r.bytes
            )
        } else {
            let gap = r.start.elapsed_since(rounds[i - 1].start);
            format!(
                "round {}: {n} {segments} ({} B), {} after round {i}",
                i + 1,
                r.bytes,
                Ms(gap)
            )
        };
        f.cite(r.first_frame, r.start, note);
    }
    let iw = rounds[0].segs(c.mss);
    let growth = || {
        rounds
            .windows(2)
            .take(rounds.len().saturating_sub(2))
            .map(|w| w[1].bytes as f64 / w[0].bytes.max(1) as f64)
    };
    let shape = match (growth().reduce(f64::min), growth().reduce(f64::max)) {
        (Some(lo), Some(hi)) => format!(
            "it began at the initial window of {iw} segments and grew ×{lo:.1}–×{hi:.1} per round"
        ),
        _ => format!("the initial window of {iw} segments held the rest back one round trip"),
    };
    let reuse_note: Cow<'static, str> = if c.later_exchanges > 0 {
        format!(
            " The connection then carried {} more request(s), which did not pay it again: this \
             is the one-time price of opening it.",
            c.later_exchanges
        )
        .into()
    } else {
        " The connection carried no other request, so every request on a new connection pays \
         this again; its handshake RTT is counted by connection.short_lived \
         (connection.idle_close when an idle timeout closed the previous one)."
            .into()
    };
    f.explanation = format!(
        "The {bytes}-byte response on this new connection took {observed} round trips of {} \
         (the handshake RTT): [{}] segments of {} B ({}). That is slow start: {shape}. A warm window of {window} \
         B — {source} — would have sent it in {needed} round(s): {extra} extra round(s) × {} = \
         {}.{reuse_note}",
        Ms(c.rtt_ns),
        sizes,
        c.mss,
        c.mss_note,
        Ms(c.rtt_ns),
        Ms(f.cost_ns),
    );
    f.fix = if c.later_exchanges > 0 {
        vec![
            Fix {
                host: Host::Server,
                action: "raise the initial window on the sender for this known path: \
                         `ip route change <client prefix> via <gateway> initcwnd 20` (Linux; \
                         default 10 segments)"
                    .into(),
            },
            Fix {
                host: Host::Client,
                action: "open (and warm) the connection before the first request matters, and \
                         raise `initrwnd` on the route so the receive window does not limit \
                         the first rounds"
                    .into(),
            },
        ]
    } else {
        vec![
            Fix {
                host: Host::Client,
                action: "reuse connections: HTTP keep-alive and a connection pool (e.g. nginx \
                         upstream `keepalive 32;` with `proxy_http_version 1.1;` and \
                         `proxy_set_header Connection \"\";`) so responses go out on a warm \
                         window"
                    .into(),
            },
            Fix {
                host: Host::Server,
                action: "keep connections open: no `Connection: close`, keep-alive timeout \
                         above the client's request interval"
                    .into(),
            },
            Fix {
                host: Host::Server,
                action: "where new connections are unavoidable, raise the initial window for \
                         known paths: `ip route change <client prefix> via <gateway> initcwnd \
                         20`"
                .into(),
            },
        ]
    };
    f.confidence = if observed >= 4 && extra >= 2 {
        Confidence::High
    } else {
        Confidence::Medium
    };
    Some(f)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exchange::ClockedRounds;
    use std::net::IpAddr;
    use tcpwhy_capture::Timestamp;

    /// Rounds of `(segments, start in µs)` of 1448 B segments.
    fn exchange(rounds: &[(u64, i64)]) -> Exchange {
        let span = |(n, us): (u64, i64)| Span {
            first_frame: 1,
            last_frame: 1,
            start: Timestamp::from_nanos(us * 1_000),
            end: Timestamp::from_nanos(us * 1_000),
            bytes: n * 1448,
            segments: n as u32,
            max_gap_ns: 0,
        };
        let rounds: Vec<Span> = rounds.iter().copied().map(span).collect();
        Exchange {
            index: 0,
            request: span((1, 0)),
            response: rounds.first().copied(),
            rounds,
            paced_rounds: Vec::new(),
            clocked: ClockedRounds::Unknown,
            idle_before_ns: None,
        }
    }

    /// Sweep s10-057 at the server (BBR, 70 ms handshake RTT): rounds of 10, 20, 32, 64
    /// segments one RTT apart and a last 12, each but the first spread over most of the
    /// round trip, so they touch: 4 ms between rounds, as long as the sender paused
    /// within them. Cut by time alone they read as slow start only with three growths; 4,
    /// 10 and a 2-segment rest (suricata stream 19) do not, unless the sender paused
    /// longer between the rounds than within them (s34-081: 28 ms after 2–3 ms).
    #[test]
    fn paced_rounds_need_three_growths() {
        let spaced = |r: &[(u64, i64)], within: u64| {
            let mut x = exchange(r);
            for i in 1..x.rounds.len() {
                x.rounds[i - 1].end = Timestamp::from_nanos(x.rounds[i].start.nanos() - 4_000_000);
            }
            for r in &mut x.rounds {
                r.max_gap_ns = within;
            }
            x.rounds
        };
        let touching = |r: &[(u64, i64)]| spaced(r, 4_000_000);
        let waiting = spaced(&[(4, 0), (10, 26_000), (2, 47_000)], 1_000_000);
        assert!(rounds_of_slow_start(&waiting, 18_000_000, 1448));
        let bbr = touching(&[
            (10, 0),
            (20, 74_000),
            (32, 145_000),
            (64, 214_000),
            (12, 284_000),
        ]);
        assert!(rounds_of_slow_start(&bbr, 70_000_000, 1448));
        let trickle = touching(&[(4, 0), (10, 26_000), (2, 47_000)]);
        assert!(!rounds_of_slow_start(&trickle, 18_000_000, 1448));
        // The same two growths with silence between rounds were ACK-clocked: accepted.
        let mut clocked = exchange(&[(4, 0), (10, 18_000), (12, 36_000)]).rounds;
        assert!(rounds_of_slow_start(&clocked, 18_000_000, 1448));
        clocked.truncate(2);
        assert!(rounds_of_slow_start(&clocked, 18_000_000, 1448));
    }

    /// Sweep s6-041 at the server (1.13 ms handshake RTT, TSO, snaplen 64): rounds of 10,
    /// 20, 40, 80 and 160 segments starting 1.36, 1.47, 1.62 and 3.03 ms apart, the last
    /// 2.7 handshake RTTs after the one before as the emulator queued the growing flight,
    /// but within twice the previous round's 1.62 ms. A pause twice as long as the round
    /// before it is no round trip.
    #[test]
    fn rounds_one_queued_round_trip_apart_are_slow_start() {
        let rounds = [(10, 0), (20, 1_358), (40, 2_832), (80, 4_451), (160, 7_484)];
        assert!(looks_like_slow_start(&exchange(&rounds), 1_130_000, 1448));
        let paused = [(10, 0), (20, 1_358), (40, 2_832), (80, 4_451), (160, 7_800)];
        assert!(!looks_like_slow_start(&exchange(&paused), 1_130_000, 1448));
    }

    /// `n` held first exchanges of 1448-byte rounds of 10, 20 and 5 segments, one RTT
    /// apart, from 40 client hosts to one server, with RTTs of 10–49 ms and receive
    /// windows of 29–128 KB (1 to 3 rounds needed); every seventh with a zero window (not
    /// judged a finding).
    fn held(n: u64) -> NewConnection {
        let server = Endpoint {
            addr: IpAddr::from([10, 0, 9, 9]),
            port: 80,
        };
        let mut nc = NewConnection::default();
        for i in 0..n {
            let client = Endpoint {
                addr: IpAddr::from([10, 0, 0, (i % 40) as u8]),
                port: 30000 + i as u16,
            };
            let rtt_ns = (10 + i % 40) * 1_000_000;
            let span = |segments: u64, start_ns: u64| Span {
                first_frame: 10 * i + segments,
                last_frame: 10 * i + segments,
                start: Timestamp::from_nanos(start_ns as i64),
                end: Timestamp::from_nanos(start_ns as i64),
                bytes: segments * 1448,
                segments: segments as u32,
                max_gap_ns: 0,
            };
            let rounds = [span(10, 0), span(20, rtt_ns), span(5, 2 * rtt_ns)];
            nc.pending.push(Candidate {
                stream: i,
                endpoints: [client, server],
                vantage: tcpwhy_track::Vantage::Server,
                syn: (10 * i, Timestamp::from_nanos(0)),
                request: Round::from(&span(1, 0)),
                rtt_ns,
                mss: 1448,
                mss_note: MssNote::Plain { mss: 1448 },
                response_bytes: Some(span(35, 0).bytes),
                rounds: rounds.iter().map(Round::from).collect(),
                rwnd_at_last_round: Some(if i % 7 == 0 { 0 } else { 29_000 * (1 + i % 4) }),
                scale_unknown: false,
                window_from_syn: false,
                later_exchanges: 0,
                active_ns: 3 * rtt_ns,
            });
        }
        nc
    }

    /// What a finding says, to compare.
    fn said(f: &Finding) -> (u64, u64, String, Vec<u64>) {
        let frames = f.evidence.iter().map(|e| e.frame).collect();
        (f.stream, f.cost_ns, f.explanation.clone(), frames)
    }

    /// Judged in parts on several threads (a sharded pass's end with over
    /// 2 × [`MIN_JUDGED_A_THREAD`] held), the held exchanges give the findings one
    /// thread gives, each part into its own out.
    #[test]
    fn held_exchanges_judged_in_parts_give_what_one_thread_gives() {
        let n = 1000;
        let judged = |outs: usize| {
            let mut parts = vec![Vec::new(); outs];
            held(n).judge_held(&mut parts, &|o: &mut Vec<Finding>, f| o.push(f));
            parts
        };
        let one: Vec<_> = judged(1).concat().iter().map(said).collect();
        // Every exchange but the zero windows', and some cost, so that the check means
        // something.
        assert_eq!(one.len() as u64, n - n.div_ceil(7));
        assert!(one
            .iter()
            .all(|(_, cost, text, _)| *cost > 0 && !text.is_empty()));
        for outs in [2, 3, 8] {
            let parts = judged(outs);
            // 1,000 held: at most 3 parts of ≥ 256.
            let used = parts.iter().filter(|p| !p.is_empty()).count();
            assert_eq!(used, outs.min(3), "{outs} outs");
            let mut all: Vec<_> = parts.concat().iter().map(said).collect();
            all.sort_by_key(|s| s.0);
            assert_eq!(all, one, "{outs} outs");
        }
    }
}
