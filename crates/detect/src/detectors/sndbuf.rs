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
//! least [`MIN_SHARE`] of its transfer time, and by its application at most
//! [`MAX_APP_SHARE`]; which of congestion window and send buffer the wire cannot tell per
//! instant. This detector decides per connection: the data sent per RTT (which equals the
//! flight of an ACK-clocked sender, at any vantage point: any RTT-long interval holds one
//! window) stays on a plateau, within [`PLATEAU_SPREAD`], for at least [`PLATEAU_ROUNDS`]
//! RTTs in a row, at most [`MAX_WINDOW_FRACTION`] of the receiver's largest window, with
//! no retransmission in that direction and no RTT growth (p95 at most [`MAX_RTT_GROWTH`] ×
//! the minimum). A congestion window does not plateau without loss: slow start doubles
//! it each RTT, congestion avoidance (after a loss or a cached ssthresh) adds a segment
//! per RTT, CUBIC more.
//!
//! Cost: the transfer time minus the time the same bytes take with a window doubling each
//! RTT from the initial window (the model of `rwnd.limited`, `windows::unlimited_ns`),
//! bounded by the time the sender's own window held it.
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
//! probed) look the same; a bottleneck link would show as RTT growth or loss.

use crate::detector::{ms, Connection, Detector, Segment, Slots};
use crate::detectors::windows::{rate, roles, shares_text, span_ns, thousands, unlimited_ns};
use crate::finding::{Confidence, Finding, FindingId, Fix};
use tcpwhy_capture::{TcpFlags, Timestamp};
use tcpwhy_track::{RttStats, SegmentKinds, Side, Vantage};

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
/// An application that leaves the connection idle more than this share is `app.limited`.
pub const MAX_APP_SHARE: f64 = 0.2;
/// At least this many consecutive RTTs on the plateau: slow start alone lasts about
/// log2(window / IW) rounds, a handful; a buffer cap holds for the rest of the transfer
/// (small-sndbuf: ≈ 50 RTTs).
pub const PLATEAU_ROUNDS: u32 = 8;
/// Largest / smallest data per RTT on a plateau: ACK-clock jitter and delayed ACKs move
/// one RTT's worth by a segment or two out of ≈ 28 on the lab's 150 ms path; CUBIC's
/// growth without loss is faster than 25 % over 8 RTTs only in slow start.
pub const PLATEAU_SPREAD: f64 = 1.25;
/// The plateau must be well below what the receiver allowed.
pub const MAX_WINDOW_FRACTION: f64 = 0.5;
/// p95 RTT over the minimum beyond which the path queued (congestion, not the buffer).
pub const MAX_RTT_GROWTH: f64 = 1.5;
/// The plateau must hold at least this many full segments per RTT: one small segment
/// per RTT is an application waiting for each reply, or Nagle holding small writes
/// (tcptrace-fast-reuse.pcap: 62 B per 600 ms RTT), not a buffer.
pub const MIN_PLATEAU_SEGMENTS: u64 = 4;
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
    /// First data frame of the first rounds.
    frames: [(u64, Timestamp, u64); CITED_ROUNDS],
}

#[derive(Default)]
struct Dir {
    first_data: Option<(u64, Timestamp)>,
    last_data: Option<(u64, Timestamp)>,
    /// The current RTT-long interval: its first frame and time, bytes so far.
    bucket: Option<(u64, Timestamp, u64)>,
    run: Run,
    best: Run,
    /// The receiver's largest window after the data began.
    max_window: u64,
}

impl Dir {
    fn close_bucket(&mut self) {
        let Some((frame, ts, bytes)) = self.bucket.take() else {
            return;
        };
        let r = &mut self.run;
        let (lo, hi) = (r.min.min(bytes), r.max.max(bytes));
        if r.rounds > 0 && lo > 0 && hi as f64 <= PLATEAU_SPREAD * lo as f64 {
            r.min = lo;
            r.max = hi;
        } else {
            *r = Run {
                min: bytes,
                max: bytes,
                ..Run::default()
            };
        }
        if let Some(slot) = r.frames.get_mut(r.rounds as usize) {
            *slot = (frame, ts, bytes);
        }
        r.rounds = r.rounds.saturating_add(1);
        r.bytes = r.bytes.saturating_add(bytes);
        if r.rounds > self.best.rounds {
            self.best = *r;
        }
    }

    fn break_run(&mut self) {
        self.run = Run::default();
    }
}

#[derive(Default)]
struct Conn {
    /// The handshake RTT, once known (the connection model's).
    rtt_ns: Option<u64>,
    dirs: [Dir; 2],
}

#[derive(Default)]
pub struct SndbufLimited {
    conns: Slots<Conn>,
}

impl Detector for SndbufLimited {
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
        if flags.ack() && flags.0 & TcpFlags::RST == 0 {
            let d = &mut c.dirs[peer];
            if d.first_data.is_some() {
                d.max_window = d.max_window.max(ev.window_bytes);
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
        d.last_data = Some((seg.frame, seg.ts));
        let len = u64::from(ev.payload_len);
        // RTT-long intervals on a fixed grid from the first data: any RTT-long interval of
        // an ACK-clocked flow holds one window.
        match d.bucket {
            Some((_, start, _)) if seg.ts.elapsed_since(start) < rtt => {
                if let Some(b) = d.bucket.as_mut() {
                    b.2 = b.2.saturating_add(len);
                }
            }
            Some((_, start, _)) => {
                let elapsed = seg.ts.elapsed_since(start);
                d.close_bucket();
                // A silence of a whole RTT or more: the sender paused; the run ends.
                let skipped = elapsed / rtt;
                if skipped >= 2 {
                    d.break_run();
                }
                let at = start
                    .0
                    .saturating_add(i64::try_from(skipped.saturating_mul(rtt)).unwrap_or(i64::MAX));
                d.bucket = Some((seg.frame, Timestamp(at), len));
            }
            None => d.bucket = Some((seg.frame, seg.ts, len)),
        }
    }

    fn on_connection(&mut self, conn: &Connection<'_>, out: &mut Vec<Finding>) {
        let Some(mut c) = self.conns.take(conn) else {
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
    let run = d.best;
    // Any sign of loss: a congestion window that was cut and grows back slowly looks
    // like a plateau (fast-retransmit/server.pcap: 8 RTTs within 7 % after one drop that
    // this capture shows only as duplicate ACKs and an out-of-order repair).
    let peer = &s.dirs[i.peer()].counts;
    let loss = dir.counts.retransmissions + dir.counts.out_of_order + peer.dup_acks + peer.dsacks;
    if run.rounds < PLATEAU_ROUNDS || loss > 0 {
        return None;
    }
    let per_rtt = run.bytes / u64::from(run.rounds.max(1));
    // The segment size: the receiver's MSS (as announced in its SYN) less the 12 bytes
    // of timestamps Linux sends, at most Ethernet's 1448.
    let segment = s.dirs[i.peer()]
        .syn
        .and_then(|o| o.mss)
        .map_or(1448, |m| u64::from(m).min(1448));
    if per_rtt < MIN_PLATEAU_SEGMENTS.saturating_mul(segment) {
        return None;
    }
    if d.max_window == 0 || per_rtt as f64 > MAX_WINDOW_FRACTION * d.max_window as f64 {
        return None;
    }
    // RTT growth, from the samples that span the whole path at this vantage point:
    // data→ACK of this direction at its sender, the sender's echoes of the receiver's
    // timestamps at the receiver (its own data→ACK there is only its ACK delay).
    let at_sender = matches!(
        (conn.vantage, sender_is_server),
        (Vantage::Server, true) | (Vantage::Client, false)
    );
    let at_receiver = matches!(
        (conn.vantage, sender_is_server),
        (Vantage::Client, true) | (Vantage::Server, false)
    );
    let growth = if at_sender {
        rtt_growth(dir.rtt_ack)
    } else if at_receiver {
        rtt_growth(s.dirs[i.peer()].rtt_ts)
    } else {
        None
    };
    if growth.is_some_and(|g| g > MAX_RTT_GROWTH) {
        return None;
    }
    let span = span_ns(d.first_data, d.last_data);
    let bytes = dir.unique_bytes;
    if span == 0 || bytes == 0 {
        return None;
    }
    let alt = unlimited_ns(bytes, segment, rtt);
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
    f.explanation = format!(
        "The {tx} sent ≈ {per} B per RTT for {n} RTTs in a row (between {lo} and {hi} B), \
         far below the {rx}'s window ({win} B), with no retransmission and no queueing \
         ({growth_text}): it sent as ACKs returned, exactly what they freed. A congestion \
         window keeps growing without loss, so its send buffer held the data (Linux doubles \
         SO_SNDBUF and setting it turns autotuning off; a proxy's fixed buffer does the \
         same). Shares of the transfer: {shares}. Ceiling: {per} B per {rtt} RTT = {ceil}; \
         the transfer averaged {avg} ({b} B in {span}). Without the limit the {b} B would \
         have taken ≈ {alt} (a window doubling each RTT from 10 segments: the path's \
         capacity cannot be measured while the buffer holds the rate below it), so it cost \
         ≈ {cost}. Judged by the wire alone{where_}: tcp_info's sndbuf_limited (ss) on \
         the {tx} would confirm it, though some kernels (6.18) leave it at 0.",
        tx = r.sender,
        rx = r.receiver,
        per = thousands(per_rtt),
        n = run.rounds,
        lo = thousands(run.min),
        hi = thousands(run.max),
        win = thousands(d.max_window),
        shares = shares_text(l),
        rtt = ms(rtt),
        ceil = rate(per_rtt as f64 / (rtt as f64 / 1e9)),
        avg = rate(avg),
        b = thousands(bytes),
        span = ms(span),
        alt = ms(alt),
        cost = ms(cost),
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
                "an RTT of the plateau starts: {} B of the {}'s data in it",
                thousands(b),
                r.sender
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
