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
        }
    }
    pub(crate) fn extend(&mut self, frame: u64, ts: Timestamp, len: u32) {
        self.last_frame = frame;
        self.end = ts;
        self.bytes += u64::from(len);
        self.segments += 1;
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
                prev.last_frame = r.last_frame;
                prev.end = r.end;
                prev.bytes += r.bytes;
                prev.segments += r.segments;
            }
            _ => out.push(*r),
        }
    }
    out
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
    /// Capture time with no data either way before this exchange (from the previous
    /// exchange's last byte, or from the handshake for the first one).
    pub idle_before_ns: Option<u64>,
}

impl Exchange {
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
fn add_to_rounds(
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
}

/// Most exchanges kept per connection (a long keep-alive connection): later ones are
/// counted in `dropped`.
pub const MAX_EXCHANGES: usize = 4096;

impl ExchangeBuilder {
    pub fn established(&mut self, ts: Timestamp) {
        self.established.get_or_insert(ts);
    }

    /// A data segment of `len` bytes from the client (`from_client`) or the server.
    /// `round_gap_ns` is the current gap that separates rounds. Inlined into the
    /// analyzer's call per segment.
    #[inline]
    pub fn data(
        &mut self,
        frame: u64,
        ts: Timestamp,
        len: u32,
        from_client: bool,
        round_gap_ns: u64,
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
                if self.exchanges.len() >= MAX_EXCHANGES {
                    return;
                }
                self.exchanges.push(Exchange {
                    index: self.exchanges.len() as u32,
                    request: Span::new(frame, ts, len),
                    response: None,
                    rounds: Vec::new(),
                    paced_rounds: Vec::new(),
                    idle_before_ns: prev.map(|p| ts.elapsed_since(p)),
                });
            } else if let Some(x) = self.exchanges.last_mut() {
                x.request.extend(frame, ts, len);
            }
            return;
        }
        let Some(x) = self.exchanges.last_mut() else {
            return; // server data before any request (server speaks first): not an exchange
        };
        let since_last = match &mut x.response {
            None => {
                x.response = Some(Span::new(frame, ts, len));
                None
            }
            Some(r) => {
                let since = ts.elapsed_since(r.end);
                r.extend(frame, ts, len);
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

    pub fn finish(self) -> Vec<Exchange> {
        self.exchanges
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

    /// A request, 20 ms of server time, then a response in three rounds one 25 ms RTT
    /// apart (10, 20 and 5 segments), seen at the client.
    #[test]
    fn request_server_time_and_response_rounds() {
        let mut b = ExchangeBuilder::default();
        b.established(t(25.0));
        b.data(4, t(25.1), 400, true, 12_500_000);
        let mut frame = 5;
        let mut at = 45.1;
        for (round, n) in [10, 20, 5].iter().enumerate() {
            for i in 0..*n {
                b.data(frame, t(at + f64::from(i) * 0.05), 1448, false, 12_500_000);
                frame += 1;
            }
            at += 25.0;
            let _ = round;
        }
        let x = b.finish();
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
        b.data(1, t(0.0), 100, true, 1_000_000);
        b.data(2, t(1.0), 1000, false, 1_000_000);
        b.data(3, t(2001.0), 100, true, 1_000_000);
        b.data(4, t(2002.0), 1000, false, 1_000_000);
        let x = b.finish();
        assert_eq!(x.len(), 2);
        assert_eq!(x[1].index, 1);
        assert_eq!(x[1].idle_before_ns, Some(2_000_000_000));
    }
}
