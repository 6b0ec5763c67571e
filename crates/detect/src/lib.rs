//! Findings: which TCP mechanism cost time on which connection, proven by frames, priced
//! in milliseconds, with the fix (design.md "Output contract", mechanisms.md).
//!
//! The [`Analyzer`] is fed the tracker's per-segment events and finished connections,
//! builds each connection's request/response [`exchange`]s, and runs every detector of the
//! [`detectors::Detectors`] registry. Each detector is one module that documents its mechanism and
//! owns its state; adding one changes no other's output.

pub mod catalogue;
pub mod detector;
pub mod detectors;
pub mod exchange;
pub mod finding;
pub mod host;
/// The senders' IP ID order, kept by the tracker ([`SegmentEvent::ip_id`]).
pub use tcpwhy_track::ipid;

pub use detector::{Connection, Detector, Reusable, Segment, Slots, StreamMap, Taken};
pub use exchange::{ClockedRounds, Exchange, ExchangeBuilder, Span};
pub use finding::{Confidence, Evidence, Finding, FindingId, Fix, Host, StreamRef};

use tcpwhy_capture::{Packet, TcpFlags, Timestamp};
use tcpwhy_track::{ConnSummary, SegmentEvent, SegmentKinds, Vantage};

/// What the user chose.
#[derive(Clone, Debug, Default)]
pub struct Config {
    /// Assume this vantage point instead of the inferred one.
    pub vantage: Option<Vantage>,
    /// Keep every connection's exchanges in the result (`analyze --exchanges`).
    pub keep_exchanges: bool,
    /// Give every detector every segment as it comes and every connection, also those
    /// without data or a FIN ([`Detector::JUDGES_DATALESS`] ignored): the same findings,
    /// slower on scans and floods. For the test that checks the detectors' claims.
    pub unfiltered: bool,
}

/// Per-connection state the analyzer itself keeps (the detectors keep their own), at
/// the connection's index in the detectors' [`Slots`].
#[derive(Default)]
struct ConnState {
    builder: ExchangeBuilder,
    syn: bool,
    established: bool,
    /// Its segments while it has carried neither data nor a FIN, not yet given to the
    /// detectors ([`Detector::JUDGES_DATALESS`]); empty once `live`. Its capacity
    /// stays with the slot for the slot's next connection.
    held: Vec<Held>,
    /// Data or a FIN came, or more than [`MAX_HELD`] segments: the detectors see its
    /// segments as they come.
    live: bool,
}

/// The most segments held for a connection that has carried neither data nor a FIN.
/// Linux sends a SYN at most 1 + 6 times (`net.ipv4.tcp_syn_retries`) and a SYN/ACK at
/// most 1 + 5 (`tcp_synack_retries`): an unanswered connect, or a half-open one and its
/// RST, fits whole. A connection with more such segments is given to every detector
/// from then on, as any other.
const MAX_HELD: usize = 8;

/// A segment held for the detectors ([`ConnState::held`]): a copy of what they read,
/// without payload bytes (it has none).
struct Held {
    frame: u64,
    ts: Timestamp,
    pkt: Packet<'static>,
    ev: SegmentEvent,
}

impl Held {
    fn segment(&self, slot: usize) -> Segment<'_> {
        Segment {
            frame: self.frame,
            ts: self.ts,
            pkt: &self.pkt,
            ev: &self.ev,
            slot,
        }
    }
}

/// The result of a pass.
#[derive(Default)]
pub struct Analysis {
    /// Sorted by cost, largest first.
    pub findings: Vec<Finding>,
    /// `(stream, [client, server], exchanges)` of every connection, when asked for.
    pub exchanges: Vec<(u64, [tcpwhy_track::Endpoint; 2], Vec<Exchange>)>,
}

impl Analysis {
    /// Gives every stream its final number: `number` maps the provisional ids of a
    /// sharded pass (unchanged for final ones), in findings, in the stream references of
    /// their texts ([`StreamRef`]) and in the exchanges. The order stays as sorted: final
    /// numbers follow the provisional ids' order (both count up with the first frame).
    pub fn renumber(&mut self, number: impl Fn(u64) -> u64) {
        for f in &mut self.findings {
            f.stream = number(f.stream);
            f.resolve_stream_refs(&number);
        }
        for (s, _, _) in &mut self.exchanges {
            *s = number(*s);
        }
    }
}

/// Runs every detector over one capture.
pub struct Analyzer {
    config: Config,
    detectors: detectors::Detectors,
    /// The slot of each open connection, by stream.
    slot_of: StreamMap<usize>,
    /// Each slot's state; a finalised connection's is taken and its slot reused.
    conns: Vec<ConnState>,
    free_slots: Vec<usize>,
    /// The last segment's stream and slot: the next segment is often of the same
    /// connection, and this spares it the hash lookup (≈ 20 instructions a segment,
    /// callgrind, `analyze` of the 1 M-packet bench prefix).
    last: Option<(u64, usize)>,
    out: Analysis,
}

impl Analyzer {
    pub fn new(config: Config) -> Self {
        Analyzer {
            config,
            detectors: detectors::Detectors::default(),
            slot_of: StreamMap::default(),
            conns: Vec::new(),
            free_slots: Vec::new(),
            last: None,
            out: Analysis::default(),
        }
    }

    /// One TCP segment with its tracker event.
    pub fn on_segment(&mut self, frame: u64, ts: Timestamp, pkt: &Packet<'_>, ev: &SegmentEvent) {
        let slot = match self.last {
            Some((stream, slot)) if stream == ev.stream => slot,
            _ => self.slot(ev.stream),
        };
        let Some(st) = self.conns.get_mut(slot) else {
            return;
        };
        if !ev.kinds.has(SegmentKinds::CAPTURE_DUPLICATE) {
            let flags = pkt.flags;
            if flags.syn() && !flags.ack() {
                st.syn = true;
            } else if flags.0 & (TcpFlags::SYN | TcpFlags::ACK) == TcpFlags::ACK
                && ev.from_client
                && st.syn
                && !st.established
            {
                st.established = true;
                st.builder.established(ts);
            }
            let repeat = SegmentKinds::RETRANSMISSION | SegmentKinds::OUT_OF_ORDER;
            let stamps = pkt.options.timestamps;
            if ev.payload_len > 0 && ev.kinds.0 & repeat == 0 {
                let m = &ev.conn;
                let rtt = m.handshake_rtt_ns().or(m.min_rtt_sample_ns).unwrap_or(0);
                let tsecr = stamps.map(|t| t.1);
                st.builder.data(
                    frame,
                    ts,
                    ev.payload_len,
                    ev.from_client,
                    rtt / 2,
                    ev.rel_seq,
                    tsecr,
                );
            } else if ev.from_client && ev.payload_len == 0 && flags.ack() {
                st.builder.client_ack(ev.rel_ack, stamps.map(|t| t.0));
            }
        }
        if !st.live {
            let dataless = ev.payload_len == 0 && !pkt.flags.fin();
            if dataless && st.held.len() < MAX_HELD && !self.config.unfiltered {
                let pkt = Packet {
                    payload: &[],
                    ..*pkt
                };
                st.held.push(Held {
                    frame,
                    ts,
                    pkt,
                    ev: *ev,
                });
                return;
            }
            st.live = true;
            if !st.held.is_empty() {
                release(&mut self.detectors, &mut st.held, slot);
            }
        }
        let seg = Segment {
            frame,
            ts,
            pkt,
            ev,
            slot,
        };
        self.detectors.on_segment(&seg);
    }

    /// The slot of `stream`, given one if it has none; remembered as the last one.
    fn slot(&mut self, stream: u64) -> usize {
        let (conns, free) = (&mut self.conns, &mut self.free_slots);
        let slot = *self.slot_of.entry(stream).or_insert_with(|| {
            // A free slot's state was taken when its connection was finalised.
            free.pop().unwrap_or_else(|| {
                conns.push(ConnState::default());
                conns.len() - 1
            })
        });
        self.last = Some((stream, slot));
        slot
    }

    /// A connection the tracker finalised: the detectors judge it and free its state.
    /// A continuation (packets on the 4-tuple after the connection was finalised) is not
    /// judged again: its segments were seen, its state is freed.
    pub fn on_connection(&mut self, summary: &ConnSummary) {
        let slot = self.slot_of.remove(&summary.stream);
        if self.last.is_some_and(|(s, _)| s == summary.stream) {
            self.last = None;
        }
        let st = slot.and_then(|i| self.conns.get_mut(i)).map(|st| {
            let held = std::mem::take(&mut st.held);
            let taken = std::mem::take(st);
            st.held = held;
            taken
        });
        if summary.continuation {
            if let Some(slot) = slot {
                self.conns[slot].held.clear();
                self.free_slots.push(slot);
            }
            return;
        }
        // Ended without data or a FIN: its segments, held, go to the detectors that can
        // judge such a connection; the others see nothing of it.
        if let Some(i) = slot {
            let detectors = &mut self.detectors;
            replay(&mut self.conns[i].held, i, |s| {
                detectors.on_dataless_segment(s)
            });
        }
        let slot = slot.unwrap_or(usize::MAX);
        let st = st.unwrap_or_default();
        let live = st.live || self.config.unfiltered;
        let (exchanges, server_first) = st.builder.finish();
        let vantage = self.config.vantage.unwrap_or(summary.vantage);
        let rtt_ns = summary.handshake_rtt_ns().filter(|&h| h > 0);
        let mut conn = Connection {
            summary,
            slot,
            exchanges: &exchanges,
            server_first_rounds: &server_first,
            vantage,
            rtt_ns,
            bottleneck: [None; 2],
        };
        conn.bottleneck = self.detectors.bottlenecks(&conn);
        if live {
            self.detectors.on_connection(&conn, &mut self.out.findings);
        } else {
            self.detectors
                .on_dataless_connection(&conn, &mut self.out.findings);
        }
        if slot != usize::MAX {
            self.free_slots.push(slot);
        }
        if self.config.keep_exchanges {
            self.out
                .exchanges
                .push((summary.stream, summary.endpoints, exchanges));
        }
    }

    /// The findings reported since the last call, for a consumer that keeps them itself
    /// (the pipeline holds them in a store bounded in memory, issue 13); `finish` then
    /// returns only those reported after.
    pub fn drain_findings(&mut self) -> std::vec::Drain<'_, Finding> {
        self.out.findings.drain(..)
    }

    /// Connections whose state the analyzer holds (seen, not yet finalised).
    pub fn open_connections(&self) -> usize {
        self.slot_of.len()
    }

    /// Takes in another shard's analyzer (same configuration, other connections), so that
    /// `finish` reports on the connections of both.
    pub fn absorb(&mut self, other: Analyzer) {
        self.detectors.absorb(other.detectors);
        self.out.findings.extend(other.out.findings);
        self.out.exchanges.extend(other.out.exchanges);
    }

    /// Ends the pass: findings about patterns across connections, then everything sorted.
    pub fn finish(self) -> Analysis {
        let mut findings = Vec::new();
        let mut out = self.finish_into(std::slice::from_mut(&mut findings), &|v, f| v.push(f));
        out.findings = findings;
        sort_in_report_order(&mut out.findings);
        out
    }

    /// Ends the pass, every finding not yet drained ([`Self::drain_findings`]) and those
    /// about patterns across connections given to `push` with one of `outs`, on the
    /// thread that judged it, instead of returned: what was held to the end is judged in
    /// parts on up to `outs.len()` threads ([`detectors::Detectors::finish_into`]), so that a
    /// consumer keeps or renders each finding while it is fresh in that thread's cache.
    /// The findings are those `finish` returns, in no particular order; nothing is judged
    /// with no `outs`. The analysis returned holds the exchanges.
    pub fn finish_into<O: Send>(
        mut self,
        outs: &mut [O],
        push: &(dyn Fn(&mut O, Finding) + Sync),
    ) -> Analysis {
        if let Some(first) = outs.first_mut() {
            self.out.findings.drain(..).for_each(|f| push(first, f));
        }
        self.detectors.finish_into(outs, push);
        let mut out = self.out;
        out.exchanges.sort_by_key(|(s, _, _)| *s);
        out
    }
}

/// Gives a connection's held segments to every detector, in order, and empties `held`:
/// its first data or FIN came. Out of line: once a connection, not on every segment.
#[cold]
#[inline(never)]
fn release(detectors: &mut detectors::Detectors, held: &mut Vec<Held>, slot: usize) {
    replay(held, slot, |s| detectors.on_segment(s));
}

/// Gives `held`'s segments, in order, to `give`, and empties it.
fn replay(held: &mut Vec<Held>, slot: usize, mut give: impl FnMut(&Segment<'_>)) {
    for h in held.iter() {
        give(&h.segment(slot));
    }
    held.clear();
}

/// Sorts findings in the report's total order, so that it does not depend on how the
/// connections were sharded between threads: cost (largest first), stream, id, first
/// evidence frame, explanation. The keys are sorted and each finding moved once (a merge
/// sort moved these large values ≈ log n times, on the one thread left after a pass);
/// the rare findings equal in all but their explanation are then ordered by it.
fn sort_in_report_order(findings: &mut [Finding]) {
    let key = |f: &Finding| {
        let first_frame = f.evidence.first().map(|e| e.frame);
        (std::cmp::Reverse(f.cost_ns), f.stream, f.id, first_frame)
    };
    findings.sort_by_cached_key(key);
    for same in findings.chunk_by_mut(|a, b| key(a) == key(b)) {
        if same.len() > 1 {
            same.sort_by(|a, b| a.explanation.cmp(&b.explanation));
        }
    }
}

/// The detectors' tests' made-up captures: a xorshift generator from `seed` (fixed, so
/// that a failure repeats), giving a number below `n` at each call.
#[cfg(test)]
pub(crate) fn test_rng(seed: u64) -> impl FnMut(u64) -> u64 {
    let mut x = seed;
    move |n| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn findings_sort_by_cost_stream_id_first_frame_then_explanation() {
        let ep = tcpwhy_track::Endpoint {
            addr: std::net::IpAddr::from([10, 0, 0, 1]),
            port: 80,
        };
        let f = |cost_ns, stream, id, frame: Option<u64>, text: &str| Finding {
            id,
            stream,
            endpoints: [ep, ep],
            cost_ns,
            connections: 1,
            share: None,
            evidence: frame
                .map(|frame| Evidence {
                    frame,
                    ts: Timestamp::from_nanos(0),
                    note: String::new(),
                })
                .into_iter()
                .collect(),
            explanation: text.to_string(),
            fix: Vec::new(),
            confidence: Confidence::High,
            vantage: Vantage::Client,
        };
        use FindingId::{RwndLimited as R, SlowStartNewConnection as N};
        // In the order wanted, then shuffled: every key field decides one pair.
        let want = vec![
            f(9, 5, N, Some(1), "a"),
            f(7, 1, N, Some(3), "z"),
            f(7, 2, N, Some(1), "a"),
            f(7, 2, R, None, "a"),
            f(7, 2, R, Some(0), "a"),
            f(7, 2, R, Some(4), "b"),
            f(7, 2, R, Some(4), "c"),
            f(7, 2, R, Some(4), "c"),
            f(1, 0, N, Some(2), "a"),
        ];
        let show = |v: &[Finding]| -> Vec<(u64, u64, FindingId, Option<u64>, String)> {
            v.iter()
                .map(|f| {
                    let frame = f.evidence.first().map(|e| e.frame);
                    (f.cost_ns, f.stream, f.id, frame, f.explanation.clone())
                })
                .collect()
        };
        for rotate in 0..want.len() {
            let mut got = want.clone();
            got.reverse();
            got.rotate_left(rotate);
            sort_in_report_order(&mut got);
            assert_eq!(show(&got), show(&want), "rotated by {rotate}");
        }
    }
}
