//! `connection.short_lived`: a client opens a new connection for every request (or every
//! few) to the same server endpoint, and each new connection pays a handshake that a
//! reused one would not (mechanisms.md "connection.short_lived and
//! slow_start.new_connection", seed 01).
//!
//! Mechanism: a TCP connection costs one RTT of handshake before the request can leave
//! (RFC 9293 §3.5; no TCP Fast Open), then starts in slow start from the initial window
//! (priced separately by `slow_start.new_connection`). HTTP/1.0 without keep-alive,
//! `Connection: close`, clients without a pool, and idle timeouts shorter than the request
//! interval (`connection.idle_close`) all make connections short.
//!
//! Signature: several connections from one client host to one server ip:port, each with
//! its handshake captured and carrying at most [`MAX_EXCHANGES_PER_SHORT`] request/response
//! answered request/response exchanges. Only connections opened when an earlier one to
//! the same endpoint had finished its last exchange, at most [`MAX_REUSE_GAP_NS`] before,
//! count as avoidable: connections opened side by side (a browser's parallel
//! connections) would still be needed with a pool, and much sparser ones would have
//! been closed by any usual idle timeout. The handshake
//! RTT (SYN → first ACK) is the full path RTT at any vantage point, so the client-side and
//! server-side captures price it the same.
//!
//! Cost: the median handshake RTT of the pair's short connections for every avoidable connection (all but the first, which a
//! pool would have had to open too). Emitted once per client host and server endpoint, on
//! its first short connection, with the others listed.
//!
//! Fix: on the client, reuse connections (HTTP/1.1 keep-alive, a pool); on the server, do
//! not close after each response and keep the idle timeout above the request interval.
//! The side that sent the first FIN on most of the connections is named first.
//!
//! False positives: clients that must not share connections (per-request TLS client
//! certificates, strict isolation); health checks that open one connection per probe on
//! purpose (the cost is then real but harmless). Connections whose handshake was not
//! captured are ignored, so a capture started mid-way under-counts.

use crate::detector::{host_pair, ms, Connection, Detector, HostPair, Segment, Slots};
use crate::finding::{
    list_streams, Confidence, Finding, FindingId, Fix, Host, StreamRef, MAX_EVIDENCE,
    MAX_LISTED_STREAMS,
};
use std::collections::BTreeMap;
use tcpwhy_capture::Timestamp;
use tcpwhy_track::{ClientBy, Endpoint, Vantage};

use crate::catalogue::Entry;

/// `connection.short_lived` in the catalogue (crate::catalogue).
pub const SHORT_LIVED: Entry = Entry {
    id: "connection.short_lived",
    title: "one connection per request",
    meaning: "a client opens a new connection for every request (or every few), each paying a handshake a reused one would not",
    fix_goes_to: "both ends' keep-alive / pool settings",
    part_of: None,
    decided_by: None,
    judge: None,
};

/// A connection with this many exchanges or fewer is "short": one request (HTTP/1.0,
/// `Connection: close`) or a couple before an idle close. With three or more, the client
/// clearly keeps connections and the pattern is something else.
pub const MAX_EXCHANGES_PER_SHORT: usize = 2;
/// Short connections from one client host to one server endpoint before the pattern is
/// reported: two already prove a handshake that reuse would have saved (the lab's
/// new-connection-per-request runs with 2 requests).
pub const MIN_SHORT_CONNECTIONS: usize = 2;
/// A connection opened longer than this after the last earlier one went idle is not
/// counted as avoidable: common keep-alive defaults would have closed the idle one by then
/// (seed 01: "60 s in well-known servers"; nginx 75 s, Go 90 s). Sparser requests need a
/// raised idle timeout, which `connection.idle_close` reports when it sees the closes.
pub const MAX_REUSE_GAP_NS: u64 = 60_000_000_000;
/// Connections remembered per capture; later ones are not considered (bounded memory).
pub const MAX_TRACKED: usize = 1 << 20;

/// A tracked connection's place in the order a pair's connections are judged in: start,
/// stream, then the order its parts were finalised in (a connection finalised while idle
/// keeps its stream when it resumes), a shard's before those of the shards absorbed
/// after it.
type Place = (Timestamp, u64, u64);

/// When some connection of a pair was free for reuse, as a short connection opened then
/// would ask: a connection whose exchanges ended at `t` could have carried a request
/// opened in `[t, t + MAX_REUSE_GAP_NS]`. The union of those intervals is all `finish`
/// needs of a connection that is not short, and of a short one besides its handshake,
/// where it kept every connection's start, stream, end of exchanges and handshake (32
/// bytes; 324 k connections between the bench's one client host and server endpoint on
/// its 40 M-packet capture, whose union is one interval). Disjoint intervals are each at
/// least [`MAX_REUSE_GAP_NS`] long, so a pair holds at most one per minute of capture.
#[derive(Default)]
struct FreeTimes {
    /// Disjoint, non-adjacent intervals `[from, to]` (ns), by `from`.
    spans: BTreeMap<i64, i64>,
    /// A connection whose exchanges ended in the tick it opened (a coarse clock) is free
    /// from its start, but only for the connections after it in that tick (a later
    /// place): per start, the earliest place's stream and part.
    ties: BTreeMap<i64, (u64, u64)>,
}

impl FreeTimes {
    /// The connection at `place` was free from `busy_until` on.
    fn add(&mut self, place: Place, busy_until: Timestamp) {
        let (start, stream, part) = place;
        // Its exchanges end at or after its start (the pass's clock never runs back).
        let from = busy_until.0.max(start.0);
        if from > start.0 {
            self.span(from, from.saturating_add(MAX_REUSE_GAP_NS as i64));
        } else {
            let tie = self.ties.entry(start.0).or_insert((stream, part));
            *tie = (*tie).min((stream, part));
            self.span(
                start.0.saturating_add(1),
                start.0.saturating_add(MAX_REUSE_GAP_NS as i64),
            );
        }
    }

    /// Adds `[from, to]` to the union.
    fn span(&mut self, mut from: i64, mut to: i64) {
        if let Some((&a, &b)) = self.spans.range(..=from).next_back() {
            if b >= to {
                return;
            }
            if b >= from.saturating_sub(1) {
                from = a;
            }
        }
        while let Some((&a, &b)) = self.spans.range(from..=to.saturating_add(1)).next() {
            self.spans.remove(&a);
            to = to.max(b);
        }
        self.spans.insert(from, to);
    }

    /// Whether a connection earlier than `place` was free at its start, no longer than
    /// [`MAX_REUSE_GAP_NS`] before.
    fn reusable(&self, place: Place) -> bool {
        let (start, stream, part) = place;
        self.spans
            .range(..=start.0)
            .next_back()
            .is_some_and(|(_, &to)| to >= start.0)
            || self
                .ties
                .get(&start.0)
                .is_some_and(|&first| first < (stream, part))
    }

    fn absorb(&mut self, o: FreeTimes, offset: u64) {
        for (from, to) in o.spans {
            self.span(from, to);
        }
        for (start, (stream, part)) in o.ties {
            let tie = self.ties.entry(start).or_insert((stream, part + offset));
            *tie = (*tie).min((stream, part + offset));
        }
    }
}

/// A short connection: what the pair sums of it, and what a finding cites of it (kept for
/// the pair's earliest [`DETAILED`]).
#[derive(Clone, Copy)]
struct Short {
    stream: u64,
    /// The order its connection was finalised in (see [`Place`]).
    part: u64,
    endpoints: [Endpoint; 2],
    vantage: Vantage,
    syn_frame: u64,
    start: Timestamp,
    exchanges: usize,
    handshake_ns: u64,
    active_ns: u64,
    /// The server sent the first FIN: it, not the client, ended the connection.
    server_closed: bool,
}

impl Short {
    fn place(&self) -> Place {
        (self.start, self.stream, self.part)
    }
}

/// Short connections a finding names: cited (up to [`MAX_EVIDENCE`]) or listed (up to
/// [`MAX_LISTED_STREAMS`]); the first of them is the one the finding is on.
const DETAILED: usize = if MAX_LISTED_STREAMS > MAX_EVIDENCE {
    MAX_LISTED_STREAMS
} else {
    MAX_EVIDENCE
};

/// One client host's connections to one server endpoint.
#[derive(Default)]
struct Pair {
    /// When its connections were free for reuse.
    free: FreeTimes,
    /// Short connections that no free time known yet made avoidable: a connection
    /// finalised later (on this shard or another) may still, so each is asked again
    /// when the list is full and in `finish`.
    unsettled: Vec<Place>,
    /// Short connections found avoidable: an earlier connection was free at their start.
    avoidable: usize,
    /// Every short connection's handshake RTT (the median's).
    handshakes: Vec<u64>,
    /// The earliest short connections by place, at most [`DETAILED`], in order.
    earliest: Vec<Short>,
    /// Of the short connections: how many, their exchanges, their active time, and on how
    /// many the server sent the first FIN (sums: the order they come in does not matter).
    short: usize,
    exchanges: usize,
    active_ns: u64,
    server_closed: usize,
}

impl Pair {
    /// One connection, free from `busy_until`; `short` its details when it is short.
    fn add(&mut self, place: Place, busy_until: Timestamp, short: Option<Short>) {
        self.free.add(place, busy_until);
        if let Some(c) = short {
            self.short += 1;
            self.exchanges += c.exchanges;
            self.active_ns = self.active_ns.saturating_add(c.active_ns);
            self.server_closed += usize::from(c.server_closed);
            self.handshakes.push(c.handshake_ns);
            self.unsettle(place);
            self.detail(c);
        }
    }

    /// Counts a short connection avoidable, or keeps it to ask again. A full list is
    /// asked again first: the free times only grow, so every connection it settles stays
    /// settled. When half or more stay, the list doubles, so that the next ask waits for
    /// as many connections as this one read (one ask per connection, amortised, however
    /// few each ask settles).
    fn unsettle(&mut self, place: Place) {
        if self.free.reusable(place) {
            self.avoidable += 1;
            return;
        }
        if self.unsettled.len() == self.unsettled.capacity() {
            self.settle();
            if self.unsettled.len() * 2 > self.unsettled.capacity() {
                self.unsettled.reserve(self.unsettled.len());
            }
        }
        self.unsettled.push(place);
    }

    /// Counts the unsettled connections the free times now make avoidable.
    fn settle(&mut self) {
        let before = self.unsettled.len();
        let free = &self.free;
        self.unsettled.retain(|&p| !free.reusable(p));
        self.avoidable += before - self.unsettled.len();
    }

    /// Adds a short connection's details, if it is among the earliest.
    fn detail(&mut self, d: Short) {
        let at = self.earliest.partition_point(|e| e.place() < d.place());
        if at < DETAILED {
            self.earliest.insert(at, d);
            self.earliest.truncate(DETAILED);
        }
    }

    /// Adds another shard's pair, whose parts come after this one's: `offset` on.
    fn absorb(&mut self, o: Pair, offset: u64) {
        self.free.absorb(o.free, offset);
        self.avoidable += o.avoidable;
        self.unsettled.extend(
            o.unsettled
                .into_iter()
                .map(|(start, stream, part)| (start, stream, part + offset)),
        );
        self.handshakes.extend(o.handshakes);
        o.earliest.into_iter().for_each(|mut d| {
            d.part += offset;
            self.detail(d)
        });
        self.short += o.short;
        self.exchanges += o.exchanges;
        self.active_ns = self.active_ns.saturating_add(o.active_ns);
        self.server_closed += o.server_closed;
    }
}

#[derive(Default)]
pub struct ShortLived {
    /// Per (client host, server endpoint).
    pairs: BTreeMap<HostPair, Pair>,
    tracked: usize,
    /// Streams whose first FIN came from the server (until the connection is finalised).
    server_first_fin: Slots<bool>,
}

impl Detector for ShortLived {
    // Judges connections whose server answered a request (data); its per-connection state is a FIN's side.
    const JUDGES_DATALESS: bool = false;

    // Inlined into the registry's one call per segment (detectors/mod.rs).
    #[inline(always)]
    fn on_segment(&mut self, seg: &Segment<'_>) {
        if seg.pkt.flags.fin() {
            self.server_first_fin
                .get_or_insert_with(seg, || !seg.ev.from_client);
        }
    }

    fn on_connection(&mut self, conn: &Connection<'_>, _out: &mut Vec<Finding>) {
        let s = conn.summary;
        let server_closed = self.server_first_fin.take(conn).unwrap_or(false);
        let Some(handshake_ns) = s.handshake_rtt_ns() else {
            return;
        };
        // Request/response traffic only: exchanges the server answered.
        let answered = conn
            .exchanges
            .iter()
            .filter(|x| x.response.is_some())
            .count();
        if s.client_by != ClientBy::Syn || answered == 0 {
            return;
        }
        if self.tracked >= MAX_TRACKED {
            return;
        }
        let part = self.tracked as u64;
        self.tracked += 1;
        let busy_until = conn
            .exchanges
            .iter()
            .map(|x| x.response.as_ref().map_or(x.request.end, |r| r.end))
            .max()
            .unwrap_or(s.start);
        let short = answered <= MAX_EXCHANGES_PER_SHORT;
        self.pairs.entry(host_pair(&s.endpoints)).or_default().add(
            (s.start, s.stream, part),
            busy_until,
            short.then(|| Short {
                stream: s.stream,
                part,
                endpoints: s.endpoints,
                vantage: conn.vantage,
                syn_frame: s.first_frame,
                start: s.start,
                exchanges: answered,
                handshake_ns,
                active_ns: conn.active_ns(),
                server_closed,
            }),
        );
    }

    fn finish(&mut self, out: &mut Vec<Finding>) {
        for ((client, server), mut pair) in std::mem::take(&mut self.pairs) {
            if pair.short < MIN_SHORT_CONNECTIONS {
                continue;
            }
            // Avoidable: a short connection opened when an earlier connection to the same
            // endpoint had finished its exchanges and could have carried the request, at
            // most MAX_REUSE_GAP_NS before (`FreeTimes`); the connections finalised after
            // a short one (on any shard) are all known now.
            pair.settle();
            let Pair {
                free,
                avoidable,
                handshakes: mut hs,
                earliest,
                short,
                exchanges,
                active_ns: active,
                server_closed,
                ..
            } = pair;
            // Whether each of the earliest short connections was avoidable, in order.
            let paid: Vec<bool> = earliest.iter().map(|c| free.reusable(c.place())).collect();
            drop(free);
            let Some(first) = earliest.first() else {
                continue;
            };
            if avoidable == 0 {
                continue;
            }
            // The median handshake: one connection whose client ACK was not captured
            // (tcptrace-http stream 41: SYN → request 189 ms on a 0.7 ms LAN) must not
            // set the price of all.
            hs.sort_unstable();
            let median_hs = hs[hs.len() / 2];
            let cost_ns = avoidable as u64 * median_hs;
            let mut f = Finding {
                cost_ns,
                connections: avoidable as u64,
                share: Some(cost_ns as f64 / active.max(1) as f64),
                ..Finding::new(
                    FindingId::ConnectionShortLived,
                    first.stream,
                    first.endpoints,
                    first.vantage,
                )
            };
            for (c, &paid) in earliest.iter().zip(&paid) {
                f.cite_with(c.syn_frame, c.start, || {
                    format!(
                        "SYN of stream {}: new connection for {} exchange(s), handshake {}{}",
                        StreamRef(c.stream),
                        c.exchanges,
                        ms(c.handshake_ns),
                        if paid {
                            ", avoidable (an earlier connection was idle or closed)"
                        } else {
                            ""
                        }
                    )
                });
            }
            let listed = list_streams(earliest.iter().map(|c| c.stream), short);
            f.explanation = format!(
                "{client} opened {} connections to {server} for {exchanges} request(s) (streams {}), \
                 at most {MAX_EXCHANGES_PER_SHORT} each. {} of them started after an earlier one \
                 had finished its exchanges, so a reused connection could have carried their \
                 requests without a handshake: {} × {} (median handshake RTT) = {}. Each new \
                 connection also starts in slow start: see the slow_start.new_connection \
                 findings on these streams (not counted here); when an idle timeout closed the earlier \
                 connections, connection.idle_close names the side and the timeout.",
                short,
                listed,
                avoidable,
                avoidable,
                ms(median_hs),
                ms(cost_ns),
            );
            let client_fix = Fix {
                host: Host::Client,
                action: format!(
                    "reuse connections to {server}: HTTP/1.1 keep-alive and a connection pool \
                     (e.g. nginx upstream `keepalive 32;` with `proxy_http_version 1.1;` and \
                     `proxy_set_header Connection \"\";`; HTTP/1.0 clients must ask for \
                     keep-alive)"
                ),
            };
            let server_fix = Fix {
                host: Host::Server,
                action: "keep connections open after a response (no `Connection: close`) \
                         with an idle timeout above the client's request interval"
                    .into(),
            };
            // The side that ends the connections is the one to change first.
            if server_closed * 2 > short {
                f.explanation.push_str(&format!(
                    " The server sent the first FIN on {server_closed} of the {} connections: \
                     it is the one closing them.",
                    short
                ));
                f.fix = vec![server_fix, client_fix];
            } else {
                f.fix = vec![client_fix, server_fix];
            }
            f.confidence = if short >= 3 {
                Confidence::High
            } else {
                Confidence::Medium
            };
            out.push(f);
        }
    }

    fn absorb(&mut self, o: Self) {
        // The other shard's parts come after this one's (see `Place`).
        let offset = self.tracked as u64;
        self.tracked += o.tracked;
        for (key, pair) in o.pairs {
            self.pairs.entry(key).or_default().absorb(pair, offset);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::IpAddr;

    /// One made-up connection of the pair 10.0.0.1 → 10.0.0.2:80.
    struct Made {
        start: i64,
        stream: u64,
        busy_until: i64,
        exchanges: usize,
        handshake_ns: u64,
        active_ns: u64,
        server_closed: bool,
    }

    fn endpoint(last: u8, port: u16) -> Endpoint {
        Endpoint {
            addr: IpAddr::from([10, 0, 0, last]),
            port,
        }
    }

    fn add(d: &mut ShortLived, c: &Made) {
        let server = endpoint(2, 80);
        let short = c.exchanges <= MAX_EXCHANGES_PER_SHORT;
        let part = d.tracked as u64;
        d.tracked += 1;
        d.pairs.entry((server.addr, server)).or_default().add(
            (Timestamp(c.start), c.stream, part),
            Timestamp(c.busy_until),
            short.then(|| Short {
                stream: c.stream,
                part,
                endpoints: [endpoint(1, 40_000 + c.stream as u16), server],
                vantage: Vantage::Client,
                syn_frame: 10 * c.stream,
                start: Timestamp(c.start),
                exchanges: c.exchanges,
                handshake_ns: c.handshake_ns,
                active_ns: c.active_ns,
                server_closed: c.server_closed,
            }),
        );
    }

    /// Every connection of a pair in finalising order (not start order) and split
    /// between two shards, with the ties of a coarse clock (several connections opened
    /// in one tick; a response ending in the tick its connection opened): the finding
    /// says what every connection, sorted by start, says — the avoidable count from each
    /// one's earlier free times, the median handshake of all short ones, the earliest
    /// short ones cited and listed with whether each was avoidable — as when each
    /// connection was kept whole.
    #[test]
    fn the_earliest_and_the_sums_give_what_every_connection_gives() {
        // 300 connections in 120 ticks of 1 s (many in one tick; a free connection
        // is always at most MAX_REUSE_GAP_NS back), then in 1,200 ticks of 45 s (minutes
        // apart: many find none).
        for (tick, ticks) in [(1_000_000_000, 120), (45_000_000_000u64, 1_200)] {
            let mut next = crate::test_rng(0x9e37_79b9_7f4a_7c15);
            let made: Vec<Made> = (0..300u64)
                .map(|i| {
                    let start = (next(ticks) * tick) as i64;
                    Made {
                        start,
                        stream: i,
                        busy_until: start + (next(3) * tick) as i64,
                        exchanges: 1 + next(4) as usize,
                        handshake_ns: 1_000 * (1 + next(50)),
                        active_ns: next(1_000_000),
                        server_closed: next(3) == 0,
                    }
                })
                .collect();

            // The connections kept whole, as `finish` read them before.
            let mut by_start: Vec<&Made> = made.iter().collect();
            by_start.sort_by_key(|c| (c.start, c.stream));
            let mut free_times = std::collections::BTreeSet::new();
            let mut short: Vec<(&Made, bool)> = Vec::new();
            for c in by_start {
                let free = free_times
                    .range(..=c.start)
                    .next_back()
                    .is_some_and(|&t: &i64| c.start - t <= MAX_REUSE_GAP_NS as i64);
                if c.exchanges <= MAX_EXCHANGES_PER_SHORT {
                    short.push((c, free));
                }
                free_times.insert(c.busy_until);
            }
            let avoidable = short.iter().filter(|(_, paid)| *paid).count() as u64;
            let mut hs: Vec<u64> = short.iter().map(|(c, _)| c.handshake_ns).collect();
            hs.sort_unstable();
            let server_closed = short.iter().filter(|(c, _)| c.server_closed).count();
            assert!(avoidable > 0 && short.len() > DETAILED && server_closed > 0);
            // Minutes apart, not every short connection is avoidable.
            assert!(ticks == 120 || (avoidable as usize) < short.len());

            // Finalised out of order (stream order is not start order) on two shards.
            let (mut a, mut b) = (ShortLived::default(), ShortLived::default());
            for (i, c) in made.iter().enumerate().rev() {
                add(if i % 3 == 0 { &mut a } else { &mut b }, c);
            }
            a.absorb(b);
            let mut out = Vec::new();
            a.finish(&mut out);
            let [f] = &out[..] else {
                panic!("one finding, not {}", out.len());
            };
            assert_eq!(f.connections, avoidable);
            assert_eq!(f.cost_ns, avoidable * hs[hs.len() / 2]);
            assert_eq!(f.stream, short[0].0.stream);
            let cited: Vec<(u64, bool)> = f
                .evidence
                .iter()
                .map(|e| (e.frame, e.note.contains("avoidable")))
                .collect();
            let expected: Vec<(u64, bool)> = short
                .iter()
                .take(MAX_EVIDENCE)
                .map(|&(c, paid)| (10 * c.stream, paid))
                .collect();
            assert_eq!(cited, expected);
            let listed: Vec<String> = short
                .iter()
                .take(MAX_LISTED_STREAMS)
                .map(|(c, _)| c.stream.to_string())
                .collect();
            let exchanges: usize = short.iter().map(|(c, _)| c.exchanges).sum();
            let expected = format!(
                "opened {} connections to 10.0.0.2:80 for {exchanges} request(s) (streams {}, … ({} more))",
                short.len(),
                listed.join(", "),
                short.len() - MAX_LISTED_STREAMS
            );
            assert!(
                f.explanation.contains(&expected),
                "{}\n{expected}",
                f.explanation
            );
            let active: u64 = short.iter().map(|(c, _)| c.active_ns).sum();
            assert_eq!(f.share, Some(f.cost_ns as f64 / active as f64));
            assert_eq!(
                f.explanation.contains(&format!(
                    " The server sent the first FIN on {server_closed} of"
                )),
                server_closed * 2 > short.len()
            );
        }
    }

    /// The free times of a busy pair are one interval, whatever order its connections
    /// are finalised in, and those of a sparse one an interval per free minute: what a
    /// pair holds grows with the capture's minutes, not its connections.
    #[test]
    fn free_times_are_a_few_intervals() {
        let second = 1_000_000_000i64;
        let mut busy = FreeTimes::default();
        for i in (0..10_000i64).rev() {
            let start = Timestamp(i * second);
            busy.add((start, i as u64, 0), Timestamp(start.0 + second / 2));
        }
        assert_eq!(busy.spans.len(), 1);
        assert!(busy.reusable((Timestamp(second), 1, 0)));
        assert!(!busy.reusable((Timestamp(second / 4), 0, 0)));
        // Adjacent nanoseconds are one interval too.
        busy.span(-10, second / 2 - 1);
        assert_eq!(busy.spans.len(), 1);
        let (&from, &to) = busy.spans.iter().next().expect("one interval");
        busy.span(to + 1, to + 5);
        assert_eq!(busy.spans.iter().next(), Some((&from, &(to + 5))));
        assert_eq!(busy.spans.len(), 1);

        let mut sparse = FreeTimes::default();
        let gap = MAX_REUSE_GAP_NS as i64;
        for i in 0..100i64 {
            let start = Timestamp(i * 2 * gap);
            sparse.add((start, i as u64, 0), Timestamp(start.0 + 1));
        }
        assert_eq!(sparse.spans.len(), 100);
        // One connection each minute between them joins them all.
        for i in 0..100i64 {
            let start = Timestamp(i * 2 * gap + gap);
            sparse.add((start, 100 + i as u64, 0), Timestamp(start.0 + 1));
        }
        assert_eq!(sparse.spans.len(), 1);
    }
}
