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

use crate::detector::{ms, Connection, Detector, Segment, Slots};
use crate::finding::{
    list_streams, Confidence, Finding, FindingId, Fix, Host, StreamRef, MAX_EVIDENCE,
    MAX_LISTED_STREAMS,
};
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};
use std::net::IpAddr;
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

/// What `finish` needs of every connection tracked, whatever its place in start order:
/// that place, when it could have been reused from, and a short one's handshake (the
/// median's). 32 bytes: a host pair holds one per connection (up to [`MAX_TRACKED`]),
/// where it held every field a finding could cite (104 bytes, 54 MB on the bench's
/// 40 M-packet capture of 433 k connections: most of analyze's peak RSS growth
/// between it and its first quarter).
#[derive(Clone, Copy)]
struct Opened {
    start: Timestamp,
    stream: u64,
    /// End of its last response (or request): from then on it could have been reused.
    busy_until: Timestamp,
    /// A short connection's handshake RTT; [`NOT_SHORT`] for one with more exchanges.
    short_handshake_ns: u64,
}

/// [`Opened::short_handshake_ns`] of a connection that is not short.
const NOT_SHORT: u64 = u64::MAX;

impl Opened {
    fn order(&self) -> (Timestamp, u64) {
        (self.start, self.stream)
    }
}

/// A short connection: what the pair sums of it, and what a finding cites of it (kept for
/// the pair's earliest [`DETAILED`]).
#[derive(Clone, Copy)]
struct Short {
    stream: u64,
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
    /// Every connection tracked, in the order finalised (each shard's, then absorbed).
    opened: Vec<Opened>,
    /// The earliest short connections by (start, stream), at most [`DETAILED`], in order.
    earliest: Vec<Short>,
    /// Of the short connections: how many, their exchanges, their active time, and on how
    /// many the server sent the first FIN (sums: the order they come in does not matter).
    short: usize,
    exchanges: usize,
    active_ns: u64,
    server_closed: usize,
}

impl Pair {
    /// One connection; `short` the same one's details when it is short.
    fn add(&mut self, opened: Opened, short: Option<Short>) {
        self.opened.push(opened);
        if let Some(c) = short {
            self.short += 1;
            self.exchanges += c.exchanges;
            self.active_ns = self.active_ns.saturating_add(c.active_ns);
            self.server_closed += usize::from(c.server_closed);
            self.detail(c);
        }
    }

    /// Adds a short connection's details, if it is among the earliest.
    fn detail(&mut self, d: Short) {
        let at = self
            .earliest
            .partition_point(|e| (e.start, e.stream) < (d.start, d.stream));
        if at < DETAILED {
            self.earliest.insert(at, d);
            self.earliest.truncate(DETAILED);
        }
    }

    fn absorb(&mut self, o: Pair) {
        self.opened.extend(o.opened);
        o.earliest.into_iter().for_each(|d| self.detail(d));
        self.short += o.short;
        self.exchanges += o.exchanges;
        self.active_ns = self.active_ns.saturating_add(o.active_ns);
        self.server_closed += o.server_closed;
    }
}

#[derive(Default)]
pub struct ShortLived {
    /// Per (client host, server endpoint).
    pairs: BTreeMap<(IpAddr, Endpoint), Pair>,
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
        self.tracked += 1;
        let busy_until = conn
            .exchanges
            .iter()
            .map(|x| x.response.as_ref().map_or(x.request.end, |r| r.end))
            .max()
            .unwrap_or(s.start);
        let short = answered <= MAX_EXCHANGES_PER_SHORT;
        self.pairs
            .entry((s.endpoints[0].addr, s.endpoints[1]))
            .or_default()
            .add(
                Opened {
                    start: s.start,
                    stream: s.stream,
                    busy_until,
                    short_handshake_ns: if short { handshake_ns } else { NOT_SHORT },
                },
                short.then(|| Short {
                    stream: s.stream,
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
        for ((client, server), pair) in std::mem::take(&mut self.pairs) {
            if pair.short < MIN_SHORT_CONNECTIONS {
                continue;
            }
            let Pair {
                mut opened,
                earliest,
                short,
                exchanges,
                active_ns: active,
                server_closed,
            } = pair;
            // Avoidable: a short connection opened when an earlier connection to the same
            // endpoint had finished its exchanges and could have carried the request; the
            // latest free time at or before its start is the best candidate for reuse.
            // In start order, a free time once reached stays reached: the latest one
            // reached is kept, and the free times still ahead wait in a min-heap (the
            // connections busy at that start, where an ordered set of every free time
            // held one node per connection of the pair at the end of the pass). Stable:
            // the parts of one stream that share a start (a coarse clock) stay in the
            // order they were finalised.
            opened.sort_by_key(Opened::order);
            let mut latest_free: Option<Timestamp> = None;
            let mut ahead: BinaryHeap<Reverse<Timestamp>> = BinaryHeap::new();
            let mut avoidable = 0usize;
            // Whether each of the earliest short connections was avoidable, in order.
            let mut paid: Vec<bool> = Vec::with_capacity(DETAILED);
            let mut hs: Vec<u64> = Vec::with_capacity(short);
            for c in &opened {
                while let Some(&Reverse(t)) = ahead.peek() {
                    if t > c.start {
                        break;
                    }
                    ahead.pop();
                    latest_free = latest_free.max(Some(t));
                }
                if c.short_handshake_ns != NOT_SHORT {
                    let free =
                        latest_free.is_some_and(|t| c.start.since(t) <= MAX_REUSE_GAP_NS as i64);
                    avoidable += usize::from(free);
                    if paid.len() < DETAILED {
                        paid.push(free);
                    }
                    hs.push(c.short_handshake_ns);
                }
                ahead.push(Reverse(c.busy_until));
            }
            drop(opened);
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
        self.tracked += o.tracked;
        for (key, pair) in o.pairs {
            self.pairs.entry(key).or_default().absorb(pair);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        d.tracked += 1;
        d.pairs.entry((server.addr, server)).or_default().add(
            Opened {
                start: Timestamp(c.start),
                stream: c.stream,
                busy_until: Timestamp(c.busy_until),
                short_handshake_ns: if short { c.handshake_ns } else { NOT_SHORT },
            },
            short.then(|| Short {
                stream: c.stream,
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
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        let tick = 1_000_000_000;
        let made: Vec<Made> = (0..300u64)
            .map(|i| {
                let start = (next(120) * tick) as i64;
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
