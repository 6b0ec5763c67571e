//! Request/response exchanges: the latency decomposition of issue 4 and seed 01's trace
//! spans. For each exchange: the handshake if the connection was new, the request
//! transfer, the server's time (last request byte → first response byte), and the
//! response transfer split into rounds of one RTT each.
//!
//! An exchange starts with client data after server data (or with the first client data);
//! server data that follows is its response. Rounds: response segments are grouped while
//! the gap between consecutive ones stays under half the path RTT — at the sender a new
//! round leaves when ACKs of the previous one return, at the receiver it arrives one RTT
//! after the previous one did. Protocols where the server speaks first, or where both
//! sides stream at once, still produce exchanges, but their decomposition means less.
//!
//! The first exchange also keeps its response cut at most one RTT per round
//! (`paced_rounds`): a paced sender (BBR, `sk_pacing_rate`) spreads each slow-start round
//! over most of the round trip in slots a few ms apart, so the gaps between its rounds
//! can be shorter than half the RTT and the rounds merge (sweep s10-057, BBR at 70 ms:
//! rounds of 10, 20 and 34 segments, the last two 42 and 65 ms long, 29 and 4 ms
//! apart). Kept apart because an ACK-clocked round that a queue spreads can last longer
//! than the handshake's RTT (sweep s6-041: rounds 1.3–5.3 ms apart at a 1.23 ms RTT).

use tcpwhy_capture::Timestamp;
use tcpwhy_track::seq::seq_le;

/// Most rounds kept per response; later segments count in the last round.
pub const MAX_ROUNDS: usize = 64;
/// A gap shorter than this never separates rounds, whatever the RTT estimate (host
/// scheduling noise on a LAN or loopback).
pub const MIN_ROUND_GAP_NS: u64 = 1_000_000;

/// A span of data segments in one direction.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Span {
    pub first_frame: u64,
    pub last_frame: u64,
    pub start: Timestamp,
    pub end: Timestamp,
    pub bytes: u64,
    pub segments: u32,
    /// The longest time between two consecutive segments within the span: a paced
    /// sender's spacing, or a trickle's longest pause. Kept for rounds ([`add_to_rounds`],
    /// [`joined_rounds`]), 0 in the other spans (the per-segment cost is the rounds').
    pub max_gap_ns: u64,
}

impl Span {
    pub(crate) fn new(frame: u64, ts: Timestamp, len: u32) -> Span {
        Span {
            first_frame: frame,
            last_frame: frame,
            start: ts,
            end: ts,
            bytes: u64::from(len),
            segments: 1,
            max_gap_ns: 0,
        }
    }
    pub(crate) fn extend(&mut self, frame: u64, ts: Timestamp, len: u32) {
        self.last_frame = frame;
        self.end = ts;
        self.bytes += u64::from(len);
        self.segments += 1;
    }
    /// Adds the span `r` that follows this one.
    fn absorb(&mut self, r: &Span) {
        self.max_gap_ns = self
            .max_gap_ns
            .max(r.max_gap_ns)
            .max(r.start.elapsed_since(self.end));
        self.last_frame = r.last_frame;
        self.end = r.end;
        self.bytes += r.bytes;
        self.segments += r.segments;
    }
    pub fn duration_ns(&self) -> u64 {
        self.end.elapsed_since(self.start)
    }
}

/// A response's rounds with the bursts that a path's jitter split joined again: rounds
/// are the ACK clock's, one round trip apart, so a wait between two of them shorter than
/// half the response's longest one is a burst that arrived in pieces, not a round of its
/// own — the round trip does not halve within one response. (Sweep s12-078's client: a
/// path of 160 ms where the handshake's was 19, and a restarted response's 10 segments
/// arriving as 8 and 2, 26 ms apart, then 5 after 229 ms: rounds of 8, 2 and 5 did not
/// grow, 10 and 5 did.) A response of two rounds has one wait, which stays.
pub fn joined_rounds(rounds: &[Span]) -> Vec<Span> {
    let waits = rounds
        .windows(2)
        .map(|w| w[1].start.elapsed_since(w[0].end));
    let longest = waits.max().unwrap_or(0);
    let mut out: Vec<Span> = Vec::with_capacity(rounds.len());
    for r in rounds {
        match out.last_mut() {
            Some(prev) if r.start.elapsed_since(prev.end).saturating_mul(2) < longest => {
                prev.absorb(r)
            }
            _ => out.push(*r),
        }
    }
    out
}

/// A response (the server's data from after the client's data to the client's next
/// data) in rounds of the ACK clock: a round ends when the client acknowledges data sent
/// in it, and the data sent after that ACK reached the
/// server is the next round (BBR's round: `bbr_update_round_start`, a packet sent
/// after the round began is delivered; HyStart's `end_seq` is the same clock). A
/// round's data is told by its timestamp echo: the server echoes the TSval of the
/// latest ACK it received (`tcp_store_ts_recent`), so its data from round k + 1 on
/// echoes the TSval of the ACK that ended round k or a later one, at any vantage
/// point. Gaps in time cannot tell rounds apart on a jittery short path: sweep s13-009
/// at 3 ms, where slow start's 10, 20, 40 segments left as bursts of 10, 20, 10, 30,
/// 20 (a wait of 2.5 ms inside the third round, 0.9 ms between it and the fourth).
#[derive(Debug)]
pub(crate) struct Clock {
    rounds: Vec<Span>,
    /// The relative sequence number of the current round's first byte.
    round_seq: u64,
    /// The TSecr from which the server's data belongs to the next round: the TSval of
    /// the client's first ACK beyond `round_seq`, or one tick later when the ACK before
    /// it had the same TSval (data clocked by that earlier ACK echoes it too).
    next_from: Option<u32>,
    /// The TSval of the client's previous ACK.
    last_tsval: Option<u32>,
    /// A segment without timestamps: the rounds cannot be told.
    broken: bool,
}

impl Clock {
    pub(crate) fn start(
        frame: u64,
        ts: Timestamp,
        seq: u64,
        len: u32,
        tsecr: Option<u32>,
    ) -> Clock {
        Clock {
            rounds: vec![Span::new(frame, ts, len)],
            round_seq: seq,
            next_from: None,
            last_tsval: None,
            broken: tsecr.is_none(),
        }
    }

    /// A pure ACK from the client: `ack` relative, `tsval` its timestamp.
    pub(crate) fn ack(&mut self, ack: Option<u64>, tsval: Option<u32>) {
        let Some(tsval) = tsval else {
            self.broken = true;
            return;
        };
        if self.next_from.is_none() && ack.is_some_and(|a| a > self.round_seq) {
            let same_tick = self.last_tsval == Some(tsval);
            self.next_from = Some(if same_tick {
                tsval.wrapping_add(1)
            } else {
                tsval
            });
        }
        self.last_tsval = Some(tsval);
    }

    /// New data from the server: `tsecr` its timestamp echo.
    pub(crate) fn data(
        &mut self,
        frame: u64,
        ts: Timestamp,
        seq: u64,
        len: u32,
        tsecr: Option<u32>,
    ) {
        let Some(tsecr) = tsecr else {
            self.broken = true;
            return;
        };
        // TSvals compare modulo 2^32 like sequence numbers (RFC 7323 §5.3).
        let next = self.next_from.is_some_and(|from| seq_le(from, tsecr));
        let full = self.rounds.len() >= MAX_ROUNDS;
        match self.rounds.last_mut() {
            Some(r) if !next || full => {
                // The sender's pauses within the round, as `add_to_rounds` keeps them.
                r.max_gap_ns = r.max_gap_ns.max(ts.elapsed_since(r.end));
                r.extend(frame, ts, len)
            }
            _ => {
                self.rounds.push(Span::new(frame, ts, len));
                self.round_seq = seq;
                self.next_from = None;
            }
        }
    }
}

/// A response's rounds of the ACK clock as kept.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum ClockedRounds {
    /// Not told: a segment of the response, or an ACK of the client's during it, had no
    /// timestamps.
    #[default]
    Unknown,
    /// The rounds its silences cut (most responses: no allocation of their own, held
    /// until the connection's end).
    AsRounds,
    /// Rounds of their own.
    Own(Vec<Span>),
}

/// One request and its response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Exchange {
    /// 0 for the first exchange on the connection.
    pub index: u32,
    pub request: Span,
    pub response: Option<Span>,
    /// Response rounds: data sent back to back between waits for ACKs.
    pub rounds: Vec<Span>,
    /// The first exchange's response in rounds that also end one RTT after they began
    /// (see the module's text); empty for later exchanges.
    pub paced_rounds: Vec<Span>,
    /// The response in rounds of the ACK clock ([`Clock`]); read them with
    /// [`Exchange::clock_rounds`].
    pub clocked: ClockedRounds,
    /// Capture time with no data either way before this exchange (from the previous
    /// exchange's last byte, or from the handshake for the first one).
    pub idle_before_ns: Option<u64>,
}

impl Exchange {
    /// The response in rounds of the ACK clock, when the timestamps told them and they
    /// hold all of its bytes.
    pub fn clock_rounds(&self) -> Option<&[Span]> {
        let r = match &self.clocked {
            ClockedRounds::Unknown => return None,
            ClockedRounds::AsRounds => &self.rounds[..],
            ClockedRounds::Own(r) => &r[..],
        };
        let bytes = self.response.as_ref()?.bytes;
        (!r.is_empty() && r.iter().map(|s| s.bytes).sum::<u64>() == bytes).then_some(r)
    }

    /// Last request byte → first response byte, as seen at the capture point.
    pub fn server_time_ns(&self) -> Option<u64> {
        let r = self.response.as_ref()?;
        Some(r.start.elapsed_since(self.request.end))
    }
}

/// Adds a response segment (`frame`, `ts`, `len`) to `rounds`: to the last round if it
/// came less than `gap` after the response's previous segment (`since_last`; `None` for
/// the first) and, with `longest`, less than that after the round began; else as a new
/// round. Past [`MAX_ROUNDS`] everything goes to the last.
#[inline]
pub(crate) fn add_to_rounds(
    rounds: &mut Vec<Span>,
    since_last: Option<u64>,
    gap: u64,
    longest: Option<u64>,
    (frame, ts, len): (u64, Timestamp, u32),
) {
    let full = rounds.len() >= MAX_ROUNDS;
    match rounds.last_mut() {
        Some(round)
            if full
                || (since_last.is_some_and(|s| s < gap)
                    && longest.is_none_or(|l| ts.elapsed_since(round.start) < l)) =>
        {
            // `since_last` is the time since the round's last segment: every data segment
            // of the response comes here.
            round.max_gap_ns = round.max_gap_ns.max(since_last.unwrap_or(0));
            round.extend(frame, ts, len)
        }
        _ => rounds.push(Span::new(frame, ts, len)),
    }
}

/// Builds the exchanges of one connection from its data segments.
#[derive(Default, Debug)]
pub struct ExchangeBuilder {
    exchanges: Vec<Exchange>,
    /// End of the last data either way, to measure idle gaps.
    last_data: Option<Timestamp>,
    /// When the connection was established (handshake seen), for the first idle gap.
    established: Option<Timestamp>,
    /// The last exchange's response in rounds of the ACK clock, while it lasts.
    clock: Option<Clock>,
    /// The server's data sent before any request (a server that speaks first: a
    /// download that starts on connect, a greeting), in rounds as a response's.
    server_first: Vec<Span>,
}

/// Most exchanges kept per connection (a long keep-alive connection): later ones are
/// counted in `dropped`.
pub const MAX_EXCHANGES: usize = 4096;

impl ExchangeBuilder {
    pub fn established(&mut self, ts: Timestamp) {
        self.established.get_or_insert(ts);
    }

    /// A pure ACK from the client (relative `ack`, `tsval`): the ACK clock of the
    /// response under way.
    #[inline]
    pub fn client_ack(&mut self, ack: Option<u64>, tsval: Option<u32>) {
        if let Some(c) = self.clock.as_mut() {
            c.ack(ack, tsval);
        }
    }

    /// Ends the last response's clocked rounds.
    fn close_clock(&mut self) {
        if let (Some(c), Some(x)) = (self.clock.take(), self.exchanges.last_mut()) {
            x.clocked = if c.broken {
                ClockedRounds::Unknown
            } else if c.rounds == x.rounds {
                ClockedRounds::AsRounds
            } else {
                ClockedRounds::Own(c.rounds)
            };
        }
    }

    /// A new data segment (`seq` relative, `tsecr` its echo) of `len` bytes from the
    /// client (`from_client`) or the server. `round_gap_ns` is the current gap that
    /// separates rounds. Inlined into the analyzer's call per segment.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub fn data(
        &mut self,
        frame: u64,
        ts: Timestamp,
        len: u32,
        from_client: bool,
        round_gap_ns: u64,
        seq: u64,
        tsecr: Option<u32>,
    ) {
        let prev = self.last_data.or(self.established);
        self.last_data = Some(ts);
        let gap = round_gap_ns.max(MIN_ROUND_GAP_NS);
        if from_client {
            let start_new = match self.exchanges.last() {
                None => true,
                Some(x) => x.response.is_some(),
            };
            if start_new {
                self.close_clock();
                if self.exchanges.len() >= MAX_EXCHANGES {
                    return;
                }
                self.exchanges.push(Exchange {
                    index: self.exchanges.len() as u32,
                    request: Span::new(frame, ts, len),
                    response: None,
                    rounds: Vec::new(),
                    paced_rounds: Vec::new(),
                    clocked: ClockedRounds::Unknown,
                    idle_before_ns: prev.map(|p| ts.elapsed_since(p)),
                });
            } else if let Some(x) = self.exchanges.last_mut() {
                x.request.extend(frame, ts, len);
            }
            return;
        }
        let Some(x) = self.exchanges.last_mut() else {
            // Server data before any request (the server speaks first): no exchange, but
            // its rounds are kept as a response's.
            let since_last = self.server_first.last().map(|r| ts.elapsed_since(r.end));
            add_to_rounds(
                &mut self.server_first,
                since_last,
                gap,
                None,
                (frame, ts, len),
            );
            return;
        };
        let since_last = match &mut x.response {
            None => {
                x.response = Some(Span::new(frame, ts, len));
                self.clock = Some(Clock::start(frame, ts, seq, len, tsecr));
                None
            }
            Some(r) => {
                let since = ts.elapsed_since(r.end);
                r.extend(frame, ts, len);
                if let Some(c) = self.clock.as_mut() {
                    c.data(frame, ts, seq, len, tsecr);
                }
                Some(since)
            }
        };
        add_to_rounds(&mut x.rounds, since_last, gap, None, (frame, ts, len));
        if x.index == 0 {
            // One round trip at most (`round_gap_ns` is half of it; 0: unknown).
            let longest = (round_gap_ns > 0).then(|| round_gap_ns.saturating_mul(2));
            add_to_rounds(
                &mut x.paced_rounds,
                since_last,
                gap,
                longest,
                (frame, ts, len),
            );
        }
    }

    /// The exchanges, and the rounds of the server's data sent before any request.
    pub fn finish(mut self) -> (Vec<Exchange>, Vec<Span>) {
        self.close_clock();
        (self.exchanges, self.server_first)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(ms: f64) -> Timestamp {
        Timestamp::from_nanos((ms * 1e6) as i64)
    }

    /// s12-078's restarted response at the client: 8 segments, 2 more 26 ms later, 5
    /// after 229 ms: the 26 ms wait is under half the longest, the burst it split is
    /// joined (10 and 5). Rounds one RTT apart stay apart, and two rounds always do.
    #[test]
    fn rounds_split_by_jitter_are_joined() {
        let span = |first: u64, at: f64, n: u32| Span {
            first_frame: first,
            last_frame: first + u64::from(n) - 1,
            start: t(at),
            end: t(at + 0.1),
            bytes: u64::from(n) * 1448,
            segments: n,
            max_gap_ns: 0,
        };
        let split = [
            span(37, 1828.8, 8),
            span(53, 1856.1, 2),
            span(57, 2085.0, 5),
        ];
        let sizes = |r: &[Span]| r.iter().map(|r| r.segments).collect::<Vec<_>>();
        let joined = joined_rounds(&split);
        assert_eq!(sizes(&joined), [10, 5]);
        assert_eq!((joined[0].first_frame, joined[0].last_frame), (37, 54));
        let clocked = [span(5, 45.0, 10), span(15, 70.0, 20), span(35, 95.0, 5)];
        assert_eq!(sizes(&joined_rounds(&clocked)), [10, 20, 5]);
        assert_eq!(sizes(&joined_rounds(&split[..2])), [8, 2]);
    }

    fn segments(rounds: &[Span]) -> Vec<u32> {
        rounds.iter().map(|r| r.segments).collect()
    }

    /// s13-009's client: response 2's first round echoes the request's TSval (417); the
    /// client's first ACK of it has TSval 423, and the data echoing 423 is the next
    /// round, however late or early it arrives. Data still echoing 417 after that ACK
    /// was sent before the ACK reached the server: the same round.
    #[test]
    fn the_clock_starts_a_round_at_the_first_echo_of_an_ack_of_the_round() {
        let mut c = Clock::start(869, t(0.0), 736_752, 1448, Some(417));
        c.ack(Some(738_200), Some(423));
        c.data(871, t(0.1), 738_200, 1448, Some(417));
        c.data(889, t(8.0), 751_232, 1448, Some(423));
        c.ack(Some(752_680), Some(431));
        c.data(891, t(8.1), 752_680, 1448, Some(423));
        c.data(916, t(11.7), 780_192, 1448, Some(431));
        assert_eq!(segments(&c.rounds), [2, 2, 1]);
        assert_eq!(c.rounds[1].first_frame, 889);
        assert!(!c.broken);
        // An ACK of the earlier round in the same tick as the one ending this round:
        // data echoing that tick may have been clocked by the earlier ACK, so the next
        // round starts one tick later.
        let mut c = Clock::start(1, t(0.0), 0, 1448, Some(1));
        c.ack(Some(0), Some(500));
        c.ack(Some(1448), Some(500));
        assert_eq!(c.next_from, Some(501));
        c.data(2, t(0.5), 1448, 1448, Some(500));
        c.data(3, t(1.5), 2896, 1448, Some(501));
        assert_eq!(segments(&c.rounds), [2, 1]);
        // Without timestamps the rounds cannot be told.
        c.data(4, t(2.0), 4344, 1448, None);
        assert!(c.broken);
    }

    /// A request, 20 ms of server time, then a response in three rounds one 25 ms RTT
    /// apart (10, 20 and 5 segments), seen at the client.
    #[test]
    fn request_server_time_and_response_rounds() {
        let mut b = ExchangeBuilder::default();
        b.established(t(25.0));
        b.data(4, t(25.1), 400, true, 12_500_000, 0, None);
        let mut frame = 5;
        let mut at = 45.1;
        for (round, n) in [10, 20, 5].iter().enumerate() {
            for i in 0..*n {
                b.data(
                    frame,
                    t(at + f64::from(i) * 0.05),
                    1448,
                    false,
                    12_500_000,
                    0,
                    None,
                );
                frame += 1;
            }
            at += 25.0;
            let _ = round;
        }
        let (x, _) = b.finish();
        assert_eq!(x.len(), 1);
        assert_eq!(x[0].server_time_ns(), Some(20_000_000));
        let sizes: Vec<u32> = x[0].rounds.iter().map(|r| r.segments).collect();
        assert_eq!(sizes, [10, 20, 5]);
        assert_eq!(x[0].response.unwrap().bytes, 35 * 1448);
        assert_eq!(x[0].idle_before_ns, Some(100_000));
    }

    #[test]
    fn keep_alive_requests_make_separate_exchanges_with_idle_gaps() {
        let mut b = ExchangeBuilder::default();
        b.data(1, t(0.0), 100, true, 1_000_000, 0, None);
        b.data(2, t(1.0), 1000, false, 1_000_000, 0, None);
        b.data(3, t(2001.0), 100, true, 1_000_000, 0, None);
        b.data(4, t(2002.0), 1000, false, 1_000_000, 0, None);
        let (x, _) = b.finish();
        assert_eq!(x.len(), 2);
        assert_eq!(x[1].index, 1);
        assert_eq!(x[1].idle_before_ns, Some(2_000_000_000));
    }
}
