//! `connection.idle_close`: one side closes a persistent connection after it was idle for
//! its keep-alive timeout T, and the next request has to open a new connection
//! (mechanisms.md "connection.idle_close", seed 01: sparse requests after a scale-out met
//! 60 s keep-alive timeouts; raising them to 5 min fixed it).
//!
//! Mechanism: HTTP servers and client pools close connections that carry no request for
//! T (nginx `keepalive_timeout` 75 s, Apache `KeepAliveTimeout` 5 s, Node.js
//! `server.keepAliveTimeout` 5 s, Go `http.Transport.IdleConnTimeout` 90 s). When requests
//! come less often than every T, each one finds its connection closed and pays a new
//! handshake and slow start.
//!
//! Signature: on a connection whose last request was answered (wireshark-sample-win-scale-
//! examples: a server that closes 13 s after an unanswered 6-byte message is not one) or
//! whose last request crossed the FIN (the FIN's ACK field does not cover it: the closer
//! never received it, the keep-alive race), a FIN after an idle time that a close on completion cannot take; the idle time before
//! the FIN is nearly the same on every such connection between the same client host and
//! server endpoint (the timer: the signal is the repetition, not the length, as idle
//! timeouts run from 100 ms in proxies and load balancers to minutes); then a new
//! connection (SYN) between them carries the next request. The side that sent the first
//! FIN closed. A single idle close counts when it is the only one between the hosts and
//! the next request paid a new connection for it (medium confidence: one idle period).
//!
//! A close on completion (`Connection: close`, HTTP/1.0, a client that is done) is sent
//! as soon as the closer wrote or read the last byte (`tcp_close` queues the FIN behind
//! the data, `tcp_send_fin`): after the closer's own last data the FIN follows it at once,
//! at every vantage point; after the peer's, within one RTT (that data's way to the
//! closer and the FIN's way back); either way plus the closer's scheduling delay,
//! [`MAX_CLOSE_REACTION_NS`]. A FIN that pacing held until an ACK leaves with that ACK
//! (it echoes its TSval, the round trip to the closer after it here): a completion too. A timer's FIN
//! comes T after the last data at the closer, and T plus up to one RTT elsewhere; T is
//! measured from the application's last write, which returns once the data is in the
//! send buffer, so on the wire the idle time can be shorter than T by the buffer's drain
//! (lab idle-close-1s: a 1 s timeout, 965–984 ms between the last data and the FIN).
//! After the peer's data the allowance is the round trip from the capture point to the
//! closer, none at the closer itself. And a FIN that the peer's next request crossed,
//! that request acknowledging all the closer's data, is no close on completion however
//! soon it came: the peer had the whole response and meant to reuse the connection,
//! which a close announced with the response (`Connection: close`) would have stopped;
//! the timer then ran from a write whose data was still draining (the timeout reported
//! is the idle time seen "or longer").
//!
//! Cost: the handshake RTT of every new connection that a close forced (its slow start is
//! `slow_start.new_connection`'s cost; the same handshakes are also what
//! `connection.short_lived` counts — the two findings describe one loss, pattern and
//! cause, and must not be added).
//!
//! Fix: on the side that closed, raise the idle timeout above the request interval (the
//! interval between requests is shown); on the other side, keep its own idle timeout
//! shorter than the peer's so it never sends on a connection being closed.
//!
//! A FIN that follows transmissions of the closer lost before the capture point (its
//! IPv4 IDs skip them, `ipid.rs`) is not timed: the FIN `close()` sent may have been one
//! of them, and the one seen its retransmission an RTO later (`tcp_retransmit_timer`, at
//! least 200 ms), which a few lost FINs repeat like a timer.
//!
//! False positives: a client that is simply done (its next request much later, beyond
//! [`MAX_INTERVAL_OVER_TIMEOUT`] × T and [`DEPLOYED_TIMEOUT_MAX_NS`], is not counted as
//! paying for the close); a server shutting down. Not detected: closes by RST, and closes with no later connection in the
//! capture (nobody paid yet).

use crate::detector::{host_pair, ms, Connection, Detector, HostPair, Segment, Slots};
use crate::finding::{list_streams, Confidence, Finding, FindingId, Fix, Host, StreamRef};
use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;
use tcpwhy_capture::Timestamp;
use tcpwhy_track::{ClientBy, Endpoint, SegmentKinds, Vantage};

use crate::catalogue::Entry;

/// `connection.idle_close` in the catalogue (crate::catalogue).
pub const IDLE_CLOSE: Entry = Entry {
    id: "connection.idle_close",
    title: "keep-alive timeout",
    meaning: "one side closes idle connections after the same time each time, and the next request pays a new connection",
    fix_goes_to: "both ends' keep-alive / pool settings",
    part_of: None,
    decided_by: None,
    judge: None,
};

/// A FIN at most this long beyond the connection's RTT after the last data may be a close
/// on completion (the application closed after its response, `Connection: close`,
/// HTTP/1.0, which `connection.short_lived` covers): the RTT holds the last data's way
/// to the closer and the FIN's way back; this bound, the closer's own delay between
/// reading or writing the last byte and `close()` — scheduling on a loaded host, tens of
/// ms. Half the shortest idle timeouts deployed (100 ms: proxies, load balancers), so
/// those are still seen, whatever the RTT (lab idle-close-client: 0.7 s at 1 ms RTT;
/// idle-close-1s: a 1 s timeout, 965–984 ms on the wire at 25 ms).
pub const MAX_CLOSE_REACTION_NS: u64 = 50_000_000;
/// A host's reaction to an ACK that releases held data (`delayed_ack::RELEASE_NS`).
const RELEASE_NS: u64 = crate::detectors::delayed_ack::RELEASE_NS;
/// Linux's TSval clock ticks once a millisecond (`tcp_time_stamp_ts`): the first segment
/// carrying an echoed TSval may be up to a tick before the one that was processed.
const TSVAL_TICK_NS: u64 = 1_000_000;
/// Idle times within this fraction of their median, or within the connection's RTT, are
/// the same timer: timer slack and event-loop granularity (lab idle-close: 1,509 and
/// 1,525 ms), and at the far end queueing that delays the last data more than the FIN
/// (wireshark-sample-ftpv6-2: a 2 s RTT dial-up path, 3.0 and 4.6 s).
pub const SAME_TIMER_TOLERANCE: f64 = 0.2;
/// Closes after the same idle time needed to call it a timer: one close could be a
/// one-off (a browser tidying up, suricata-verify-tls-subjectaltname: 3.7 s and 15.2 s).
pub const MIN_SAME_TIMER_CLOSES: usize = 2;
/// A new connection pays for a close if its request came within this many timeouts of
/// the previous request, or within [`DEPLOYED_TIMEOUT_MAX_NS`]: beyond both, keeping the
/// connection open would not be a reasonable fix (seed 01's fix raised 60 s to 5 min,
/// ×5). The absolute bound keeps short timers in view: a proxy closing after 135 ms
/// with requests every 1.8 s (sweep s12-033, ×13) is fixed by a 2 s timeout.
pub const MAX_INTERVAL_OVER_TIMEOUT: u64 = 10;
/// The longest keep-alive timeout a fix may ask for without question: seed 01's 5 min
/// (deployed defaults run from 100 ms in proxies to nginx's 75 s and Go's 90 s).
pub const DEPLOYED_TIMEOUT_MAX_NS: u64 = 300_000_000_000;
/// Closes and connections remembered per capture (bounded memory).
pub const MAX_TRACKED: usize = 1 << 20;
/// Closes whose idle times [`same_timer_from_writes`] tries as the timer, each against
/// the others: a bound on its time (it grows with the square of the closes), not a
/// threshold of the judgement, which reads every close up to this many. Beyond, the
/// closes tried are spread evenly over the capture.
const MAX_TIMER_SAMPLE: usize = 1024;

#[derive(Default)]
struct Live {
    /// Each side's last data segment (`[client, server]`): (frame, time, end).
    last_data: [Option<(u64, Timestamp, u64)>; 2],
    /// The first FIN: (frame, time, from_client), and the last data before it.
    fin: Option<(u64, Timestamp, bool, (u64, Timestamp))>,
    /// The round trip a close on completion may add before the FIN is seen here, beyond
    /// the closer's reaction (`on_connection`); `None` for the connection's RTT.
    fin_path: Option<u64>,
    /// The last data before the FIN was the closer's own.
    fin_after_own_data: bool,
    /// The closer's IP IDs show its transmissions lost before the capture point just
    /// before the FIN: the FIN seen may be a retransmission, its time the retransmission
    /// timer's rather than the close's.
    fin_after_hidden: bool,
    /// The first FIN's ACK field: the peer's bytes the closer had received when it closed.
    fin_ack: Option<u64>,
    /// End of the highest data each side sent (`[client, server]`, relative), FIN or not.
    data_end: [u64; 2],
    /// The ACK field of each side's last data segment, FIN or not: what it had received
    /// of the other side's data when it sent it.
    data_ack: [Option<u64>; 2],
}

#[derive(Clone, Copy)]
struct Close {
    stream: u64,
    endpoints: [Endpoint; 2],
    vantage: Vantage,
    by_client: bool,
    fin_frame: u64,
    fin_ts: Timestamp,
    idle_ns: u64,
    handshake_ns: Option<u64>,
    /// (frame, time) of the last data before the FIN.
    last_data: (u64, Timestamp),
    /// Start of the last request on the closed connection.
    last_request: Timestamp,
    /// The peer's next request crossed the FIN after the closer's last data had reached
    /// it (`on_connection`).
    raced: bool,
    /// The idle began at the closer's own last data.
    after_own_data: bool,
    /// Then, the time from the first byte of that data (its response, or its request) to
    /// the FIN: the timer ran from the application's last write, which returned between
    /// the first byte's send and the last's. Otherwise `idle_ns`.
    idle_upto_ns: u64,
}

#[derive(Clone, Copy)]
struct Opened {
    stream: u64,
    syn_frame: u64,
    syn_ts: Timestamp,
    first_request: Timestamp,
    handshake_ns: u64,
}

/// The connections one client host opened to one server endpoint, in the order
/// finalised, each as its change from the one before in variable-length integers
/// (postcard's: 7 bits a byte, signed ones zigzagged). `finish` reads only the pairs with
/// an idle close, and needs every connection of those, so the others are kept too, until
/// it is known: as an [`Opened`] each took 40 bytes, and the bench's 40 M-packet capture
/// has 324 k connections between one pair and no idle close (without them, analyze's peak
/// RSS on that capture was 136.7 MB instead of 149.2). A connection here takes about 15
/// bytes: streams and frames a few apart (1 and 2 bytes), SYNs, the request after the
/// SYN and the handshake milliseconds (4 bytes each).
#[derive(Default)]
struct OpenedLog {
    bytes: Vec<u8>,
    /// The stream, SYN frame and SYN time of the last connection pushed, which the next
    /// one is written against (zeros before the first, as [`OpenedLog::iter`] starts).
    last: (u64, u64, i64),
}

/// An [`Opened`] as written: changes from the one before (stream, SYN frame, SYN time),
/// the first request after the SYN, and the handshake.
type Delta = (i64, i64, i64, i64, u64);

impl OpenedLog {
    fn push(&mut self, o: Opened) {
        let (stream, frame, ts) = self.last;
        let delta: Delta = (
            o.stream.wrapping_sub(stream) as i64,
            o.syn_frame.wrapping_sub(frame) as i64,
            o.syn_ts.0.wrapping_sub(ts),
            o.first_request.0.wrapping_sub(o.syn_ts.0),
            o.handshake_ns,
        );
        let bytes = std::mem::take(&mut self.bytes);
        // Writing integers to a Vec cannot fail.
        self.bytes = postcard::to_extend(&delta, bytes).expect("integers encode");
        self.last = (o.stream, o.syn_frame, o.syn_ts.0);
    }

    /// Every connection pushed, in order.
    fn iter(&self) -> impl Iterator<Item = Opened> + '_ {
        let mut rest = &self.bytes[..];
        let mut last = (0u64, 0u64, 0i64);
        std::iter::from_fn(move || {
            let (d, tail): (Delta, _) = postcard::take_from_bytes(rest).ok()?;
            rest = tail;
            last = (
                last.0.wrapping_add(d.0 as u64),
                last.1.wrapping_add(d.1 as u64),
                last.2.wrapping_add(d.2),
            );
            Some(Opened {
                stream: last.0,
                syn_frame: last.1,
                syn_ts: Timestamp(last.2),
                first_request: Timestamp(last.2.wrapping_add(d.3)),
                handshake_ns: d.4,
            })
        })
    }
}

#[derive(Default)]
pub struct IdleClose {
    live: Slots<Live>,
    closes: BTreeMap<HostPair, Vec<Close>>,
    opened: HashMap<HostPair, OpenedLog>,
    tracked: usize,
}

impl Detector for IdleClose {
    // Only data and FINs make its state.
    const JUDGES_DATALESS: bool = false;

    // Inlined into the registry's one call per segment (detectors/mod.rs).
    #[inline(always)]
    fn on_segment(&mut self, seg: &Segment<'_>) {
        let ev = seg.ev;
        let skip = SegmentKinds::CAPTURE_DUPLICATE
            | SegmentKinds::KEEP_ALIVE
            | SegmentKinds::ZERO_WINDOW_PROBE;
        if ev.kinds.0 & skip != 0 {
            return;
        }
        // Only data and FINs change the state: pure ACKs need no lookup (a connection
        // without either is the default state `on_connection` assumes).
        if ev.payload_len == 0 && !seg.pkt.flags.fin() {
            return;
        }
        let live = self.live.get_or_default(seg);
        let side = usize::from(!ev.from_client);
        let end = ev.rel_seq.saturating_add(u64::from(ev.payload_len));
        if ev.payload_len > 0 {
            live.data_end[side] = live.data_end[side].max(end);
            if seg.pkt.flags.ack() {
                live.data_ack[side] = ev.rel_ack;
            }
        }
        if live.fin.is_some() {
            return;
        }
        if ev.payload_len > 0 {
            live.last_data[side] = Some((seg.frame, seg.ts, end));
        }
        if seg.pkt.flags.fin() {
            let fin_ack = seg.pkt.flags.ack().then_some(ev.rel_ack).flatten();
            // The closer's last activity: its own last data, or the peer's if the closer
            // had received it (the FIN's ACK field covers it). Peer data the FIN does not
            // acknowledge crossed it on the way and was never seen by the closer's timer
            // (sweep s4-081 at the client: its request left 199 ms before the server's
            // FIN arrived, 448 ms after the server's last data).
            let [mine, peer] = if ev.from_client {
                live.last_data
            } else {
                [live.last_data[1], live.last_data[0]]
            };
            let peer = peer.filter(|p| fin_ack.is_none_or(|a| p.2 <= a));
            let last = match (mine, peer) {
                (Some(m), Some(p)) => Some(if p.1 > m.1 { (p, false) } else { (m, true) }),
                (Some(m), None) => Some((m, true)),
                (None, p) => p.map(|p| (p, false)),
            };
            // A FIN that `close()` queued at once can still wait for an ACK (BBR's pacing,
            // `tcp_pacing_check`, holds it like data): it then leaves the moment the ACK
            // arrives, echoing its TSval. Seen here, the echoed segment came the round
            // trip to the closer (and its reaction, `RELEASE_NS`, with a tick of the
            // peer's TSval clock) before the FIN (sweep s16-089 at the server, a
            // connection per request: its FIN 119 ms after its response, 17 µs after the
            // client's first ACK of it).
            let leg = ev.conn.handshake_leg_to(ev.sender());
            let released = ev.ts_rtt.is_some_and(|(_, ns)| {
                ns <= leg
                    .unwrap_or(0)
                    .saturating_add(RELEASE_NS)
                    .saturating_add(TSVAL_TICK_NS)
            });
            if let Some(((data_frame, data_ts, _), own)) = last {
                live.fin = Some((seg.frame, seg.ts, ev.from_client, (data_frame, data_ts)));
                live.fin_ack = fin_ack;
                live.fin_after_hidden = ev.ip_id.hidden().is_some();
                // After the closer's own data nothing (unless an ACK of it released the
                // FIN: that data's whole round trip); after the peer's, the round trip
                // from here to the closer (`on_connection`).
                live.fin_after_own_data = own;
                live.fin_path = match (own, released) {
                    (true, false) => Some(0),
                    (true, true) => None,
                    (false, _) => leg,
                };
            }
        }
    }

    fn on_connection(&mut self, conn: &Connection<'_>, _out: &mut Vec<Finding>) {
        let s = conn.summary;
        let live = self.live.take(conn).unwrap_or_default();
        let (Some(first), Some(last)) = (conn.exchanges.first(), conn.exchanges.last()) else {
            return;
        };
        if self.tracked >= MAX_TRACKED {
            return;
        }
        self.tracked += 1;
        let key = host_pair(&s.endpoints);
        if let (ClientBy::Syn, Some(handshake_ns)) = (s.client_by, s.handshake_rtt_ns()) {
            self.opened.entry(key).or_default().push(Opened {
                stream: s.stream,
                syn_frame: s.first_frame,
                syn_ts: s.start,
                first_request: first.request.start,
                handshake_ns,
            });
        }
        // Idle between requests: its last request was answered (a FIN while a request
        // waits is a request timeout or an abort, not a keep-alive timeout), or the
        // closer had not received it when it closed: the FIN's ACK field (RFC 9293
        // §3.10.7.4: every segment acknowledges what arrived in order) stops short of the
        // peer's data, which crossed the FIN on the way (the keep-alive race: sweep
        // s4-081, the server's FIN after 448 ms idle acknowledged byte 800, the client's
        // next request was bytes 801–1200 and met a RST, and the client retried on a new
        // connection). The last request is then the last one answered.
        let crossed = live
            .fin
            .zip(live.fin_ack)
            .is_some_and(|((_, _, by_client, _), ack)| live.data_end[usize::from(by_client)] > ack);
        // And when the data that crossed it acknowledged all the closer's data, the peer
        // sent it after the closer's last byte had reached it, before the FIN did: it
        // meant to use the connection again, so nothing had announced a close on
        // completion (`Connection: close`, after which a client opens a new connection
        // instead). The close was the closer's timer, however soon after its last data
        // it came: a timer counted from the application's last write runs while the
        // send buffer drains (sweep s79-057: a 110 ms keep-alive timeout, the response
        // drained in 197 ms at 97 ms RTT, the FIN 18 ms after its last data on the wire,
        // and the client's next request, sent 1 ms after the response arrived, met a RST).
        let raced = crossed
            && live.fin.is_some_and(|(_, _, by_client, _)| {
                live.data_ack[usize::from(by_client)]
                    .is_some_and(|a| a >= live.data_end[usize::from(!by_client)])
            });
        let answered = conn.exchanges.iter().rev().find(|x| x.response.is_some());
        let last_request = match (last.response.is_some(), crossed, answered) {
            (true, _, _) => Some(last),
            (false, true, Some(x)) => Some(x),
            _ => None,
        };
        // A FIN right after transmissions of the closer lost before the capture point
        // (its IP IDs skip them) is no idle close that can be timed: the FIN that
        // `close()` sent at once may be one of them, and the one seen its retransmission
        // an RTO later, at least `TCP_RTO_MIN`'s 200 ms (`tcp_retransmit_timer`; the
        // bench's mixed capture at the client, 0.1 % loss: four servers' FINs 218–227 ms
        // after their responses, each the next ID but one after the response's last).
        let timed_fin = live.fin.filter(|_| !live.fin_after_hidden);
        if let (Some((fin_frame, fin_ts, by_client, last_data)), Some(last)) =
            (timed_fin, last_request)
        {
            let idle_ns = fin_ts.elapsed_since(last_data.1);
            // After the closer's own data the gap is its own reaction, the same at every
            // vantage point (the FIN follows the data the same way: `tcp_send_fin` queues it
            // behind any data not yet sent); after the peer's, it also holds that data's way
            // to the closer and the FIN's way back here: the round trip from this capture
            // point to the closer, up to one RTT at the far end (sweep s19-057: a server's
            // 113 ms timer from its last write, 53–71 ms on the wire after its last data on
            // a 37 ms path, was within RTT + reaction; s21-041: 113 ms after its response on
            // a 165 ms path), none at the closer's own (s81-065 at the client, a 151 ms
            // idle timer on a 140 ms path: its FIN 151 ms after the response arrived was
            // read as within the RTT of it). A FIN released by the peer's ACK of the
            // closer's own data waited for that data's whole round trip, at any vantage.
            let path = live.fin_path.or(conn.rtt_ns).unwrap_or(0);
            let completion = path.saturating_add(MAX_CLOSE_REACTION_NS);
            if idle_ns > completion || raced {
                let own_start = if by_client {
                    Some(last.request.start)
                } else {
                    last.response.as_ref().map(|r| r.start)
                };
                let idle_upto_ns = own_start
                    .filter(|_| live.fin_after_own_data)
                    .map_or(idle_ns, |t| fin_ts.elapsed_since(t).max(idle_ns));
                self.closes.entry(key).or_default().push(Close {
                    stream: s.stream,
                    endpoints: s.endpoints,
                    vantage: conn.vantage,
                    by_client,
                    fin_frame,
                    fin_ts,
                    idle_ns,
                    handshake_ns: conn.rtt_ns,
                    last_data,
                    last_request: last.request.start,
                    raced,
                    after_own_data: live.fin_after_own_data,
                    idle_upto_ns,
                });
            }
        }
    }

    fn finish(&mut self, out: &mut Vec<Finding>) {
        for ((client, server), closes) in std::mem::take(&mut self.closes) {
            let log = self.opened.remove(&(client, server));
            // Read from the log when a side's closes show a timer, once for both sides:
            // the connections opened after the first FIN (`pay` looks at none before
            // it), sorted, stable so that the parts of one stream keep the order they
            // were finalised in. Reading every connection of a pair whenever it had a
            // close made the bench's 40 M-packet capture's peak (13 MB and a sort's
            // buffer for 324 k connections, where no close made a finding).
            // A pair is filed with its first close.
            let Some(first_fin) = closes.iter().map(|c| c.fin_ts).min() else {
                continue;
            };
            let read = std::cell::OnceCell::new();
            let opened = || {
                read.get_or_init(|| {
                    let mut opened: Vec<Opened> = log.as_ref().map_or_else(Vec::new, |log| {
                        log.iter().filter(|o| o.syn_ts >= first_fin).collect()
                    });
                    opened.sort_by_key(|o| (o.syn_ts, o.stream));
                    opened
                })
                .as_slice()
            };
            for by_client in [false, true] {
                let mut mine: Vec<Close> = closes
                    .iter()
                    .copied()
                    .filter(|c| c.by_client == by_client)
                    .collect();
                if mine.is_empty() {
                    continue;
                }
                mine.sort_by_key(|c| (c.fin_ts, c.stream));
                if let Some(f) = judge(&mine, opened, client, server) {
                    out.push(f);
                }
            }
        }
    }

    fn absorb(&mut self, o: Self) {
        self.tracked += o.tracked;
        for (key, list) in o.closes {
            let mine = self.closes.entry(key).or_default();
            mine.extend(list);
            mine.sort_by_key(|c| c.stream);
        }
        // The other shard's after this one's: `finish` sorts them, and only the parts of
        // one stream keep this order.
        for (key, log) in o.opened {
            let mine = self.opened.entry(key).or_default();
            log.iter().for_each(|c| mine.push(c));
        }
    }
}

/// The closes that one timer counted from the closer's last write can explain: each
/// close's timer lies between its idle after the closer's last data and its idle after
/// that data's first byte ([`Close::idle_upto_ns`]), widened like the median's rule in
/// [`judge`]; the time that the most closes' ranges hold is the timer. On the wire a
/// response's drain shortens the idle by a different time on each connection (sweep
/// s88-025: a 1,528 ms server timer; 102 KB drained in 685 ms on a new connection at
/// 219 ms RTT and in 154 ms on a warm one, the FINs 1,076 and 1,404 ms after the last
/// data, 1,760 and 1,558 ms after the first).
fn same_timer_from_writes(closes: &[Close]) -> Vec<&Close> {
    let holds = |c: &Close, t: u64| {
        let rtt = c.handshake_ns.unwrap_or(0).min(t / 2);
        let slack = ((t as f64 * SAME_TIMER_TOLERANCE) as u64).max(rtt);
        c.idle_ns.saturating_sub(slack) <= t && t <= c.idle_upto_ns.saturating_add(slack)
    };
    // Every candidate against every close: the square of the closes. Past
    // [`MAX_TIMER_SAMPLE`] closes both come from that many, evenly spread in FIN order,
    // and only the last filter reads them all.
    let step = closes.len().div_ceil(MAX_TIMER_SAMPLE).max(1);
    let sample: Vec<&Close> = closes.iter().step_by(step).collect();
    let best = sample
        .iter()
        .flat_map(|c| [c.idle_ns, c.idle_upto_ns])
        .max_by_key(|&t| {
            (
                sample.iter().filter(|c| holds(c, t)).count(),
                std::cmp::Reverse(t),
            )
        });
    best.map_or_else(Vec::new, |t| {
        closes.iter().filter(|c| holds(c, t)).collect()
    })
}

/// Each close of `same` with the first connection of `opened` (sorted by SYN time) that
/// began at or after its FIN, is not the closed one and no earlier close took, when
/// `soon` accepts the two; a connection pays for one close at most. A binary search
/// finds the first connection after the FIN and a union-find over the indexes skips the
/// taken ones: a linear scan for each close took time in the square of the connections
/// between two hosts (a keep-alive timeout on a busy server closes most of them).
fn pay<'c>(
    same: &[&'c Close],
    opened: &[Opened],
    soon: impl Fn(&Close, &Opened) -> bool,
) -> Vec<(&'c Close, Opened)> {
    // `next[i]`: an index at or after `i` whose connection may be untaken; itself when so.
    let mut next: Vec<usize> = (0..=opened.len()).collect();
    fn free(next: &mut [usize], mut i: usize) -> usize {
        while next[i] != i {
            next[i] = next[next[i]];
            i = next[i];
        }
        i
    }
    let mut paid = Vec::new();
    for &c in same {
        let mut i = free(&mut next, opened.partition_point(|o| o.syn_ts < c.fin_ts));
        while opened.get(i).is_some_and(|o| o.stream == c.stream) {
            i = free(&mut next, i + 1);
        }
        let Some(o) = opened.get(i) else { continue };
        if soon(c, o) {
            next[i] = i + 1;
            paid.push((c, *o));
        }
    }
    paid
}

/// One finding for the closes of one side towards one server endpoint, if requests paid;
/// `opened` gives the connections opened at or after the first FIN of the pair's closes,
/// sorted by SYN time, and is called only when the closes show a timer.
fn judge<'o>(
    closes: &[Close],
    opened: impl FnOnce() -> &'o [Opened],
    client: IpAddr,
    server: Endpoint,
) -> Option<Finding> {
    let mut idles: Vec<u64> = closes.iter().map(|c| c.idle_ns).collect();
    idles.sort_unstable();
    let median = idles[idles.len() / 2];
    let tol = (median as f64 * SAME_TIMER_TOLERANCE) as u64;
    let same: Vec<&Close> = closes
        .iter()
        .filter(|c| {
            // The RTT allowance is capped: a handshake stretched by a stray first SYN
            // (suricata-verify-tls-subjectaltname stream 1: 13 s) must not merge all.
            let rtt = c.handshake_ns.unwrap_or(0).min(median / 2);
            c.idle_ns.abs_diff(median) <= tol.max(rtt)
        })
        .collect();
    // One idle close alone is enough when no other idle close between the same hosts
    // contradicts it and the next request paid a new connection for it (sweep s2-089:
    // a client pool closing after 748 ms, its next request 1.8 s later on a new
    // connection): a close on completion follows the last data at once
    // (MAX_CLOSE_REACTION_NS), so a FIN after an idle period is the closer's timer. Idle
    // closes that disagree (tcptrace-http: a browser's closes after 3.9 s and another
    // time) show no timer, and are still left alone.
    let alone = closes.len() == 1;
    let same = if same.len() < MIN_SAME_TIMER_CLOSES && !alone {
        same_timer_from_writes(closes)
    } else {
        same
    };
    if same.len() < MIN_SAME_TIMER_CLOSES && !alone {
        return None;
    }
    // Each close is paid by the first new connection after its FIN, if its request came
    // soon enough; a connection pays for one close at most.
    let bound = MAX_INTERVAL_OVER_TIMEOUT
        .saturating_mul(median)
        .max(DEPLOYED_TIMEOUT_MAX_NS);
    let paid: Vec<(&Close, Opened)> = pay(&same, opened(), |c, o| {
        o.first_request.elapsed_since(c.last_request) <= bound
    });
    let (first, _) = paid.first().copied()?;
    let closer = if first.by_client { "client" } else { "server" };
    let other = if first.by_client { "server" } else { "client" };
    let cost_ns: u64 = paid.iter().map(|(_, o)| o.handshake_ns).sum();
    let (min_idle, max_idle) = same.iter().fold((u64::MAX, 0), |(lo, hi), c| {
        (lo.min(c.idle_ns), hi.max(c.idle_ns))
    });
    let intervals: Vec<u64> = paid
        .iter()
        .map(|(c, o)| o.first_request.elapsed_since(c.last_request))
        .collect();
    let min_interval = intervals.iter().copied().min().unwrap_or(0);
    let mut f = Finding {
        cost_ns,
        connections: paid.len() as u64,
        confidence: if paid.len() >= 2 {
            Confidence::High
        } else {
            Confidence::Medium
        },
        ..Finding::new(
            FindingId::ConnectionIdleClose,
            first.stream,
            first.endpoints,
            first.vantage,
        )
    };
    for (c, o) in &paid {
        f.cite(
            c.last_data.0,
            c.last_data.1,
            format!(
                "stream {}: last data before the idle period",
                StreamRef(c.stream)
            ),
        );
        f.cite(
            c.fin_frame,
            c.fin_ts,
            format!(
                "stream {}: {closer}'s FIN after {} idle",
                StreamRef(c.stream),
                ms(c.idle_ns)
            ),
        );
        f.cite(
            o.syn_frame,
            o.syn_ts,
            format!(
                "stream {}: new connection for the next request, {} after the FIN (handshake {})",
                StreamRef(o.stream),
                ms(o.syn_ts.elapsed_since(c.fin_ts)),
                ms(o.handshake_ns)
            ),
        );
    }
    let streams = list_streams(paid.iter().map(|(_, o)| o.stream), paid.len());
    let spread = if same.len() > 1 {
        format!(
            "after {}–{} each time on {} connection(s)",
            ms(min_idle),
            ms(max_idle),
            same.len()
        )
    } else {
        format!("after {}", ms(min_idle))
    };
    let ignored = closes.len() - same.len();
    let ignored_note = if ignored > 0 {
        format!(" ({ignored} other idle close(s) with a different idle time are left out.)")
    } else if same.len() == 1 {
        " One idle close was seen: the timeout is read from a single idle period, and a \
         second close after the same time would confirm it."
            .to_string()
    } else {
        String::new()
    };
    // After the closer's own last data, and after a race (whose request shows the peer had
    // all the data), the idle seen on the wire is a lower bound: the timer may have run
    // from the write, whose data then drained from the send buffer (sweep s86-041: a 115
    // ms timer, 54–58 ms on the wire after the server's response).
    const DRAINS: &str = "a timer that starts at the application's last write runs while \
                          its data drains from the send buffer";
    let raced = same.iter().any(|c| c.raced);
    let from_own_data = same.iter().all(|c| c.after_own_data);
    let note = if raced {
        format!(
            " (a request sent after the whole response had arrived crossed the FIN, so this \
             was no close on completion; {DRAINS}, so the timeout can be longer than the idle \
             time seen on the wire)"
        )
    } else if from_own_data {
        format!(" (from its own last data; {DRAINS})")
    } else {
        String::new()
    };
    let longer = if raced || from_own_data {
        " or longer"
    } else {
        ""
    };
    f.explanation = format!(
        "The {closer} ({}) closed keep-alive connections between {client} and {server} \
         (FIN) {spread} without data: its idle timeout is about {}{longer}{note}. The next request came {} \
         or more after the previous one, so {} request(s) found the connection closed and \
         opened a new one (stream(s) {}), each paying a handshake: {} in all, plus slow start \
         again (slow_start.new_connection on those streams, not counted here). These are the \
         same handshakes connection.short_lived counts: do not add the two.{ignored_note}",
        if first.by_client {
            client.to_string()
        } else {
            server.to_string()
        },
        ms(median),
        ms(min_interval),
        paid.len(),
        streams,
        ms(cost_ns),
    );
    let closer_host = if first.by_client {
        Host::Client
    } else {
        Host::Server
    };
    let other_host = if first.by_client {
        Host::Server
    } else {
        Host::Client
    };
    let setting = if first.by_client {
        "the connection pool's idle timeout (e.g. nginx upstream `keepalive_timeout`, Go \
         `http.Transport.IdleConnTimeout`)"
    } else {
        "the keep-alive idle timeout (e.g. nginx `keepalive_timeout`, Apache \
         `KeepAliveTimeout`, Node.js `server.keepAliveTimeout`)"
    };
    f.fix = vec![
        Fix {
            host: closer_host,
            action: format!(
                "raise {setting} from about {}{longer} to above the request interval ({} here; seed 01 \
                 went from 60 s to 5 min)",
                ms(median),
                ms(min_interval)
            ),
        },
        Fix {
            host: other_host,
            action: format!(
                "keep the {other}'s own idle timeout below the {closer}'s, so it never sends a \
                 request on a connection being closed"
            ),
        },
    ];
    Some(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(stream: u64, fin_ms: i64, request_ms: i64) -> Close {
        let ep = Endpoint {
            addr: IpAddr::from([10, 0, 0, 1]),
            port: 80,
        };
        let t = |ms: i64| Timestamp::from_nanos(ms * 1_000_000);
        Close {
            stream,
            endpoints: [ep, ep],
            vantage: Vantage::Server,
            by_client: false,
            fin_frame: stream,
            fin_ts: t(fin_ms),
            idle_ns: 100_000_000,
            handshake_ns: Some(1_000_000),
            last_data: (stream, t(fin_ms - 100)),
            last_request: t(request_ms),
            raced: false,
            after_own_data: true,
            idle_upto_ns: 100_000_000,
        }
    }

    fn opened(stream: u64, syn_ms: i64) -> Opened {
        let t = Timestamp::from_nanos(syn_ms * 1_000_000);
        Opened {
            stream,
            syn_frame: stream,
            syn_ts: t,
            first_request: t,
            handshake_ns: 1_000_000,
        }
    }

    /// What `pay` replaced: for each close, a scan of every connection.
    fn pay_by_scan(
        same: &[&Close],
        opened: &[Opened],
        soon: impl Fn(&Close, &Opened) -> bool,
    ) -> Vec<(u64, u64)> {
        let mut used = std::collections::HashSet::new();
        let mut paid = Vec::new();
        for c in same {
            let next = opened.iter().find(|o| {
                o.syn_ts >= c.fin_ts && o.stream != c.stream && !used.contains(&o.stream)
            });
            let Some(o) = next else { continue };
            if soon(c, o) {
                used.insert(o.stream);
                paid.push((c.stream, o.stream));
            }
        }
        paid
    }

    /// Closes and connections at random times, many at the same millisecond, a close's
    /// own connection among them, and a `soon` that refuses some pairs: the same pairs as
    /// the scan.
    #[test]
    fn paying_pairs_each_close_with_the_first_untaken_connection_after_it() {
        let mut rnd = crate::test_rng(0x853c_49e6_748f_ea9b);
        for _ in 0..500 {
            let n = rnd(40) as usize + 1;
            let mut closes: Vec<Close> = (0..n)
                .map(|i| close(i as u64, rnd(50) as i64, rnd(50) as i64 - 60))
                .collect();
            closes.sort_by_key(|c| (c.fin_ts, c.stream));
            let mut open: Vec<Opened> = (0..rnd(40) + 1)
                .map(|i| {
                    opened(
                        if rnd(4) == 0 { rnd(n as u64) } else { 1000 + i },
                        rnd(60) as i64,
                    )
                })
                .collect();
            // One entry per connection, as `on_connection` makes them.
            let mut seen = std::collections::HashSet::new();
            open.retain(|o| seen.insert(o.stream));
            open.sort_by_key(|o| (o.syn_ts, o.stream));
            let same: Vec<&Close> = closes.iter().collect();
            let refuse = rnd(7);
            let soon = |c: &Close, o: &Opened| (c.stream + o.stream) % 7 != refuse;
            let fast: Vec<(u64, u64)> = pay(&same, &open, soon)
                .iter()
                .map(|(c, o)| (c.stream, o.stream))
                .collect();
            assert_eq!(fast, pay_by_scan(&same, &open, soon));
        }
    }

    /// 30 closes after the same 100 ms, each paid by the next connection (stream 1000 +
    /// i, 50 ms after the FIN): the explanation names the first 20 paying streams and
    /// counts the other 10, where it used to name all (up to `MAX_TRACKED`).
    #[test]
    fn the_paying_streams_named_are_a_few_and_the_rest_counted() {
        let closes: Vec<Close> = (0..30).map(|i| close(i, 1_000 * i as i64, 0)).collect();
        let opened: Vec<Opened> = (0..30)
            .map(|i| opened(1000 + i, 1_000 * i as i64 + 50))
            .collect();
        let server = Endpoint {
            addr: IpAddr::from([10, 0, 0, 2]),
            port: 80,
        };
        let f = judge(&closes, || &opened, IpAddr::from([10, 0, 0, 1]), server).expect("a finding");
        assert_eq!(f.connections, 30);
        let named: Vec<String> = (1000..1020).map(|s: u64| s.to_string()).collect();
        let want = format!(
            "30 request(s) found the connection closed and opened a new one (stream(s) {}, … (10 \
             more))",
            named.join(", ")
        );
        assert!(f.explanation.contains(&want), "{}", f.explanation);
    }

    /// `finish` reads the log of a pair's connections (finalised in any order, on two
    /// shards) as `judge` reads every connection sorted by SYN time, though it leaves out
    /// those opened before the first FIN: connections just before it, at it and after it,
    /// parts of one stream included.
    #[test]
    fn finish_reads_the_log_as_every_connection() {
        let mut rnd = crate::test_rng(0x2545_f491_4f6c_dd1d);
        let server = Endpoint {
            addr: IpAddr::from([10, 0, 0, 2]),
            port: 80,
        };
        let client = IpAddr::from([10, 0, 0, 1]);
        for round in 0..200 {
            let closes: Vec<Close> = (0..rnd(12) + 2)
                .map(|i| close(i, 500 + 1_000 * i as i64 + rnd(3) as i64, 0))
                .collect();
            let first_fin = closes.iter().map(|c| c.fin_ts).min().expect("closes");
            let mut open: Vec<Opened> = (0..rnd(40) + 1)
                .map(|i| {
                    let o = opened(1000 + rnd(i + 1), rnd(15_000) as i64);
                    match rnd(4) {
                        0 => Opened {
                            syn_ts: first_fin,
                            ..o
                        },
                        1 => Opened {
                            syn_ts: Timestamp(first_fin.0 - 1),
                            ..o
                        },
                        _ => o,
                    }
                })
                .collect();
            for o in &mut open {
                o.first_request = o.syn_ts;
                o.syn_frame = rnd(1 << 20);
            }
            let (mut a, mut b) = (IdleClose::default(), IdleClose::default());
            for (i, c) in closes.iter().enumerate() {
                let d = if i % 2 == 0 { &mut a } else { &mut b };
                d.closes.entry((client, server)).or_default().push(*c);
            }
            for o in &open {
                let d = if rnd(3) == 0 { &mut a } else { &mut b };
                d.opened.entry((client, server)).or_default().push(*o);
            }
            // What `finish` read before: every connection, in the order absorbed, sorted.
            let mut every: Vec<Opened> = [&a, &b]
                .iter()
                .flat_map(|d| d.opened.values().flat_map(|log| log.iter()))
                .collect();
            every.sort_by_key(|o| (o.syn_ts, o.stream));
            let mut sorted = closes.clone();
            sorted.sort_by_key(|c| (c.fin_ts, c.stream));
            let want = judge(&sorted, || &every, client, server);

            a.absorb(b);
            let mut out = Vec::new();
            a.finish(&mut out);
            let got = out.first();
            let seen = |f: Option<&Finding>| {
                f.map(|f| {
                    let frames: Vec<u64> = f.evidence.iter().map(|e| e.frame).collect();
                    (f.cost_ns, f.connections, frames, f.explanation.clone())
                })
            };
            assert_eq!(seen(got), seen(want.as_ref()), "round {round}");
            assert!(out.len() <= 1);
        }
    }

    /// Past [`MAX_TIMER_SAMPLE`] closes the timer is tried on a sample, then read over
    /// all of them: of 200,000 closes, 3 in 5 after 100 ms and the others after 1–11 s
    /// (none within the 100 ms timer's slack), the timer holds exactly the 120,000.
    #[test]
    fn a_timer_shared_by_most_closes_is_found_past_the_sample() {
        let closes: Vec<Close> = (0..200_000)
            .map(|i| {
                let mut c = close(i, i as i64, 0);
                if i % 5 < 2 {
                    c.idle_ns = 1_000_000_000 + (i % 1000) * 10_000_000;
                    c.idle_upto_ns = c.idle_ns;
                }
                c
            })
            .collect();
        assert!(closes.len() > MAX_TIMER_SAMPLE);
        let same = same_timer_from_writes(&closes);
        assert_eq!(same.len(), 120_000);
        assert!(same.iter().all(|c| c.idle_ns == 100_000_000));
    }

    /// The log gives back every connection as pushed, whatever the numbers (streams and
    /// frames down as well as up, a clock stepping back, the extremes), and a connection
    /// a few streams, frames and milliseconds after the one before takes at most 15 bytes.
    #[test]
    fn the_log_gives_back_what_was_pushed_in_few_bytes() {
        let ms = |n: i64| Timestamp::from_nanos(n * 1_000_000);
        let at =
            |stream: u64, syn_frame: u64, syn: Timestamp, request: Timestamp, hs: u64| Opened {
                stream,
                syn_frame,
                syn_ts: syn,
                first_request: request,
                handshake_ns: hs,
            };
        let odd = [
            at(7, 70, ms(5), ms(6), 1_000_000),
            at(3, 20, ms(1), ms(0), 0),
            at(
                u64::MAX,
                u64::MAX,
                Timestamp(i64::MAX),
                Timestamp(i64::MIN),
                u64::MAX,
            ),
            at(0, 0, Timestamp(i64::MIN), Timestamp(i64::MAX), 1),
        ];
        let mut log = OpenedLog::default();
        odd.iter().for_each(|&o| log.push(o));
        let back: Vec<Opened> = log.iter().collect();
        let fields = |o: &Opened| {
            (
                o.stream,
                o.syn_frame,
                o.syn_ts,
                o.first_request,
                o.handshake_ns,
            )
        };
        assert_eq!(
            back.iter().map(fields).collect::<Vec<_>>(),
            odd.iter().map(fields).collect::<Vec<_>>()
        );

        // The bench's pair: a connection every 1.1 ms, 3 streams and 120 frames apart,
        // its request 8.6 ms after its SYN, handshakes of 8.5 ms.
        let mut log = OpenedLog::default();
        let n = 10_000u64;
        for i in 0..n {
            let syn = Timestamp(1_100_000 * i as i64);
            log.push(at(
                3 * i,
                120 * i,
                syn,
                Timestamp(syn.0 + 8_600_000),
                8_500_000,
            ));
        }
        assert_eq!(log.iter().count() as u64, n);
        assert!(
            log.bytes.len() as u64 <= 15 * n,
            "{} bytes",
            log.bytes.len()
        );
    }
}
