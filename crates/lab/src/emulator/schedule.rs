//! The emulator's decisions, with no I/O: given each packet's arrival time and summary, say
//! whether it is dropped, and when a held packet is due for release. The I/O loop in
//! `emulator.rs` feeds it arrivals from NFQUEUE and issues the verdicts it returns; the
//! tests below feed it traces.
//!
//! Times are integer microseconds since the emulator started (`_us`), config values are
//! milliseconds (`_ms`, converted once by [`ms_to_us`]).

use super::config::{DirectionConfig, PathConfig};
use super::packet::TcpSummary;
use serde::Serialize;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

/// Which way a packet travels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Dir {
    ToServer,
    ToClient,
}

impl Dir {
    fn index(self) -> usize {
        match self {
            Dir::ToServer => 0,
            Dir::ToClient => 1,
        }
    }
}

/// The rule that decided a packet's fate (the log's `rule` field).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Rule {
    /// Held for the direction's base delay (± jitter), in order.
    Delay,
    /// Dropped by the random `loss` draw.
    Loss,
    /// Dropped because its data index is in `drop_data`.
    DropData,
    /// Dropped as one of the first `drop_syn` SYNs.
    DropSyn,
    /// Dropped as the last data packet of a chosen burst.
    DropTail,
    /// Released later than its in-order time by `reorder` or `reorder_every`.
    Reorder,
    /// Held for the new delay of `delay_change`.
    DelayChange,
    /// Accepted early because the emulator was stopped.
    Shutdown,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Accept,
    Drop,
}

/// One packet's fate: everything the log line says about it, plus the caller's token (the
/// NFQUEUE message) to issue the verdict on.
#[derive(Debug)]
pub struct Outcome<T> {
    pub token: T,
    /// Arrival number over both directions, from 1.
    pub id: u64,
    pub dir: Dir,
    pub pkt: TcpSummary,
    pub arrival_us: u64,
    pub verdict: Verdict,
    /// When the verdict is due: the arrival for drops decided on arrival, the planned release
    /// (or drop_tail's drop) time for held packets.
    pub release_us: u64,
    pub rule: Rule,
    /// 1-based index among this direction's data packets (`drop_data`, `reorder`).
    pub data_index: Option<u64>,
    /// 1-based burst number (only when the direction has `drop_tail`).
    pub burst: Option<u64>,
}

/// Counts for the log's summary line.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Stats {
    pub packets: u64,
    pub to_server: u64,
    pub to_client: u64,
    pub accepted: u64,
    pub dropped_loss: u64,
    pub dropped_drop_data: u64,
    pub dropped_drop_syn: u64,
    pub dropped_drop_tail: u64,
    pub reordered: u64,
    pub delay_changed: u64,
    pub accepted_at_shutdown: u64,
    /// Most packets held at once.
    pub max_held: u64,
}

pub fn ms_to_us(ms: impl Into<u64>) -> u64 {
    ms.into().saturating_mul(1000)
}

/// SplitMix64 (Steele, Lea, Flood 2014): a tiny generator with good statistical quality,
/// enough for loss draws and jitter; written here so runs are reproducible across
/// dependency versions.
#[derive(Clone, Debug)]
struct SplitMix64(u64);

impl SplitMix64 {
    const GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

    /// Independent streams from one seed: stream k starts from the k-th output of the seed.
    fn stream(seed: u64, k: u64) -> SplitMix64 {
        let mut s = SplitMix64(seed.wrapping_add(k.wrapping_mul(Self::GAMMA)));
        SplitMix64(s.next_u64())
    }

    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(Self::GAMMA);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1) with 53 bits.
    fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in [−span, +span] (the modulo bias is below 2⁻⁴⁰ for spans of a minute in µs).
    fn symmetric(&mut self, span: u64) -> i64 {
        let width = span.saturating_mul(2).saturating_add(1);
        (self.next_u64() % width) as i64 - span as i64
    }
}

/// Per-direction counters and state.
#[derive(Debug)]
struct DirState {
    packets: u64,
    data_packets: u64,
    syns: u64,
    /// Release time of the last in-order packet: nothing in order leaves before it (FIFO).
    fifo_floor_us: u64,
    last_data_arrival_us: Option<u64>,
    burst: u64,
    /// The newest held data packet of a chosen drop_tail burst (still a tail candidate).
    tail_pending: Option<u64>,
    reordered_every: u64,
    loss_rng: SplitMix64,
    jitter_rng: SplitMix64,
}

impl DirState {
    fn new(seed: u64, dir: Dir) -> DirState {
        let k = dir.index() as u64 * 2;
        DirState {
            packets: 0,
            data_packets: 0,
            syns: 0,
            fifo_floor_us: 0,
            last_data_arrival_us: None,
            burst: 0,
            tail_pending: None,
            reordered_every: 0,
            loss_rng: SplitMix64::stream(seed, k),
            jitter_rng: SplitMix64::stream(seed, k + 1),
        }
    }
}

struct Held<T> {
    outcome: Outcome<T>,
    /// Still the newest data packet of a chosen burst: dropped when due.
    tail_candidate: bool,
}

/// Decides every packet's fate; `T` is what the caller needs back to issue the verdict.
pub struct Scheduler<T> {
    cfg: PathConfig,
    first_arrival_us: Option<u64>,
    next_id: u64,
    dirs: [DirState; 2],
    held: HashMap<u64, Held<T>>,
    /// (release_us, id): equal times leave in arrival order.
    due: BinaryHeap<Reverse<(u64, u64)>>,
    stats: Stats,
}

impl<T> Scheduler<T> {
    pub fn new(cfg: PathConfig) -> Scheduler<T> {
        let dirs = [
            DirState::new(cfg.seed, Dir::ToServer),
            DirState::new(cfg.seed, Dir::ToClient),
        ];
        Scheduler {
            cfg,
            first_arrival_us: None,
            next_id: 1,
            dirs,
            held: HashMap::new(),
            due: BinaryHeap::new(),
            stats: Stats::default(),
        }
    }

    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    pub fn direction_of(&self, pkt: &TcpSummary) -> Dir {
        if pkt.src == self.cfg.client {
            Dir::ToServer
        } else {
            Dir::ToClient
        }
    }

    /// A packet arrived at `now_us`. Returns its outcome at once when it is dropped on
    /// arrival; otherwise it is held and comes back from [`Scheduler::pop_due`].
    pub fn arrive(&mut self, now_us: u64, pkt: TcpSummary, token: T) -> Option<Outcome<T>> {
        let dir = self.direction_of(&pkt);
        let first_us = *self.first_arrival_us.get_or_insert(now_us);
        let id = self.next_id;
        self.next_id += 1;
        self.stats.packets += 1;
        match dir {
            Dir::ToServer => self.stats.to_server += 1,
            Dir::ToClient => self.stats.to_client += 1,
        }
        let dc: &DirectionConfig = match dir {
            Dir::ToServer => &self.cfg.to_server,
            Dir::ToClient => &self.cfg.to_client,
        };
        let d = &mut self.dirs[dir.index()];
        d.packets += 1;

        let data_index = pkt.is_data().then(|| {
            d.data_packets += 1;
            d.data_packets
        });

        // Burst bookkeeping comes first so that a data packet dropped by another rule still
        // ends the previous packet's chance of being its burst's tail.
        let mut burst = None;
        let mut tail_target = false;
        if let (Some(_), Some(tail)) = (data_index, &dc.drop_tail) {
            let gap_us = ms_to_us(tail.gap_ms);
            let same_burst = d
                .last_data_arrival_us
                .is_some_and(|t| now_us.saturating_sub(t) <= gap_us);
            if same_burst {
                if let Some(prev) = d.tail_pending.take() {
                    if let Some(h) = self.held.get_mut(&prev) {
                        h.tail_candidate = false;
                    }
                }
            } else {
                d.burst += 1;
                // The previous burst's candidate (if any) keeps its mark: it was the tail.
                d.tail_pending = None;
            }
            d.last_data_arrival_us = Some(now_us);
            burst = Some(d.burst);
            tail_target = tail.bursts.contains(&d.burst);
        }

        // Draw on every packet when loss is on, so the random pattern does not depend on
        // which packets the deterministic rules took.
        let lost = dc.loss > 0.0 && d.loss_rng.next_f64() < dc.loss;
        let is_syn = pkt.is_syn();
        if is_syn {
            d.syns += 1;
        }
        let drop_rule = if is_syn && d.syns <= u64::from(dc.drop_syn) {
            Some(Rule::DropSyn)
        } else if data_index.is_some_and(|i| dc.drop_data.contains(&i)) {
            Some(Rule::DropData)
        } else if lost {
            Some(Rule::Loss)
        } else {
            None
        };
        let mut outcome = Outcome {
            token,
            id,
            dir,
            pkt,
            arrival_us: now_us,
            verdict: Verdict::Drop,
            release_us: now_us,
            rule: Rule::Delay,
            data_index,
            burst,
        };
        if let Some(rule) = drop_rule {
            outcome.rule = rule;
            match rule {
                Rule::DropSyn => self.stats.dropped_drop_syn += 1,
                Rule::DropData => self.stats.dropped_drop_data += 1,
                _ => self.stats.dropped_loss += 1,
            }
            return Some(outcome);
        }

        let changed_delay = dc.delay_change.as_ref().and_then(|c| {
            let by_time = c
                .after_ms
                .is_some_and(|t| now_us.saturating_sub(first_us) >= ms_to_us(t));
            let by_count = c.after_packets.is_some_and(|n| d.packets > n);
            (by_time || by_count).then_some(c.delay_ms)
        });
        let mut delay_us = ms_to_us(changed_delay.unwrap_or(dc.delay_ms));
        if changed_delay.is_some() {
            outcome.rule = Rule::DelayChange;
            self.stats.delay_changed += 1;
        }
        if dc.jitter_ms > 0 {
            let offset = d.jitter_rng.symmetric(ms_to_us(dc.jitter_ms));
            delay_us = delay_us.saturating_add_signed(offset);
        }
        let mut in_order_us = now_us.saturating_add(delay_us).max(d.fifo_floor_us);
        if tail_target {
            // Whether it is the tail is known only gap_ms after its arrival.
            let gap_us = dc.drop_tail.as_ref().map_or(0, |t| ms_to_us(t.gap_ms));
            in_order_us = in_order_us.max(now_us.saturating_add(gap_us));
        }

        let extra_ms = data_index.and_then(|i| {
            if let Some(r) = dc.reorder.iter().find(|r| r.data_packet == i) {
                return Some(r.extra_delay_ms);
            }
            let every = dc.reorder_every.as_ref()?;
            let room = every.count.is_none_or(|c| d.reordered_every < c);
            if i % every.every == 0 && room {
                d.reordered_every += 1;
                return Some(every.extra_delay_ms);
            }
            None
        });
        outcome.release_us = match extra_ms {
            Some(x) => {
                // Not the FIFO floor: packets behind it may leave first.
                outcome.rule = Rule::Reorder;
                self.stats.reordered += 1;
                in_order_us.saturating_add(ms_to_us(x))
            }
            None => {
                d.fifo_floor_us = in_order_us;
                in_order_us
            }
        };
        outcome.verdict = Verdict::Accept;
        if tail_target {
            d.tail_pending = Some(id);
        }
        self.due.push(Reverse((outcome.release_us, id)));
        self.held.insert(
            id,
            Held {
                outcome,
                tail_candidate: tail_target,
            },
        );
        self.stats.max_held = self.stats.max_held.max(self.held.len() as u64);
        None
    }

    /// When the next held packet is due, if any.
    pub fn next_due_us(&self) -> Option<u64> {
        self.due.peek().map(|Reverse((t, _))| *t)
    }

    /// The next held packet due at or before `now_us`, with its final verdict.
    pub fn pop_due(&mut self, now_us: u64) -> Option<Outcome<T>> {
        while let Some(&Reverse((t, id))) = self.due.peek() {
            if t > now_us {
                return None;
            }
            self.due.pop();
            let Some(h) = self.held.remove(&id) else {
                continue;
            };
            let mut out = h.outcome;
            if h.tail_candidate {
                // Released at least gap_ms after arrival with no later data packet of its
                // burst: it was the last one.
                out.verdict = Verdict::Drop;
                out.rule = Rule::DropTail;
                self.stats.dropped_drop_tail += 1;
                let d = &mut self.dirs[out.dir.index()];
                if d.tail_pending == Some(id) {
                    d.tail_pending = None;
                }
            } else {
                self.stats.accepted += 1;
            }
            return Some(out);
        }
        None
    }

    /// Every held packet, accepted now (the emulator is stopping), in arrival order.
    pub fn drain(&mut self, now_us: u64) -> Vec<Outcome<T>> {
        self.due.clear();
        let mut all: Vec<Outcome<T>> = self.held.drain().map(|(_, h)| h.outcome).collect();
        all.sort_by_key(|o| o.id);
        for o in &mut all {
            o.verdict = Verdict::Accept;
            o.rule = Rule::Shutdown;
            o.release_us = now_us;
        }
        self.stats.accepted_at_shutdown += all.len() as u64;
        all
    }
}

#[cfg(test)]
mod tests {
    use super::super::config::{DelayChange, DropTail, Reorder, ReorderEvery};
    use super::super::packet::{ACK, PSH, SYN};
    use super::*;
    use std::net::Ipv4Addr;

    const CLIENT: Ipv4Addr = Ipv4Addr::new(10, 91, 1, 2);
    const SERVER: Ipv4Addr = Ipv4Addr::new(10, 91, 2, 2);
    const MSS: u32 = 1448;

    fn pkt(dir: Dir, flags: u8, seq: u32, len: u32) -> TcpSummary {
        let (src, dst) = match dir {
            Dir::ToServer => (CLIENT, SERVER),
            Dir::ToClient => (SERVER, CLIENT),
        };
        TcpSummary {
            src,
            dst,
            sport: 1,
            dport: 2,
            seq,
            ack: 0,
            flags,
            payload_len: len,
        }
    }
    fn syn() -> TcpSummary {
        pkt(Dir::ToServer, SYN, 0, 0)
    }
    fn ack(dir: Dir) -> TcpSummary {
        pkt(dir, ACK, 0, 0)
    }
    fn data(dir: Dir, n: u32) -> TcpSummary {
        pkt(dir, PSH | ACK, n * MSS, MSS)
    }

    fn path(to_server: DirectionConfig, to_client: DirectionConfig) -> PathConfig {
        PathConfig {
            client: CLIENT,
            server: SERVER,
            seed: 42,
            to_server,
            to_client,
        }
    }

    fn delay(ms: u32) -> DirectionConfig {
        DirectionConfig {
            delay_ms: ms,
            ..Default::default()
        }
    }

    /// One line of a trace: what left, when, and why. `label` is the test's name for the
    /// packet (the token).
    #[derive(Debug, PartialEq)]
    struct Out {
        label: &'static str,
        verdict: Verdict,
        at_ms: f64,
        rule: Rule,
    }

    /// Feeds (arrival ms, label, packet) in order, releasing what is due before each
    /// arrival, then everything; returns the verdicts in the order they were issued.
    fn run(cfg: PathConfig, trace: &[(f64, &'static str, TcpSummary)]) -> Vec<Out> {
        let mut s = Scheduler::new(cfg);
        let mut out = Vec::new();
        let mut push = |o: Outcome<&'static str>| {
            out.push(Out {
                label: o.token,
                verdict: o.verdict,
                at_ms: o.release_us as f64 / 1000.0,
                rule: o.rule,
            })
        };
        for &(t_ms, label, p) in trace {
            let now = (t_ms * 1000.0) as u64;
            while let Some(o) = s.pop_due(now) {
                push(o);
            }
            if let Some(o) = s.arrive(now, p, label) {
                push(o);
            }
        }
        while let Some(o) = s.pop_due(u64::MAX) {
            push(o);
        }
        out
    }

    fn accept(label: &'static str, at_ms: f64, rule: Rule) -> Out {
        Out {
            label,
            verdict: Verdict::Accept,
            at_ms,
            rule,
        }
    }
    fn drop(label: &'static str, at_ms: f64, rule: Rule) -> Out {
        Out {
            label,
            verdict: Verdict::Drop,
            at_ms,
            rule,
        }
    }

    #[test]
    fn delay_25ms_no_jitter_each_direction_its_own_delay() {
        let out = run(
            path(delay(25), delay(10)),
            &[
                (0.0, "SYN", syn()),
                (30.0, "SYN/ACK", pkt(Dir::ToClient, SYN | ACK, 0, 0)),
                (45.0, "ACK", ack(Dir::ToServer)),
            ],
        );
        assert_eq!(
            out,
            vec![
                accept("SYN", 25.0, Rule::Delay),
                accept("SYN/ACK", 40.0, Rule::Delay),
                accept("ACK", 70.0, Rule::Delay),
            ]
        );
    }

    #[test]
    fn jitter_stays_within_bounds_never_reorders_and_follows_the_seed() {
        let cfg = path(
            DirectionConfig {
                delay_ms: 20,
                jitter_ms: 10,
                ..Default::default()
            },
            delay(0),
        );
        // 1000 data packets 1 ms apart: jitter of ±10 ms would reorder them if allowed.
        let trace: Vec<(f64, &'static str, TcpSummary)> = (0..1000)
            .map(|i| (i as f64, "d", data(Dir::ToServer, i)))
            .collect();
        let releases = |cfg: PathConfig| -> Vec<u64> {
            let mut s = Scheduler::new(cfg);
            let mut v = Vec::new();
            for (i, &(t, _, p)) in trace.iter().enumerate() {
                assert!(s.arrive((t * 1000.0) as u64, p, i as u64).is_none());
            }
            while let Some(o) = s.pop_due(u64::MAX) {
                assert!(
                    o.release_us >= o.arrival_us + 10_000,
                    "below delay − jitter"
                );
                v.push(o.release_us);
                assert_eq!(o.token as usize + 1, v.len(), "FIFO");
            }
            v
        };
        let a = releases(cfg.clone());
        assert!(a.windows(2).all(|w| w[0] <= w[1]));
        // Jitter made some packets wait longer than the base delay (the FIFO floor alone
        // could not reach 30 ms: it is bounded by the largest single delay).
        assert!((0..1000).any(|i| a[i] > i as u64 * 1000 + 25_000));
        assert!((0..1000).all(|i| a[i] <= i as u64 * 1000 + 30_000));
        assert_eq!(releases(cfg.clone()), a, "same seed, same releases");
        let mut other = cfg;
        other.seed = 43;
        assert_ne!(releases(other), a);
    }

    #[test]
    fn drop_data_3_counts_only_segments_with_payload() {
        let cfg = path(
            DirectionConfig {
                delay_ms: 10,
                drop_data: vec![3],
                ..Default::default()
            },
            delay(10),
        );
        let out = run(
            cfg,
            &[
                (0.0, "SYN", syn()),
                (20.0, "ACK", ack(Dir::ToServer)),
                (21.0, "data 1", data(Dir::ToServer, 0)),
                (22.0, "data 2", data(Dir::ToServer, 1)),
                (23.0, "server data", data(Dir::ToClient, 0)),
                (24.0, "pure ACK", ack(Dir::ToServer)),
                (25.0, "data 3", data(Dir::ToServer, 2)),
                (26.0, "data 4", data(Dir::ToServer, 3)),
            ],
        );
        assert_eq!(
            out,
            vec![
                accept("SYN", 10.0, Rule::Delay),
                // Dropped on arrival, while the packets before it are still held.
                drop("data 3", 25.0, Rule::DropData),
                accept("ACK", 30.0, Rule::Delay),
                accept("data 1", 31.0, Rule::Delay),
                accept("data 2", 32.0, Rule::Delay),
                accept("server data", 33.0, Rule::Delay),
                accept("pure ACK", 34.0, Rule::Delay),
                accept("data 4", 36.0, Rule::Delay),
            ]
        );
    }

    #[test]
    fn drop_data_counts_the_retransmission_as_the_next_index() {
        let cfg = path(
            DirectionConfig {
                drop_data: vec![1],
                ..Default::default()
            },
            delay(0),
        );
        let mut s = Scheduler::new(cfg);
        let first = s.arrive(0, data(Dir::ToServer, 0), "original").unwrap();
        assert_eq!((first.data_index, first.rule), (Some(1), Rule::DropData));
        // The retransmission carries the same sequence number but is data packet 2.
        assert!(s
            .arrive(1_000_000, data(Dir::ToServer, 0), "retx")
            .is_none());
        let retx = s.pop_due(1_000_000).unwrap();
        assert_eq!((retx.token, retx.data_index), ("retx", Some(2)));
    }

    #[test]
    fn drop_syn_1_drops_the_first_syn_only_and_not_the_syn_ack() {
        let cfg = path(
            DirectionConfig {
                delay_ms: 5,
                drop_syn: 1,
                ..Default::default()
            },
            DirectionConfig {
                delay_ms: 5,
                drop_syn: 1,
                ..Default::default()
            },
        );
        let out = run(
            cfg,
            &[
                (0.0, "SYN", syn()),
                (1000.0, "SYN retransmitted", syn()),
                (1010.0, "SYN/ACK", pkt(Dir::ToClient, SYN | ACK, 0, 0)),
            ],
        );
        assert_eq!(
            out,
            vec![
                drop("SYN", 0.0, Rule::DropSyn),
                accept("SYN retransmitted", 1005.0, Rule::Delay),
                accept("SYN/ACK", 1015.0, Rule::Delay),
            ]
        );
    }

    #[test]
    fn reorder_data_packet_5_by_10ms_is_overtaken_by_packet_6() {
        let cfg = path(
            DirectionConfig {
                delay_ms: 25,
                reorder: vec![Reorder {
                    data_packet: 5,
                    extra_delay_ms: 10,
                }],
                ..Default::default()
            },
            delay(25),
        );
        let labels = ["d1", "d2", "d3", "d4", "d5", "d6", "d7"];
        let trace: Vec<_> = labels
            .iter()
            .enumerate()
            .map(|(i, &l)| (i as f64, l, data(Dir::ToServer, i as u32)))
            .collect();
        let out = run(cfg, &trace);
        assert_eq!(
            out,
            vec![
                accept("d1", 25.0, Rule::Delay),
                accept("d2", 26.0, Rule::Delay),
                accept("d3", 27.0, Rule::Delay),
                accept("d4", 28.0, Rule::Delay),
                accept("d6", 30.0, Rule::Delay),
                accept("d7", 31.0, Rule::Delay),
                accept("d5", 39.0, Rule::Reorder),
            ]
        );
    }

    #[test]
    fn reorder_every_3rd_data_packet_twice() {
        let cfg = path(
            DirectionConfig {
                delay_ms: 10,
                reorder_every: Some(ReorderEvery {
                    every: 3,
                    extra_delay_ms: 5,
                    count: Some(2),
                }),
                ..Default::default()
            },
            delay(0),
        );
        let mut s = Scheduler::new(cfg);
        for i in 0..10u32 {
            s.arrive(u64::from(i) * 1000, data(Dir::ToServer, i), i + 1);
        }
        let mut reordered = Vec::new();
        while let Some(o) = s.pop_due(u64::MAX) {
            if o.rule == Rule::Reorder {
                reordered.push(o.token);
            }
        }
        // Packet 9 would be the third: the count stops it.
        assert_eq!(reordered, vec![3, 6]);
        assert_eq!(s.stats().reordered, 2);
    }

    #[test]
    fn drop_tail_burst_2_drops_its_last_data_packet_at_release() {
        let cfg = path(
            delay(25),
            DirectionConfig {
                delay_ms: 25,
                drop_tail: Some(DropTail {
                    gap_ms: 5,
                    bursts: vec![2],
                }),
                ..Default::default()
            },
        );
        let c = Dir::ToClient;
        let out = run(
            cfg,
            &[
                (0.0, "b1 d1", data(c, 0)),
                (1.0, "b1 d2", data(c, 1)),
                (50.0, "ack", ack(Dir::ToServer)),
                (100.0, "b2 d1", data(c, 2)),
                (101.0, "b2 d2", data(c, 3)),
                // A pure ACK in the same direction neither ends nor extends the burst.
                (104.0, "b2 pure ack", ack(c)),
                (105.0, "b2 d3", data(c, 4)),
                (300.0, "b3 d1", data(c, 5)),
            ],
        );
        assert_eq!(
            out,
            vec![
                accept("b1 d1", 25.0, Rule::Delay),
                accept("b1 d2", 26.0, Rule::Delay),
                accept("ack", 75.0, Rule::Delay),
                accept("b2 d1", 125.0, Rule::Delay),
                accept("b2 d2", 126.0, Rule::Delay),
                accept("b2 pure ack", 129.0, Rule::Delay),
                drop("b2 d3", 130.0, Rule::DropTail),
                accept("b3 d1", 325.0, Rule::Delay),
            ]
        );
    }

    #[test]
    fn drop_tail_with_gap_above_delay_holds_only_the_chosen_burst() {
        let cfg = path(
            DirectionConfig {
                delay_ms: 2,
                drop_tail: Some(DropTail {
                    gap_ms: 10,
                    bursts: vec![1],
                }),
                ..Default::default()
            },
            delay(0),
        );
        let s = Dir::ToServer;
        let out = run(
            cfg,
            &[
                (0.0, "b1 d1", data(s, 0)),
                (1.0, "b1 d2", data(s, 1)),
                (50.0, "b2 d1", data(s, 2)),
            ],
        );
        assert_eq!(
            out,
            vec![
                // Held until 10 ms after arrival: only then is "last of burst" known.
                accept("b1 d1", 10.0, Rule::Delay),
                drop("b1 d2", 11.0, Rule::DropTail),
                accept("b2 d1", 52.0, Rule::Delay),
            ]
        );
    }

    #[test]
    fn delay_change_after_1000ms_from_the_first_packet() {
        let cfg = path(
            DirectionConfig {
                delay_ms: 25,
                delay_change: Some(DelayChange {
                    after_ms: Some(1000),
                    after_packets: None,
                    delay_ms: 200,
                }),
                ..Default::default()
            },
            delay(25),
        );
        let out = run(
            cfg,
            &[
                (100.0, "SYN", syn()),
                (1099.0, "before", data(Dir::ToServer, 0)),
                (1100.0, "after", data(Dir::ToServer, 1)),
                (1100.0, "other direction", data(Dir::ToClient, 0)),
            ],
        );
        assert_eq!(
            out,
            vec![
                accept("SYN", 125.0, Rule::Delay),
                accept("before", 1124.0, Rule::Delay),
                accept("other direction", 1125.0, Rule::Delay),
                accept("after", 1300.0, Rule::DelayChange),
            ]
        );
    }

    #[test]
    fn delay_step_down_after_3_packets_keeps_fifo() {
        let cfg = path(
            DirectionConfig {
                delay_ms: 100,
                delay_change: Some(DelayChange {
                    after_ms: None,
                    after_packets: Some(3),
                    delay_ms: 10,
                }),
                ..Default::default()
            },
            delay(0),
        );
        let s = Dir::ToServer;
        let out = run(
            cfg,
            &[
                (0.0, "p1", syn()),
                (1.0, "p2", ack(s)),
                (2.0, "p3", data(s, 0)),
                (3.0, "p4", data(s, 1)),
                (200.0, "p5", data(s, 2)),
            ],
        );
        assert_eq!(
            out,
            vec![
                accept("p1", 100.0, Rule::Delay),
                accept("p2", 101.0, Rule::Delay),
                accept("p3", 102.0, Rule::Delay),
                // Due at 13 ms but a link does not let it pass p3.
                accept("p4", 102.0, Rule::DelayChange),
                accept("p5", 210.0, Rule::DelayChange),
            ]
        );
    }

    #[test]
    fn loss_half_drops_about_half_and_directions_do_not_disturb_each_other() {
        let lossy = DirectionConfig {
            loss: 0.5,
            ..Default::default()
        };
        let lost = |cfg: PathConfig, with_other_direction: bool| -> Vec<u32> {
            let mut s = Scheduler::new(cfg);
            let mut lost = Vec::new();
            for i in 0..10_000u32 {
                if with_other_direction {
                    s.arrive(u64::from(i), ack(Dir::ToClient), i);
                }
                if let Some(o) = s.arrive(u64::from(i), data(Dir::ToServer, i), i) {
                    assert_eq!(o.rule, Rule::Loss);
                    lost.push(i);
                }
            }
            lost
        };
        let a = lost(path(lossy.clone(), lossy.clone()), false);
        // Binomial(10000, 0.5): σ = 50, so ±200 is 4σ.
        assert!((4800..=5200).contains(&a.len()), "{}", a.len());
        assert_eq!(lost(path(lossy.clone(), lossy), true), a);
    }

    #[test]
    fn shutdown_accepts_every_held_packet_in_arrival_order() {
        let mut s = Scheduler::new(path(delay(100), delay(100)));
        s.arrive(0, syn(), "a");
        s.arrive(1, ack(Dir::ToClient), "b");
        let out = s.drain(50);
        let got: Vec<_> = out.iter().map(|o| (o.token, o.verdict, o.rule)).collect();
        assert_eq!(
            got,
            vec![
                ("a", Verdict::Accept, Rule::Shutdown),
                ("b", Verdict::Accept, Rule::Shutdown)
            ]
        );
        assert!(s.drain(60).is_empty());
        assert_eq!(s.next_due_us(), None);
    }
}
