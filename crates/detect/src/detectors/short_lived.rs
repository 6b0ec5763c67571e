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
use crate::finding::{Confidence, Finding, FindingId, Fix, Host, StreamRef};
use std::collections::{BTreeMap, BTreeSet};
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
/// Streams named in the explanation.
const MAX_LISTED: usize = 20;

struct Conn {
    stream: u64,
    endpoints: [Endpoint; 2],
    vantage: Vantage,
    syn_frame: u64,
    start: Timestamp,
    /// End of its last response (or request): from then on it could have been reused.
    busy_until: Timestamp,
    exchanges: usize,
    handshake_ns: u64,
    active_ns: u64,
    /// Opened when an earlier connection to the same endpoint was free (set in `finish`).
    avoidable: bool,
    /// The server sent the first FIN: it, not the client, ended the connection.
    server_closed: bool,
}

#[derive(Default)]
pub struct ShortLived {
    /// Per (client host, server endpoint), in the order the connections were finalised.
    pairs: BTreeMap<(IpAddr, Endpoint), Vec<Conn>>,
    tracked: usize,
    /// Streams whose first FIN came from the server (until the connection is finalised).
    server_first_fin: Slots<bool>,
}

impl Detector for ShortLived {
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
        self.pairs
            .entry((s.endpoints[0].addr, s.endpoints[1]))
            .or_default()
            .push(Conn {
                stream: s.stream,
                endpoints: s.endpoints,
                vantage: conn.vantage,
                syn_frame: s.first_frame,
                start: s.start,
                busy_until,
                exchanges: answered,
                handshake_ns,
                active_ns: conn.active_ns(),
                avoidable: false,
                server_closed,
            });
    }

    fn finish(&mut self, out: &mut Vec<Finding>) {
        for ((client, server), mut conns) in std::mem::take(&mut self.pairs) {
            conns.sort_by_key(|c| (c.start, c.stream));
            // Avoidable: a short connection opened when an earlier connection to the same
            // endpoint had finished its exchanges and could have carried the request.
            // (Sorted by start: the earlier connections' free times in an ordered set; the
            // latest one before this start is the best candidate for reuse.)
            let mut free_times: BTreeSet<Timestamp> = BTreeSet::new();
            for c in &mut conns {
                let free = free_times
                    .range(..=c.start)
                    .next_back()
                    .is_some_and(|t| c.start.since(*t) <= MAX_REUSE_GAP_NS as i64);
                c.avoidable = free && c.exchanges <= MAX_EXCHANGES_PER_SHORT;
                free_times.insert(c.busy_until);
            }
            let short: Vec<&Conn> = conns
                .iter()
                .filter(|c| c.exchanges <= MAX_EXCHANGES_PER_SHORT)
                .collect();
            if short.len() < MIN_SHORT_CONNECTIONS {
                continue;
            }
            let avoidable: Vec<&Conn> = short.iter().copied().filter(|c| c.avoidable).collect();
            if avoidable.is_empty() {
                continue;
            }
            let first = short[0];
            // The median handshake: one connection whose client ACK was not captured
            // (tcptrace-http stream 41: SYN → request 189 ms on a 0.7 ms LAN) must not
            // set the price of all.
            let mut hs: Vec<u64> = short.iter().map(|c| c.handshake_ns).collect();
            hs.sort_unstable();
            let median_hs = hs[hs.len() / 2];
            let cost_ns = avoidable.len() as u64 * median_hs;
            let active: u64 = short.iter().map(|c| c.active_ns).sum();
            let mut f = Finding {
                cost_ns,
                connections: avoidable.len() as u64,
                share: Some(cost_ns as f64 / active.max(1) as f64),
                ..Finding::new(
                    FindingId::ConnectionShortLived,
                    first.stream,
                    first.endpoints,
                    first.vantage,
                )
            };
            for c in &short {
                let paid = c.avoidable;
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
            let mut listed: Vec<String> = short
                .iter()
                .take(MAX_LISTED)
                .map(|c| StreamRef(c.stream).to_string())
                .collect();
            if short.len() > MAX_LISTED {
                listed.push(format!("… ({} more)", short.len() - MAX_LISTED));
            }
            let exchanges: usize = short.iter().map(|c| c.exchanges).sum();
            f.explanation = format!(
                "{client} opened {} connections to {server} for {exchanges} request(s) (streams {}), \
                 at most {MAX_EXCHANGES_PER_SHORT} each. {} of them started after an earlier one \
                 had finished its exchanges, so a reused connection could have carried their \
                 requests without a handshake: {} × {} (median handshake RTT) = {}. Each new \
                 connection also starts in slow start: see the slow_start.new_connection \
                 findings on these streams (not counted here); when an idle timeout closed the earlier \
                 connections, connection.idle_close names the side and the timeout.",
                short.len(),
                listed.join(", "),
                avoidable.len(),
                avoidable.len(),
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
            let server_closed = short.iter().filter(|c| c.server_closed).count();
            if server_closed * 2 > short.len() {
                f.explanation.push_str(&format!(
                    " The server sent the first FIN on {server_closed} of the {} connections: \
                     it is the one closing them.",
                    short.len()
                ));
                f.fix = vec![server_fix, client_fix];
            } else {
                f.fix = vec![client_fix, server_fix];
            }
            f.confidence = if short.len() >= 3 {
                Confidence::High
            } else {
                Confidence::Medium
            };
            out.push(f);
        }
    }

    fn absorb(&mut self, o: Self) {
        self.tracked += o.tracked;
        for (key, list) in o.pairs {
            let mine = self.pairs.entry(key).or_default();
            mine.extend(list);
            mine.sort_by_key(|c| c.stream);
        }
    }
}
