//! `network.bufferbloat`: a bottleneck with a deep queue. The sender's window grows past
//! the path's bandwidth-delay product, the excess waits in the bottleneck's buffer, and
//! the RTT rises with the data in flight while throughput stays at the bottleneck rate
//! (mechanisms.md "network.bufferbloat and bandwidth limits").
//!
//! Mechanism: loss-based congestion control (Reno, CUBIC: RFC 5681, RFC 9438) grows cwnd
//! until a packet is dropped; a FIFO of N packets at a slower link holds up to N packets
//! before the first drop, so each one adds (packet size / link rate) of delay to every
//! packet behind it. The throughput cannot exceed the link rate; the extra window only
//! adds delay (Gettys & Nichols, "Bufferbloat", CACM 2012; RFC 7567 §2).
//!
//! Signature: full-path RTT samples of one direction's data that rise from their minimum
//! as the bytes in flight grow (Pearson correlation ≥ [`MIN_CORRELATION`]), with p95 at
//! least [`MIN_RTT_RATIO`] × the minimum and [`MIN_QUEUE_DELAY_NS`] above it; by Little's
//! law the delivery rate (flight / RTT) stays at the bottleneck rate. The queue must
//! stand: no sample within [`MIN_STANDING_NS`] (CoDel's interval, or one RTT if longer)
//! comes back below the minimum + [`STANDING_TARGET_NS`] (CoDel's target); a slow-start burst that a
//! buffer holds for a few milliseconds and drains is the buffer doing its job (RFC 8289
//! §1 "good queue"), and the sender's smoothed RTT (tcp_rtt_estimator) barely moves.
//! - At the sender: data → the ACK covering it (the tracker's `ack_rtt`; Karn's rule) is
//!   the full RTT; bytes in flight are exact (highest sequence sent − highest ACK), taken
//!   when the sampled segment was sent: the data ahead of it is the queue it waited in
//!   (Little's law). Left out: ACKs that cover a repair (the segments behind a hole wait
//!   for it; Linux takes no RTT from them either, `tcp_ack_update_rtt`), and an ACK of
//!   everything sent after a silence of the receiver that leaves less than CoDel's target
//!   of the sample's excess over the least RTT (a receiver holding its ACKs — a slow
//!   reader's full buffer, the delayed-ACK timer — not a queue, whose ACKs keep coming
//!   while it drains).
//! - At the receiver: data → ACK is only the receiver's own ACK delay and says nothing of
//!   the queue. The full RTT is the receiver's ACK → the sender's data echoing its TSval
//!   (RFC 7323), taken only mid-transfer (not a request → response gap, which holds
//!   server time) and only for echoed pure ACKs; flight is estimated as the data that
//!   arrived during that round trip (sent before the ACK reached the sender), repairs
//!   included: in a recovery the retransmissions fill holes below the highest sequence
//!   and wait in the same queue (sweep s37-000 at the client, Reno into an 80-packet FIFO
//!   at 6 Mbit/s: by the highest sequence the flight fell to 32 KB at 164 ms, correlation
//!   0.58; by the bytes that arrived, 117 KB, 0.99). Without
//!   timestamps the receiver's vantage cannot see the queue: no finding. Confidence is
//!   one step lower than at the sender.
//! - In the middle (or unknown): neither sample is the full RTT; no finding.
//!
//! Bottleneck rate: the data acknowledged (sender) or received (receiver) between the
//! first and the last sample taken with a standing queue (RTT above the minimum by at
//! least half the p95 excess), over that time. Queue: p95 RTT − min RTT in ms, and in
//! bytes ≈ rate × that delay. A queue that stood, however short its delay (the signature
//! without [`MIN_QUEUE_DELAY_NS`]), proves that rate is the path's capacity: other
//! detectors read it as `Connection::bottleneck` ([`Bufferbloat::bottlenecks`]), and
//! `rwnd.limited` prices its counterfactual with it.
//!
//! Cost: the queueing delay a request sent on this connection during the transfer would
//! have waited beyond the path's minimum RTT — the mean of (RTT − min RTT) over the
//! samples (ACK-clocked samples are evenly spread in time at a steady rate). It is a
//! latency cost, paid once by anything sent during the transfer on this connection (an
//! HTTP/2 request behind a download, an interactive message, the transfer's own FIN) and
//! by every other flow through the same bottleneck; the bulk transfer itself ran at the
//! bottleneck rate and would not have finished sooner.
//!
//! Fix: AQM at the bottleneck (fq_codel or cake, RFC 8290: the standing queue stays near
//! 5 ms); BBR on the sender (it paces at the measured bottleneck rate and drains the
//! queue it builds); smaller buffers at the bottleneck (qdisc limit / txqueuelen near the
//! BDP) and, on the sender's own host, TSQ (`net.ipv4.tcp_limit_output_bytes`) and fq.
//!
//! Known false positives: a path whose RTT changes for other reasons (route change,
//! Wi-Fi retries) does not correlate with flight; delayed ACKs add up to the receiver's
//! ACK timer to a few samples, which moves p95 little and the correlation not at all; a
//! receiver-limited sender (rwnd) keeps flight flat, so the RTT stays flat too.

use crate::detector::{
    emptied_deque, emptied_vec, ms, Connection, Detector, Reusable, Seat, Segment, Slots,
};
use crate::finding::{Confidence, Finding, FindingId, Fix, Host};
use std::collections::VecDeque;
use tcpwhy_capture::Timestamp;
use tcpwhy_track::{SegmentKinds, Side};

use crate::catalogue::Entry;

/// `network.bufferbloat` in the catalogue (crate::catalogue).
pub const BUFFERBLOAT: Entry = Entry {
    id: "network.bufferbloat",
    title: "bufferbloat",
    meaning: "RTT rising with the bytes in flight: a deep queue at a bottleneck",
    fix_goes_to: "AQM (fq_codel, cake), BBR",
    part_of: None,
    decided_by: None,
    judge: None,
};

/// RTT samples needed per direction: fewer cannot show a trend.
pub const MIN_SAMPLES: usize = 20;
/// p95 RTT at least this many times the minimum: a queue as deep as the path is long.
pub const MIN_RTT_RATIO: f64 = 2.0;
/// And at least this much above it: below, the delay is too small to matter to a user
/// and within what scheduling and delayed ACKs add on a LAN.
pub const MIN_QUEUE_DELAY_NS: u64 = 20_000_000;
/// Pearson correlation of RTT with bytes in flight: the RTT rises *because* the flight
/// does (deep-queue lab capture: 0.9+; a path whose RTT changes on its own: near 0).
pub const MIN_CORRELATION: f64 = 0.7;
/// A standing queue outlives a burst: every sample at least [`STANDING_TARGET_NS`] above
/// the minimum for this long (or one minimum RTT, if longer). CoDel's interval (RFC 8289
/// §4.2, 100 ms): a queue whose delay drops below target within it was a burst the buffer
/// absorbed ("good queue", §1), not bufferbloat. Sweep s1-015-control (5 ms RTT, no
/// shaping): the slow-start burst of the last 2 MB waited up to 41 ms in the emulator for
/// 25 ms at the end of a 118 ms transfer while the sender's srtt (tcp_rtt_estimator)
/// never passed 12.6 ms; lab deep-queue stood at 100+ ms of queueing for seconds.
pub const MIN_STANDING_NS: u64 = 100_000_000;
/// CoDel's target (RFC 8289 §4.3, 5 ms): queueing delay below it is no standing queue.
pub const STANDING_TARGET_NS: u64 = 5_000_000;
/// Correlation from which, at the sender, confidence is high.
const HIGH_CORRELATION: f64 = 0.9;
/// Data segments remembered per direction with their flight (16 bytes each): a segment
/// acknowledged after more than this many others were sent takes the flight at its ACK
/// (a queue of thousands of packets).
const MAX_SENT: usize = 4096;
/// Samples kept per direction and view (40 bytes each); past it every second one is
/// dropped and the stride doubles, so a long transfer is still covered from start to end
/// (enough for a p95 and a correlation).
const MAX_SAMPLES: usize = 1024;
/// The receiver's recent pure ACKs remembered (to price a timestamp echo's flight).
const MAX_ACKS: usize = 4096;

/// One full-RTT sample of a direction's data.
#[derive(Copy, Clone, Debug)]
struct Sample {
    frame: u64,
    ts: Timestamp,
    rtt_ns: u64,
    flight: u64,
    /// Data of the direction delivered so far (ACKed at the sender, received at the
    /// receiver), relative sequence number.
    delivered: u64,
}

/// A bounded, evenly thinned series of samples.
#[derive(Default)]
struct Series {
    v: Vec<Sample>,
    stride: u64,
    /// Samples offered, kept or not.
    seen: u64,
    /// The smallest RTT of all, kept exactly (the thinning could drop it).
    min: Option<Sample>,
}

impl Series {
    fn push(&mut self, s: Sample) {
        let stride = self.stride.max(1);
        self.seen += 1;
        if self.min.is_none_or(|m| s.rtt_ns < m.rtt_ns) {
            self.min = Some(s);
        }
        // `stride` is a power of two (1, doubled): the remainder is a mask, not a 64-bit
        // division per RTT sample.
        if (self.seen - 1) & (stride - 1) != 0 {
            return;
        }
        if self.v.len() >= MAX_SAMPLES {
            let mut i = 0;
            self.v.retain(|_| {
                i += 1;
                i % 2 == 1
            });
            self.stride = stride * 2;
        }
        self.v.push(s);
    }
}

/// One direction of data (`[client → server, server → client]`).
#[derive(Default)]
struct Dir {
    /// Samples valid if the capture is at this direction's sender.
    at_sender: Series,
    /// Samples valid if the capture is at its receiver.
    at_receiver: Series,
    in_flight: u64,
    /// Recent data segments of this direction: frame and the bytes in flight once it was
    /// sent, oldest first, at most [`MAX_SENT`].
    sent: VecDeque<(u64, u64)>,
    /// When the peer's last ACK of this data was seen.
    last_peer_ack: Option<Timestamp>,
    /// Retransmitted data not yet all acknowledged: from the lowest start to the highest
    /// end (relative).
    repairs: Option<(u64, u64)>,
    /// Highest ACK of this data by the peer (relative).
    acked: u64,
    /// Highest end of this data seen (relative).
    received: u64,
    /// Payload bytes of this direction seen, repairs included: what passed through the
    /// path's queue, which the highest end does not count while holes are filled.
    arrived: u64,
    /// This direction sent data after the peer's last data: mid-transfer.
    mid_transfer: bool,
    /// The peer's recent pure ACKs, the first of each TSval: TSval, time, and
    /// `arrived` of this data at that moment.
    peer_acks: VecDeque<(u32, Timestamp, u64)>,
    /// The TSecr of the last sample taken at the receiver (one sample per echo).
    last_echo: Option<u32>,
}

#[derive(Default)]
struct Conn {
    dirs: [Dir; 2],
    /// Each direction's queue at the connection's vantage, once measured
    /// ([`Bufferbloat::bottlenecks`] measures it before the detectors judge the
    /// connection, and this detector's own finding reads it).
    queues: Option<[Option<Queue>; 2]>,
}

impl Reusable for Conn {
    fn empty(&mut self) {
        // Every field named: one added is a compile error here until it is reset.
        let Conn { dirs, queues } = self;
        *queues = None;
        for d in dirs {
            *d = Dir {
                at_sender: Series {
                    v: emptied_vec(&mut d.at_sender.v),
                    ..Series::default()
                },
                at_receiver: Series {
                    v: emptied_vec(&mut d.at_receiver.v),
                    ..Series::default()
                },
                peer_acks: emptied_deque(&mut d.peer_acks),
                sent: emptied_deque(&mut d.sent),
                ..Dir::default()
            };
        }
    }
}

#[derive(Default)]
pub struct Bufferbloat {
    conns: Slots<Conn>,
}

impl Detector for Bufferbloat {
    // Judges, and gives as a bottleneck, queues measured on ACKs of data.
    const JUDGES_DATALESS: bool = false;

    // Inlined into the registry's one call per segment (detectors/mod.rs).
    #[inline(always)]
    fn on_segment(&mut self, seg: &Segment<'_>) {
        let ev = seg.ev;
        if ev.kinds.has(SegmentKinds::CAPTURE_DUPLICATE) {
            return;
        }
        let c = self.conns.get_or_default(seg);
        let (me, peer) = (ev.sender(), ev.receiver());
        // As the ACK of the peer's data: a sample at the peer-sender's vantage.
        if let Some(ack) = ev.rel_ack {
            let d = &mut c.dirs[peer];
            d.acked = d.acked.max(ack);
            let silent_ns = d.last_peer_ack.map(|t| seg.ts.elapsed_since(t));
            d.last_peer_ack = Some(seg.ts);
            // An ACK that covers a repair was timed by the repair, for every segment it
            // covers: segments sent behind the hole wait for it, not for a queue (Linux
            // takes no RTT from such an ACK without timestamps: tcp_ack_update_rtt,
            // Karn's rule). Sweep s27-048 at the server: samples of 125 ms in the
            // recovery behind a 106-packet FIFO that holds 53 ms at 22.9 Mbit/s.
            let repaired = d.repairs.is_some_and(|(lo, _)| ack > lo);
            if let Some((_, hi)) = d.repairs {
                d.repairs = (ack < hi).then_some((ack, hi));
            }
            if let (Some((data_frame, ns)), false) = (ev.ack_rtt, repaired) {
                // A queue drains continuously, and its ACKs come back spread at its rate
                // while the rest waits: an ACK of everything sent, after a silence of the
                // receiver at least as long as the sample's excess over the least RTT,
                // may owe all that excess to the receiver holding it (a slow reader ACKing
                // a window per read: sweep s19-061, one ACK of all in flight every 67 ms
                // at 27 ms RTT), not to a queue (deep-queue: ACKs every 2.4 ms at 190 ms
                // of queue, each of a segment or two with the rest still queued).
                // The receiver's previous ACK did not cover the sampled segment, so it left
                // before that segment arrived, and the hold is at most the silence; what
                // the excess has beyond it is a queue only above CoDel's target (an excess
                // under it is no queue either way). Sweep s68-061 at the server: a reader
                // of 6 KB per 98 ms, a 49.0 ms sample on a 6.3 ms path after 42.6 ms of
                // silence, the path's own jitter making up the 0.08 ms left.
                let excess = d.at_sender.min.map(|m| ns.saturating_sub(m.rtt_ns));
                let receiver_timed = ack >= d.received
                    && excess.zip(silent_ns).is_some_and(|(e, gap)| {
                        e >= STANDING_TARGET_NS && gap.saturating_add(STANDING_TARGET_NS) >= e
                    });
                // The queue the sampled segment waited in is the data ahead of it when it
                // was sent (Little's law), not the flight when its ACK came back: in
                // slow start the flight has doubled by then, and in a recovery it holds
                // the SACKed data above the holes (sweep s27-048 at the server: 0.67
                // correlation with the flight at the ACK, 0.82 with the flight at the
                // send, over 733 samples behind a 106-packet FIFO).
                // Samples come in the order their segments were sent (a later ACK covers
                // later data; repairs give none): what was sent before is done with.
                while d.sent.front().is_some_and(|&(f, _)| f < data_frame) {
                    d.sent.pop_front();
                }
                let flight = match d.sent.front() {
                    Some(&(f, flight)) if f == data_frame => flight,
                    _ => d.in_flight,
                };
                if !receiver_timed {
                    d.at_sender.push(Sample {
                        frame: seg.frame,
                        ts: seg.ts,
                        rtt_ns: ns,
                        flight,
                        delivered: d.acked,
                    });
                }
            }
            if let (0, Some((tsval, _))) = (ev.payload_len, seg.pkt.options.timestamps) {
                if d.peer_acks.back().is_none_or(|a| a.0 != tsval) {
                    if d.peer_acks.len() >= MAX_ACKS {
                        d.peer_acks.pop_front();
                    }
                    let arrived = d.arrived;
                    d.peer_acks.push_back((tsval, seg.ts, arrived));
                }
            }
        }
        if ev.payload_len == 0 {
            return;
        }
        c.dirs[peer].mid_transfer = false;
        let d = &mut c.dirs[me];
        if ev.kinds.has(SegmentKinds::RETRANSMISSION) {
            let end = ev.rel_seq.saturating_add(u64::from(ev.payload_len));
            d.repairs = Some(d.repairs.map_or((ev.rel_seq, end), |(lo, hi)| {
                (lo.min(ev.rel_seq), hi.max(end))
            }));
        }
        if let Some(f) = ev.in_flight {
            d.in_flight = f;
            if d.sent.len() >= MAX_SENT {
                d.sent.pop_front();
            }
            d.sent.push_back((seg.frame, f));
        }
        let end = ev.rel_seq.saturating_add(u64::from(ev.payload_len));
        d.received = d.received.max(end);
        d.arrived = d.arrived.saturating_add(u64::from(ev.payload_len));
        // As data echoing the peer's pure ACK mid-transfer: a full RTT at the receiver.
        // Matched here rather than with the tracker's `ts_rtt`, whose 64-TSval history is
        // shorter than a bloated RTT (deep-queue client.pcap: samples stopped at 139 ms).
        let echo = seg.pkt.options.timestamps.map(|t| t.1);
        if let (true, Some(e)) = (d.mid_transfer, echo) {
            if d.last_echo != Some(e) {
                d.last_echo = Some(e);
                // Echoes only move forward: ACKs older than this one will not be echoed.
                while d
                    .peer_acks
                    .front()
                    .is_some_and(|a| a.0 != e && (e.wrapping_sub(a.0) as i32) > 0)
                {
                    d.peer_acks.pop_front();
                }
                if let Some(&(_, ack_ts, before)) = d.peer_acks.iter().find(|a| a.0 == e) {
                    let s = Sample {
                        frame: seg.frame,
                        ts: seg.ts,
                        rtt_ns: seg.ts.elapsed_since(ack_ts),
                        flight: d.arrived.saturating_sub(before),
                        delivered: d.received,
                    };
                    d.at_receiver.push(s);
                }
            }
        }
        d.mid_transfer = true;
    }

    fn on_connection(&mut self, conn: &Connection<'_>, out: &mut Vec<Finding>) {
        let Some(st) = self.conns.take_reusing(conn) else {
            return;
        };
        let queues = st.queues.unwrap_or_else(|| measure(conn, &st));
        for (i, d) in st.dirs.iter().enumerate() {
            let (Some((series, at_sender)), Some(q)) = (view(conn, i, d), queues[i]) else {
                continue;
            };
            if let Some(f) = finding(conn, i, series, at_sender, &q) {
                out.push(f);
            }
        }
    }

    /// Nothing is kept across connections: each one's state is dropped in `on_connection`.
    fn absorb(&mut self, _other: Self) {}
}

impl Bufferbloat {
    /// Per direction (`[client → server, server → client]`), the bottleneck that a
    /// standing queue proves at the connection's vantage (`capacity`), for the
    /// detectors whose counterfactual the path's capacity bounds:
    /// "without the receiver's window" the data could not have gone faster than the
    /// bottleneck it already queued at (`windows`). Called for a finalised connection
    /// before the detectors judge it; what it measures is kept for this detector's own
    /// finding.
    pub fn bottlenecks(&mut self, conn: &Connection<'_>) -> [Option<Bottleneck>; 2] {
        let Some(st) = self.conns.get_mut(conn) else {
            return [None; 2];
        };
        let queues = st.queues.unwrap_or_else(|| measure(conn, st));
        st.queues = Some(queues);
        queues.map(|q| {
            let q = q?;
            capacity(&q).map(|rate| Bottleneck {
                rate,
                min_rtt_ns: q.min_rtt_ns,
                median_rtt_ns: q.median_rtt_ns,
            })
        })
    }
}

/// A bottleneck proven by a standing queue (`capacity`): while the queue stood the
/// link never idled, so what it delivered is its capacity.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Bottleneck {
    /// Payload bytes per second delivered while the queue stood
    /// ([`Queue::standing_rate`]).
    pub rate: f64,
    /// The path's RTT without the queue.
    pub min_rtt_ns: u64,
    /// The median RTT of the samples, the queue included.
    pub median_rtt_ns: u64,
}

/// The series of direction `dir` that holds full-path RTTs at the connection's vantage, and whether
/// that is the direction's sender; none in the middle or at an unknown vantage.
fn view<'d>(conn: &Connection<'_>, dir: usize, d: &'d Dir) -> Option<(&'d Series, bool)> {
    match conn.seat(Side::from_index(dir)) {
        Seat::Sender => Some((&d.at_sender, true)),
        Seat::Receiver => Some((&d.at_receiver, false)),
        Seat::Elsewhere => None,
    }
}

/// Each direction's queue at the connection's vantage.
fn measure(conn: &Connection<'_>, c: &Conn) -> [Option<Queue>; 2] {
    [0, 1].map(|i| {
        let (series, _) = view(conn, i, &c.dirs[i])?;
        queue(&series.v, series.min.map(|m| m.rtt_ns), conn.rtt_ns)
    })
}

/// What the samples of one direction show.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Queue {
    pub min_rtt_ns: u64,
    pub median_rtt_ns: u64,
    pub p95_rtt_ns: u64,
    pub correlation: f64,
    /// Bytes per second while the queue stood.
    pub rate: f64,
    pub mean_extra_ns: u64,
    /// The longest time the RTT stayed at least [`STANDING_TARGET_NS`] above the
    /// minimum without a sample below (first to last sample of the run).
    pub standing_ns: u64,
    /// Bytes per second delivered over that run: the bottleneck's capacity, the link
    /// never idling while its queue stood.
    pub standing_rate: f64,
}

/// Pearson correlation of two series (0 when either is constant).
fn pearson(xs: &[f64], ys: &[f64]) -> f64 {
    let n = xs.len().min(ys.len());
    if n < 2 {
        return 0.0;
    }
    let (mx, my) = (
        xs.iter().sum::<f64>() / n as f64,
        ys.iter().sum::<f64>() / n as f64,
    );
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (x, y) in xs.iter().zip(ys) {
        sxy += (x - mx) * (y - my);
        sxx += (x - mx) * (x - mx);
        syy += (y - my) * (y - my);
    }
    if sxx <= 0.0 || syy <= 0.0 {
        return 0.0;
    }
    sxy / (sxx.sqrt() * syy.sqrt())
}

fn queue(samples: &[Sample], exact_min: Option<u64>, baseline: Option<u64>) -> Option<Queue> {
    if samples.len() < MIN_SAMPLES {
        return None;
    }
    let mut rtts: Vec<u64> = samples.iter().map(|s| s.rtt_ns).collect();
    rtts.sort_unstable();
    let sample_min = exact_min.unwrap_or(rtts[0]).min(rtts[0]);
    // The handshake saw the path before any queue: a lower bound when it is lower.
    let min = baseline
        .filter(|&b| b > 0)
        .map_or(sample_min, |b| b.min(sample_min));
    let p95 = rtts[(rtts.len() * 95 / 100).min(rtts.len() - 1)];
    let median = rtts[rtts.len() / 2];
    let xs: Vec<f64> = samples.iter().map(|s| s.flight as f64).collect();
    let ys: Vec<f64> = samples.iter().map(|s| s.rtt_ns as f64).collect();
    let correlation = pearson(&xs, &ys);
    let extra = p95.saturating_sub(min);
    let standing = min + extra / 2;
    let queued: Vec<&Sample> = samples.iter().filter(|s| s.rtt_ns >= standing).collect();
    let rate = match (queued.first(), queued.last()) {
        (Some(a), Some(b)) if b.ts > a.ts => {
            b.delivered.saturating_sub(a.delivered) as f64 / (b.ts.since(a.ts) as f64 / 1e9)
        }
        _ => 0.0,
    };
    let mean_extra_ns = samples
        .iter()
        .map(|s| s.rtt_ns.saturating_sub(min))
        .sum::<u64>()
        / samples.len() as u64;
    // The samples are in time order: the longest run above the queueing floor.
    let floor = min.saturating_add(STANDING_TARGET_NS);
    let (mut standing_ns, mut standing_rate) = (0u64, 0.0);
    let mut run_start: Option<&Sample> = None;
    for s in samples {
        if s.rtt_ns < floor {
            run_start = None;
            continue;
        }
        let start = *run_start.get_or_insert(s);
        let run = s.ts.elapsed_since(start.ts);
        if run > standing_ns {
            standing_ns = run;
            standing_rate = s.delivered.saturating_sub(start.delivered) as f64 / (run as f64 / 1e9);
        }
    }
    Some(Queue {
        min_rtt_ns: min,
        median_rtt_ns: median,
        p95_rtt_ns: p95,
        correlation,
        rate,
        mean_extra_ns,
        standing_ns,
        standing_rate,
    })
}

/// The signature (module doc): a queue as deep as the path is long, growing with the
/// flight, at a steady delivery rate, and standing, not a burst absorbed; and long
/// enough to matter to a user.
fn bloated(q: &Queue) -> bool {
    let extra = q.p95_rtt_ns.saturating_sub(q.min_rtt_ns);
    extra >= MIN_QUEUE_DELAY_NS && stood(q)
}

/// A queue as deep as the path is long, growing with the flight and standing for
/// CoDel's interval: not a burst the buffer absorbed.
fn stood(q: &Queue) -> bool {
    queue_grew(q) && q.rate > 0.0 && q.standing_ns >= MIN_STANDING_NS.max(q.min_rtt_ns)
}

/// A queue as deep as the path is long, growing with the flight: the RTT rose because
/// the data in flight did.
fn queue_grew(q: &Queue) -> bool {
    (q.p95_rtt_ns as f64) >= MIN_RTT_RATIO * q.min_rtt_ns as f64 && q.correlation >= MIN_CORRELATION
}

/// The bottleneck's capacity, when the samples measured it: a queue that grew with the
/// flight ([`queue_grew`]) and stood above CoDel's target for at least a round trip at
/// its median RTT, so that a whole window's worth of the ACK clock passed the link while
/// it never idled; what it delivered over that run is its rate, however short the
/// queue's delay or the transfer (sweep s44-040: 1.2 ms of path, 20 ms of queue at p95
/// for 1.1 s, 1,793 kB/s, the 15 Mbit/s link's payload rate; s48-056: 88 ms at 50
/// Mbit/s). Whether the queue did harm is [`bloated`]'s question, not this one's.
fn capacity(q: &Queue) -> Option<f64> {
    (queue_grew(q) && q.standing_ns >= q.median_rtt_ns && q.standing_rate > 0.0)
        .then_some(q.standing_rate)
}

fn kb(bytes: f64) -> String {
    if bytes >= 1e6 {
        format!("{:.2} MB", bytes / 1e6)
    } else {
        format!("{:.0} KB", bytes / 1e3)
    }
}

fn finding(
    conn: &Connection<'_>,
    dir: usize,
    series: &Series,
    at_sender: bool,
    q: &Queue,
) -> Option<Finding> {
    let samples = &series.v[..];
    if !bloated(q) {
        return None;
    }
    let extra = q.p95_rtt_ns.saturating_sub(q.min_rtt_ns);
    let queue_bytes = q.rate * extra as f64 / 1e9;
    let (sender, receiver) = (Side::from_index(dir), Side::from_index(dir).peer());
    let ends = conn.summary.endpoints;
    let mut f = conn.finding(FindingId::NetworkBufferbloat);
    f.cost_ns = q.mean_extra_ns;
    f.share = Some(f.cost_ns as f64 / conn.active_ns().max(1) as f64);

    let first = series.min.as_ref()?;
    let standing = q.min_rtt_ns + extra / 2;
    let rising = samples.iter().find(|s| s.rtt_ns >= standing);
    let top = samples
        .iter()
        .filter(|s| s.rtt_ns >= q.p95_rtt_ns)
        .min_by_key(|s| s.frame)?;
    let what = if at_sender {
        "data → ACK"
    } else {
        "ACK → data echoing it"
    };
    let flight_word = if at_sender {
        "in flight"
    } else {
        "in flight (estimated: arrived during that round trip)"
    };
    f.cite(
        first.frame,
        first.ts,
        format!(
            "RTT {} ({what}) with {} {flight_word}: the path without a queue",
            ms(first.rtt_ns),
            kb(first.flight as f64)
        ),
    );
    if let Some(r) = rising.filter(|r| r.frame != top.frame && r.frame != first.frame) {
        f.cite(
            r.frame,
            r.ts,
            format!(
                "RTT {} with {} {flight_word}: a queue builds",
                ms(r.rtt_ns),
                kb(r.flight as f64)
            ),
        );
    }
    f.cite(
        top.frame,
        top.ts,
        format!(
            "RTT {} with {} {flight_word}: {} of queueing",
            ms(top.rtt_ns),
            kb(top.flight as f64),
            ms(top.rtt_ns.saturating_sub(q.min_rtt_ns))
        ),
    );
    let vantage_note = if at_sender {
        String::new()
    } else {
        " (Seen from the receiver: the RTT is its ACK → the sender's data echoing that \
         ACK's timestamp, and the flight is estimated from the data that arrived meanwhile.)"
            .to_string()
    };
    f.explanation = format!(
        "A deep queue at a bottleneck between {} and {}: as the data in flight grew from {} \
         to {}, the RTT rose from {} to {} at p95 (median {}; correlation with the flight \
         {:.2} over {} samples) while the delivery rate stayed at ≈ {}/s ({:.1} Mbit/s of payload): the \
         extra window waited in a buffer instead of going faster. At p95 the queue held ≈ {} \
         ({} of delay). Cost: anything sent on this connection during the transfer — a \
         request, a message, an ACK of the other direction — waited {} on average beyond \
         the path's {} minimum, and so did every other flow through that bottleneck; the \
         transfer itself ran at the bottleneck rate.{vantage_note}",
        ends[sender],
        ends[receiver],
        kb(first.flight as f64),
        kb(top.flight as f64),
        ms(q.min_rtt_ns),
        ms(q.p95_rtt_ns),
        ms(q.median_rtt_ns),
        q.correlation,
        series.seen,
        kb(q.rate),
        q.rate * 8.0 / 1e6,
        kb(queue_bytes),
        ms(extra),
        ms(q.mean_extra_ns),
        ms(q.min_rtt_ns),
    );
    let sender_host = if sender == Side::Client {
        Host::Client
    } else {
        Host::Server
    };
    let bdp = q.rate * q.min_rtt_ns as f64 / 1e9;
    f.fix = vec![
        Fix {
            host: Host::Both,
            action: format!(
                "at the bottleneck (the link of ≈ {:.1} Mbit/s: a router, modem or shaper): \
                 AQM, e.g. tc qdisc replace dev DEV root cake bandwidth {:.0}mbit (or \
                 fq_codel), which keeps the standing queue near 5 ms",
                q.rate * 8.0 / 1e6,
                (q.rate * 8.0 / 1e6).max(1.0)
            ),
        },
        Fix {
            host: sender_host,
            action: "use BBR on the sender (sysctl -w net.ipv4.tcp_congestion_control=bbr, \
                     with the fq qdisc): it paces at the bottleneck rate and drains the queue \
                     it builds"
                .into(),
        },
        Fix {
            host: Host::Both,
            action: format!(
                "smaller buffers: the bottleneck's queue near one BDP (≈ {} here, not {}); \
                 on the sender's host keep TSQ (net.ipv4.tcp_limit_output_bytes) and fq so \
                 its own queues stay short",
                kb(bdp),
                kb(queue_bytes)
            ),
        },
    ];
    f.confidence = match (at_sender, q.correlation >= HIGH_CORRELATION) {
        (true, true) => Confidence::High,
        (true, false) | (false, true) => Confidence::Medium,
        (false, false) => Confidence::Low,
    };
    Some(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pearson_of_a_line_is_one() {
        let xs = [1.0, 2.0, 3.0, 4.0];
        assert!((pearson(&xs, &[2.0, 4.0, 6.0, 8.0]) - 1.0).abs() < 1e-9);
        assert_eq!(pearson(&xs, &[5.0; 4]), 0.0);
    }

    /// A queue filling at 1 MB/s: flight 25 KB → 225 KB, RTT 25 → 225 ms.
    #[test]
    fn a_growing_queue_is_measured() {
        let s: Vec<Sample> = (0..40u64)
            .map(|i| {
                let rtt_ms = 25 + 5 * i;
                Sample {
                    frame: i,
                    ts: Timestamp((i * 50_000_000) as i64),
                    rtt_ns: rtt_ms * 1_000_000,
                    flight: rtt_ms * 1000,
                    delivered: i * 50_000,
                }
            })
            .collect();
        let q = queue(&s, None, None).unwrap();
        assert_eq!(q.min_rtt_ns, 25_000_000);
        assert!(q.correlation > 0.99);
        assert!((q.rate - 1e6).abs() < 1.0);
        // From sample 1 (30 ms ≥ 25 + 5) to sample 39: 38 × 50 ms.
        assert_eq!(q.standing_ns, 1_900_000_000);
        assert!(bloated(&q));
    }

    /// Sweep s44-040's shape at the client: a 1.2 ms path, the echoes rising to 21 ms as
    /// the flight fills a 15 Mbit/s FIFO, standing for a second at 1,793 kB/s. Too short
    /// a queue to name (under 20 ms above the path), but it measured the link; the same
    /// RTTs without the flight behind them (a path whose RTT stepped up) measure nothing.
    #[test]
    fn a_short_standing_queue_measures_the_bottleneck() {
        let s: Vec<Sample> = (0..200u64)
            .map(|i| {
                // 1.2 ms, then 20 ms from the 10th sample on (5 ms apart).
                let rtt_us = if i < 10 {
                    1200 + 1880 * i
                } else {
                    20_000 + i % 3 * 500
                };
                Sample {
                    frame: i,
                    ts: Timestamp((i * 5_000_000) as i64),
                    rtt_ns: rtt_us * 1000,
                    flight: rtt_us * 1793 / 1000,
                    delivered: i * 8965,
                }
            })
            .collect();
        let q = queue(&s, None, None).unwrap();
        assert!(!bloated(&q), "{q:?}");
        let rate = capacity(&q).unwrap();
        assert!((rate - 1.793e6).abs() < 1.0, "{rate}");
        let flat: Vec<Sample> = s
            .iter()
            .map(|x| Sample {
                flight: 30_000,
                ..*x
            })
            .collect();
        assert_eq!(capacity(&queue(&flat, None, None).unwrap()), None);
    }

    /// Sweep s1-015-control (receiver, 5 ms RTT, no shaping): slow start's RTT rises
    /// with the flight, 5 → 14 ms over 70 ms, then the last burst waits 30–41 ms for
    /// 25 ms and the transfer ends. Deep, correlated, but it never stood: no finding.
    #[test]
    fn a_burst_absorbed_at_the_end_is_no_bufferbloat() {
        let mut s: Vec<Sample> = Vec::new();
        let mut push = |i: u64, t_us: u64, rtt_us: u64, flight: u64| {
            s.push(Sample {
                frame: i,
                ts: Timestamp((t_us * 1000) as i64),
                rtt_ns: rtt_us * 1000,
                flight,
                delivered: i * 30_000,
            });
        };
        // 70 samples, one a millisecond: RTT 5.0 → 13.6 ms, flight 85 KB → 1.2 MB.
        for i in 0..70u64 {
            push(i, 10_000 + i * 1000, 5000 + i * 125, 85_000 + i * 16_000);
        }
        // The burst: 26 samples, one a millisecond, RTT 30 → 42.5 ms, flight ≈ 1.6 MB.
        for i in 0..26u64 {
            push(
                70 + i,
                90_000 + i * 1000,
                30_000 + i * 500,
                1_600_000 + i * 2000,
            );
        }
        let q = queue(&s, None, None).unwrap();
        assert_eq!(q.min_rtt_ns, 5_000_000);
        assert!(q.correlation >= MIN_CORRELATION, "{}", q.correlation);
        assert!(q.p95_rtt_ns >= 25_000_000 + q.min_rtt_ns);
        // ≥ 10 ms from 50 ms (sample 40: 5 + 40 × 0.125) to 115 ms (sample 95).
        assert_eq!(q.standing_ns, 65_000_000);
        assert!(!bloated(&q));
    }
}
