//! `app.server_think_time`: the time between the last byte of a request and the first
//! byte of its response is the server application's, not TCP's (mechanisms.md
//! "app.server_think_time"; seed 01's trace-span decomposition).
//!
//! Signature: the request is complete (and ACKed), the server sends nothing, then the
//! response starts. At the server the gap is the processing time itself. At the client
//! it also holds one round trip (the request's way there and the response's way back),
//! which is subtracted; in the middle, the part of the round trip beyond the tap. The
//! round trip subtracted is the one that applied to that request: the RTT sample of the
//! server's pure ACK of the client's data that arrived after the request's last byte and
//! before the response (tap → server → tap, whatever the vantage point); else, of the
//! latest RTT sample before the request and the first one within its response, the one
//! nearer in time to the request; else the handshake's (in the middle, its SYN → SYN/ACK
//! part). The handshake alone is not enough: a path whose RTT grew after it (a queue, a
//! route change, `rtt-step` in the lab) would turn the growth into "thinking"; nor is a
//! sample from long before the request (lab `rtt-rise`: 1 ms RTT until 1.5 s, 150 ms
//! after; the third request's response came 155 ms after it, and 1.18 ms measured a
//! second earlier made that 153 ms of thinking). Samples are the server's pure ACKs of
//! client data, and the server's data that echoes the TSval of a client's pure ACK (RFC
//! 7323 §4.3: the sender echoes the latest TSval it received; an ACK-clocked sender sends
//! on the ACK's arrival, `tcp_ack` → `tcp_data_snd_check`), which is tap → server → tap
//! as well. An ACK carried by the response itself is no sample, nor data echoing the
//! request's TSval: both waited for the thinking. A sample under half the handshake's RTT is not used either: the ACK came
//! from nearer than the server (a proxy or security software acknowledging for it, seed
//! 02; `suricata-verify-mime-stream-depth.pcap`: ACKs after 0.13 ms on a 111 ms path,
//! responses 102 ms after the requests), and the handshake's RTT is kept.
//!
//! The server's clock: a sample measures the way back of the server packet that closed
//! it, not the response's. When both carry a TSval (the server's clock at departure, RFC
//! 7323 §3; `tcp_options_write()` in net/ipv4/tcp_output.c), the time between them here
//! minus the time between them on that clock is how much longer the response's way back
//! took, and it is subtracted too (sweep s9-081: the server ACKed the request at TSval
//! 044 and sent its response at 045, 1 ms later, while the response reached the client
//! 5.25 ms after the ACK — a delay in the path, which the request's ACK sample did not
//! hold, was named 5.25 ms of thinking). The clock's tick is the server's TSval rate
//! over the connection, and one tick of the growth is left out (whole ticks are 1 tick
//! uncertain). The way *to* the server is not measured so: a request delayed more than
//! the sample's packets still reads as thinking (sweep s7-081, 5 ms); nor is anything
//! when the snaplen cut the timestamps option (s9-051, snaplen 64). Without the server's
//! clock, the round trip of the response's own data (the client's first ACK of it to the
//! second round that ACK released) is a check: shorter than the one subtracted by as much
//! as the thinking, the path's delay was moving and the exchange is left out (said so;
//! sweep s67-014). A longer one says nothing (a server writing in pieces).
//!
//! Not the server's: a gap whose first response segment was not the response's first
//! transmission. When that segment shows the server's earlier transmissions lost before
//! the capture point (its IPv4 ID skipped numbers while the server's IDs count its
//! packets, `crate::ipid`, the signature `loss.rto` / `loss.tail_loss_probe` read at the
//! receiver) or is itself flagged a retransmission, the gap holds a loss recovery that
//! those findings price, and the thinking inside it cannot be separated: the exchange
//! is left out (and said so).
//!
//! Cost: the sum of the processing times. Reported so that the user reads "TCP cost you
//! 4 ms of this 300 ms request; the server took 290 ms". Fix: on the server: profile the
//! handler, its downstream calls and queues.
//!
//! Known false positives / negatives: a server that delays its ACK of the request (Linux
//! delayed ACK, 40 ms or more) and then thinks longer makes the ACK's sample hold that
//! delay: the thinking is underestimated by it, as by a server that wrote its response in
//! pieces (its data waited for the application, not only the path). A lost pure ACK of the server does not
//! hide the response (the response acknowledges more than the server's previous packet,
//! and the skip is not read as a lost response).

use crate::detector::{emptied_vec, ms, Connection, Detector, Reusable, Segment, Slots};
use crate::exchange::{joined_rounds, Exchange, MAX_EXCHANGES};
use crate::finding::{Confidence, Finding, FindingId, Fix, Host};
use tcpwhy_capture::Timestamp;
use tcpwhy_track::{SegmentKinds, Vantage};

use crate::catalogue::Entry;

/// `app.server_think_time` in the catalogue (crate::catalogue).
pub const SERVER_THINK_TIME: Entry = Entry {
    id: "app.server_think_time",
    title: "server think time",
    meaning: "not TCP: the time from a request's last byte to its response's first is the server application's",
    fix_goes_to: "the application",
    part_of: None,
    decided_by: None,
    judge: None,
};

/// Processing times below this are indistinguishable from scheduling, ACK delays and
/// the capture's timestamps; they are not reported.
pub const MIN_THINK_NS: u64 = 5_000_000;
/// Turns (server data after client data) remembered per connection: one per exchange,
/// as many as the exchanges kept (`exchange::MAX_EXCHANGES`).
const MAX_TURNS: usize = MAX_EXCHANGES;
/// An ACK sample shorter than the handshake's RTT divided by this came from nearer than
/// the server (a proxy or security software acknowledging for it): a path's RTT does
/// not halve within a connection, while such ACKs come back in well under a millisecond
/// (`suricata-verify-mime-stream-depth.pcap`: 0.13 ms on a 111 ms path).
const NEARER_THAN_SERVER: u64 = 2;
/// Left-out responses named in the explanation (the rest are counted).
const MAX_LISTED: usize = 3;

/// An RTT sample of the client's data: the server's pure ACK that completed it.
#[derive(Copy, Clone, Debug)]
struct Sample {
    frame: u64,
    ts: Timestamp,
    ns: u64,
    /// Server data echoing a client's pure ACK (else the server's pure ACK).
    data: bool,
    /// Its TSval: the server's clock when it left (module doc, "server's clock").
    tsval: Option<u32>,
}

/// The first server data after client data: where a response starts.
#[derive(Copy, Clone, Debug)]
struct Turn {
    /// Its first segment (an exchange's `response.first_frame`).
    frame: u64,
    /// The latest RTT sample of the client's data before it.
    sample: Option<Sample>,
    /// Earlier transmissions of that segment lost before the capture point (IP IDs), or
    /// a retransmission came first.
    lost: Option<Lost>,
    /// The first RTT sample after it (within its response, normally).
    after: Option<Sample>,
    /// Its first segment's time here and TSval.
    ts: Timestamp,
    tsval: Option<u32>,
    /// The client's first ACK seen after it: the one that released the response's second
    /// round (slow start sends on each ACK, `tcp_ack` → `tcp_data_snd_check`).
    first_ack: Option<Timestamp>,
}

#[derive(Copy, Clone, Debug)]
enum Lost {
    /// IP IDs skipped before the first response segment.
    Hidden(u32),
    /// A retransmission of the server's data came before the first new segment.
    Retransmission(u64),
}

#[derive(Default)]
struct Conn {
    /// The ACK number of the server's last packet.
    server_ack: Option<u64>,
    /// The client sent data since the server last did (a response may start).
    awaiting: bool,
    /// A server retransmission seen while awaiting.
    retrans: Option<u64>,
    latest: Option<Sample>,
    turns: Vec<Turn>,
    /// The TSval of the client's latest data: the server's data echoing it waited for the
    /// server, and is no RTT sample.
    client_data_tsval: Option<u32>,
    /// The server's first and latest packets with a TSval (time here, TSval): the
    /// server's clock rate.
    clock_first: Option<(Timestamp, u32)>,
    clock_last: Option<(Timestamp, u32)>,
}

impl Reusable for Conn {
    fn empty(&mut self) {
        *self = Conn {
            turns: emptied_vec(&mut self.turns),
            ..Conn::default()
        };
    }
}

impl Conn {
    /// A new RTT sample: the latest, and the first after the last turn.
    fn add_sample(&mut self, s: Sample) {
        self.latest = Some(s);
        if let Some(t) = self.turns.last_mut() {
            t.after.get_or_insert(s);
        }
    }
}

#[derive(Default)]
pub struct ServerThinkTime {
    conns: Slots<Conn>,
}

impl Detector for ServerThinkTime {
    // Judges exchanges: data.
    const JUDGES_DATALESS: bool = false;

    // Inlined into the registry's one call per segment (detectors/mod.rs).
    #[inline(always)]
    fn on_segment(&mut self, seg: &Segment<'_>) {
        let ev = seg.ev;
        if ev.kinds.has(SegmentKinds::CAPTURE_DUPLICATE) {
            return;
        }
        let c = self.conns.get_or_default(seg);
        let ids = seg.ev.ip_id;
        // The exchanges are built from data that is neither a retransmission nor out of
        // order (lib.rs): turns are counted the same way.
        let repeat = ev.kinds.0 & (SegmentKinds::RETRANSMISSION | SegmentKinds::OUT_OF_ORDER);
        if ev.from_client {
            if ev.payload_len > 0 && repeat == 0 {
                c.awaiting = true;
                c.client_data_tsval = seg.pkt.options.timestamps.map(|t| t.0);
            } else if let Some(t) = c.turns.last_mut().filter(|_| !c.awaiting) {
                t.first_ack.get_or_insert(seg.ts);
            }
            return;
        }
        let tsval = seg.pkt.options.timestamps.map(|t| t.0);
        if let Some(v) = tsval {
            c.clock_first.get_or_insert((seg.ts, v));
            c.clock_last = Some((seg.ts, v));
        }
        let sample = |ns, data| Sample {
            frame: seg.frame,
            ts: seg.ts,
            ns,
            data,
            tsval,
        };
        if ev.payload_len == 0 && !seg.pkt.flags.syn() {
            if let Some((_, ns)) = ev.ack_rtt.or(ev.ts_rtt) {
                c.add_sample(sample(ns, false));
            }
        } else if ev.payload_len > 0 && !c.awaiting && repeat == 0 {
            // Data within a response echoing a client's pure ACK.
            let echo = seg.pkt.options.timestamps.map(|t| t.1);
            if let (Some((_, ns)), false) = (ev.ts_rtt, echo == c.client_data_tsval) {
                c.add_sample(sample(ns, true));
            }
        } else if ev.payload_len > 0 && c.awaiting {
            if repeat != 0 {
                c.retrans.get_or_insert(seg.frame);
            } else {
                // A skip in a packet acknowledging more than the server's previous one
                // can be a lost pure ACK of the request, not a lost response.
                let hidden = ids.hidden().filter(|_| ev.rel_ack == c.server_ack);
                let lost = match (hidden, c.retrans) {
                    (Some(k), _) => Some(Lost::Hidden(k)),
                    (None, Some(f)) => Some(Lost::Retransmission(f)),
                    (None, None) => None,
                };
                if c.turns.len() < MAX_TURNS {
                    c.turns.push(Turn {
                        frame: seg.frame,
                        sample: c.latest,
                        lost,
                        after: None,
                        ts: seg.ts,
                        tsval,
                        first_ack: None,
                    });
                }
                c.awaiting = false;
                c.retrans = None;
            }
        }
        c.server_ack = ev.rel_ack;
    }

    fn on_connection(&mut self, conn: &Connection<'_>, out: &mut Vec<Finding>) {
        // The turns' buffer goes back to the slot for its next connection (a `Vec` grown
        // for every connection was 0.1 % of `analyze`'s instructions, callgrind).
        let taken = self.conns.take_reusing(conn);
        let none = Conn::default();
        let st = taken.as_deref().unwrap_or(&none);
        // The part of the RTT inside the measured gap when no sample of the request's
        // own is known, by vantage point.
        let fallback = match conn.vantage {
            Vantage::Server => 0,
            Vantage::Client | Vantage::Unknown => conn.rtt_ns.unwrap_or(0),
            Vantage::Middle => conn.summary.syn_to_synack_ns.or(conn.rtt_ns).unwrap_or(0),
        };
        let tick = server_tick_ns(st);
        let mut f = conn.finding(FindingId::AppServerThinkTime);
        let mut n = 0u32;
        let mut max = 0u64;
        // Exchanges measured with the request's own ACK, an earlier sample, the
        // handshake, a sample within the response.
        let mut by = [0u32; 4];
        let mut lost_left_out = 0u32;
        let mut unsettled = 0u32;
        let mut lost_listed: Vec<String> = Vec::new();
        for x in conn.exchanges {
            let (Some(gap), Some(resp)) = (x.server_time_ns(), x.response.as_ref()) else {
                continue;
            };
            let turn = st
                .turns
                .binary_search_by_key(&resp.first_frame, |t| t.frame)
                .ok()
                .map(|i| st.turns[i]);
            if let (Some(lost), false) =
                (turn.and_then(|t| t.lost), conn.vantage == Vantage::Server)
            {
                // At the server its own first transmission is captured whatever happens
                // to it later; elsewhere the gap holds the loss.
                lost_left_out += 1;
                if lost_listed.len() >= MAX_LISTED {
                    continue;
                }
                lost_listed.push(match lost {
                    Lost::Hidden(k) => format!(
                        "response {} (frame {}: {k} earlier transmission(s) lost, IP IDs skipped)",
                        x.index + 1,
                        resp.first_frame
                    ),
                    Lost::Retransmission(fr) => format!(
                        "response {} (retransmission in frame {fr} before its first new segment)",
                        x.index + 1
                    ),
                });
                continue;
            }
            let (rtt, kind, source, used) = if conn.vantage == Vantage::Server {
                (0, None, String::new(), None)
            } else {
                // A sample far shorter than the handshake's is not used: see the module doc.
                let near = fallback / NEARER_THAN_SERVER;
                let before = turn.and_then(|t| t.sample).filter(|s| s.ns >= near);
                let after = turn.and_then(|t| t.after).filter(|s| s.ns >= near);
                // The sample nearer in time to the request: the path's RTT then.
                let after = after.filter(|a| {
                    before.is_none_or(|b| {
                        a.ts.elapsed_since(x.request.end) < x.request.end.elapsed_since(b.ts)
                    })
                });
                match (before, after) {
                    (Some(s), _) if s.ts >= x.request.end => (
                        s.ns,
                        Some(0),
                        format!("the request's ACK (frame {}) measured", s.frame),
                        Some(s),
                    ),
                    (_, Some(s)) => (
                        s.ns,
                        Some(3),
                        format!("frame {} of its response measured", s.frame),
                        Some(s),
                    ),
                    (Some(s), None) => (
                        s.ns,
                        Some(1),
                        format!(
                            "the latest {} before it (frame {}) measured",
                            if s.data { "data" } else { "ACK" },
                            s.frame
                        ),
                        Some(s),
                    ),
                    (None, None) => {
                        let what = if conn.vantage == Vantage::Middle {
                            "the handshake measured beyond the tap"
                        } else {
                            "the handshake measured"
                        };
                        (
                            fallback,
                            (fallback > 0).then_some(2),
                            what.to_string(),
                            None,
                        )
                    }
                }
            };
            // The response's way back, longer than the sample's (the server's clock).
            let grown = match (used, turn, tick) {
                (Some(s), Some(t), Some(tick)) => way_back_growth(s, t, tick),
                _ => 0,
            };
            let source = if grown > 0 {
                format!(
                    "{source}, and the {} its way back took longer than that sample's \
                     (the server's TCP timestamps)",
                    ms(grown)
                )
            } else {
                source
            };
            let rtt = rtt.saturating_add(grown);
            let think = gap.saturating_sub(rtt);
            if think < MIN_THINK_NS {
                continue;
            }
            // Without the server's clock on both packets the response's way back is not
            // measured; the round trip of the response's own data is (the client's first
            // ACK of it to the second round it released, tap → server → tap at any
            // vantage). No path gives a round trip shorter than the path's: where the
            // response's is shorter than the one subtracted by as much as the thinking,
            // the path was moving and the thinking cannot be told from it (sweep s67-014
            // at the client, snaplen 64, the delay to the client rising from 4 to 36 ms
            // as the first request went: request → ACK 39.2 ms, the response's round
            // 17.7 ms, 6.74 ms "thinking" where the server took 0.45 ms). A longer one
            // says nothing: a server writing its response in pieces sends its second
            // round when the application hands it over, not when the ACK comes.
            let clocked = used.is_some_and(|s| s.tsval.is_some())
                && turn.is_some_and(|t| t.tsval.is_some())
                && tick.is_some();
            if !clocked && rtt > 0 {
                let own = turn.and_then(|t| data_round_trip(x, t.first_ack?));
                if own.is_some_and(|d| d.saturating_add(think) <= rtt) {
                    unsettled += 1;
                    continue;
                }
            }
            n += 1;
            if let Some(k) = kind {
                by[k] += 1;
            }
            max = max.max(think);
            f.cost_ns += think;
            f.cite(
                x.request.last_frame,
                x.request.end,
                format!("request {} complete", x.index + 1),
            );
            let note = if rtt > 0 {
                format!(
                    "first byte of its response, {} later: {} thinking after the {} round \
                     trip {source}",
                    ms(gap),
                    ms(think),
                    ms(rtt)
                )
            } else {
                format!("first byte of its response, {} later", ms(gap))
            };
            f.cite(resp.first_frame, resp.start, note);
        }
        if n == 0 {
            return;
        }
        f.share = Some(f.cost_ns as f64 / conn.active_ns().max(1) as f64);
        let rtt_note = if by.iter().any(|&k| k > 0) {
            let parts: Vec<String> = [
                "the RTT sample of the request's own ACK",
                "the latest RTT sample before the request",
                "the handshake's RTT",
                "the first RTT sample within the response",
            ]
            .iter()
            .zip(by)
            .filter(|(_, k)| *k > 0)
            .map(|(what, k)| format!("{what} for {k}"))
            .collect();
            format!(
                " (the gap seen here minus the round trip it contains: {})",
                parts.join(", ")
            )
        } else {
            String::new()
        };
        let lost_note = if lost_left_out > 0 {
            format!(
                " Left out, their gap being a loss recovery's (see the loss.* findings): \
                 {lost_left_out} response(s), {}{}.",
                lost_listed.join(", "),
                if lost_left_out as usize > lost_listed.len() {
                    " …"
                } else {
                    ""
                }
            )
        } else {
            String::new()
        };
        let unsettled_note = if unsettled > 0 {
            format!(
                " Left out: {unsettled} response(s) whose own data's round trip was shorter \
                 than the one subtracted by as much as the thinking (the path's delay was \
                 moving)."
            )
        } else {
            String::new()
        };
        f.explanation = format!(
            "The server took {} in all to start answering {n} of {} request(s){rtt_note}, {} at \
             most. This is the application's time, not TCP's: the request had arrived and \
             nothing was waiting on the network.{lost_note}{unsettled_note}",
            ms(f.cost_ns),
            conn.exchanges.len(),
            ms(max)
        );
        f.fix = vec![Fix {
            host: Host::Server,
            action: "profile the request handler, its downstream calls and its queues".into(),
        }];
        f.confidence = if conn.vantage == Vantage::Server {
            Confidence::High
        } else {
            Confidence::Medium
        };
        out.push(f);
    }

    /// Nothing is kept across connections: each one's state is dropped in `on_connection`.
    fn absorb(&mut self, _other: Self) {}
}

/// The round trip of a response's own data: from the client's first ACK seen after the
/// response began (`first_ack`) to the start of the response's second round, which that
/// ACK released. None for a response of one round, or an ACK not within the first.
fn data_round_trip(x: &Exchange, first_ack: Timestamp) -> Option<u64> {
    let rounds = joined_rounds(&x.rounds);
    let (first, second) = (rounds.first()?, rounds.get(1)?);
    (first_ack >= first.start && first_ack < second.start)
        .then(|| second.start.elapsed_since(first_ack))
}

/// Nanoseconds per tick of the server's TSval clock: its rate between its first and
/// latest TSvals seen here (RFC 7323 §5.4 leaves the rate to the sender, 1 ms to 1 s;
/// Linux: 1 ms since 4.13, `TCP_TS_HZ`, jiffies before, 1 µs with `tcp_usec_ts`). None
/// without two ticks apart.
fn server_tick_ns(c: &Conn) -> Option<u64> {
    let ((t0, v0), (t1, v1)) = (c.clock_first?, c.clock_last?);
    let ticks = i64::from(v1.wrapping_sub(v0) as i32);
    let ns = t1.since(t0);
    if ticks < 2 || ns <= 0 {
        return None;
    }
    Some((ns / ticks).max(1) as u64)
}

/// How much longer the response's first segment took from the server to here than the
/// server packet that closed the RTT sample `s`: the time between them here minus the
/// time between them on the server's clock (their TSvals, RFC 7323 §3: the sender's
/// clock when the segment was sent; Linux writes `tcp_skb_timestamp_ts()` of the skb's
/// departure time in `tcp_options_write()`, net/ipv4/tcp_output.c). 0 when it was not
/// longer or a TSval is missing. TSvals count whole ticks: `k` ticks apart are between
/// `k - 1` and `k + 1` ticks of time, so one tick is left out of the growth.
fn way_back_growth(s: Sample, t: Turn, tick: u64) -> u64 {
    let (Some(a), Some(b)) = (s.tsval, t.tsval) else {
        return 0;
    };
    let ticks = i64::from(b.wrapping_sub(a) as i32);
    let here = t.ts.since(s.ts);
    let clock = ticks
        .saturating_add(1)
        .saturating_mul(tick.min(i64::MAX as u64) as i64);
    let growth = here.saturating_sub(clock);
    if growth > 0 {
        growth as u64
    } else {
        0
    }
}
