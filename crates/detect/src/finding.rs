//! The finding: one mechanism that cost time on one connection, with its evidence, cost
//! and fix (design.md, "Output contract").

use tcpwhy_capture::Timestamp;
use tcpwhy_track::{Endpoint, Vantage};

pub use crate::detectors::FindingId;

/// What is derived from an id's catalogue entry ([`FindingId::entry`]).
impl FindingId {
    /// The id as written in reports and JSON.
    pub const fn as_str(self) -> &'static str {
        self.entry().id
    }

    /// The finding whose time this one's cost is part of, when both are reported on a
    /// connection: a window capped by the missing scale option, not growing, or closed
    /// by a slow reader is the time `rwnd.limited` measures, not time in addition to it.
    pub const fn part_of(self) -> Option<FindingId> {
        self.entry().part_of
    }

    pub fn parse(s: &str) -> Option<FindingId> {
        FindingId::ALL.iter().copied().find(|id| id.as_str() == s)
    }
}

/// On which host a fix is applied.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Host {
    Client,
    Server,
    Both,
}

impl Host {
    pub const fn as_str(self) -> &'static str {
        match self {
            Host::Client => "client",
            Host::Server => "server",
            Host::Both => "both",
        }
    }
}

/// One concrete action.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fix {
    pub host: Host,
    pub action: String,
}

/// How sure the evidence makes us.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Confidence {
    Low,
    Medium,
    High,
}

impl Confidence {
    pub const fn as_str(self) -> &'static str {
        match self {
            Confidence::Low => "low",
            Confidence::Medium => "medium",
            Confidence::High => "high",
        }
    }
}

/// A packet that proves the finding, as Wireshark numbers it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Evidence {
    pub frame: u64,
    pub ts: Timestamp,
    pub note: String,
}

/// Most evidence lines kept per finding: enough to check by hand, bounded in memory.
pub const MAX_EVIDENCE: usize = 12;

/// One finding on one connection (or, for findings about a pattern of connections, on
/// the connection that shows it first, with the others counted in `explanation`).
#[derive(Clone, Debug)]
pub struct Finding {
    pub id: FindingId,
    /// Wireshark's tcp.stream index.
    pub stream: u64,
    /// `[client, server]`.
    pub endpoints: [Endpoint; 2],
    /// Time lost on this connection because of the mechanism.
    pub cost_ns: u64,
    /// Connections the finding covers: 1, or for a finding about a pattern across
    /// connections (reported on the first), how many paid `cost_ns` between them.
    pub connections: u64,
    /// `cost_ns` as a share of the connection's active time, when meaningful.
    pub share: Option<f64>,
    pub evidence: Vec<Evidence>,
    /// The mechanism in two or three plain sentences, with the numbers measured.
    pub explanation: String,
    pub fix: Vec<Fix>,
    pub confidence: Confidence,
    /// The vantage point the analysis assumed.
    pub vantage: Vantage,
}

/// A `tcp.stream` number written into a finding's text. In a sharded pass a shard knows
/// only provisional ids (`tcpwhy_track::PROVISIONAL_STREAM` | first frame); those are
/// written as a marker that [`Finding::resolve_stream_refs`] replaces with the final
/// number once every shard is done. A final number is written as it is.
#[derive(Copy, Clone, Debug)]
pub struct StreamRef(pub u64);

/// Brackets a provisional stream id in a finding's text (control characters, which no
/// detector writes).
const REF_OPEN: char = '\u{1}';
const REF_CLOSE: char = '\u{2}';

impl std::fmt::Display for StreamRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.0 & tcpwhy_track::PROVISIONAL_STREAM != 0 {
            write!(f, "{REF_OPEN}{}{REF_CLOSE}", self.0)
        } else {
            write!(f, "{}", self.0)
        }
    }
}

/// Streams a finding's text names one by one; the others are counted. A finding about
/// many connections (a client opening one per request, a server closing every idle one)
/// otherwise names each of up to a million (the detectors' `MAX_TRACKED`).
pub const MAX_LISTED_STREAMS: usize = 20;

/// `streams` for a finding's text: the first [`MAX_LISTED_STREAMS`] of them, then, when
/// `total` is more, how many more ("3, 5, 8, … (17 more)").
pub fn list_streams(streams: impl IntoIterator<Item = u64>, total: usize) -> String {
    let mut listed: Vec<String> = streams
        .into_iter()
        .take(MAX_LISTED_STREAMS)
        .map(|s| StreamRef(s).to_string())
        .collect();
    if total > MAX_LISTED_STREAMS {
        listed.push(format!("… ({} more)", total - MAX_LISTED_STREAMS));
    }
    listed.join(", ")
}

/// `s` with every marker of [`StreamRef`] replaced by its final number.
fn resolve_refs(s: &mut String, number: &impl Fn(u64) -> u64) {
    if !s.contains(REF_OPEN) {
        return;
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s.as_str();
    while let Some(i) = rest.find(REF_OPEN) {
        out.push_str(&rest[..i]);
        let after = &rest[i + REF_OPEN.len_utf8()..];
        match after.find(REF_CLOSE) {
            Some(j) => {
                match after[..j].parse::<u64>() {
                    Ok(id) => out.push_str(&number(id).to_string()),
                    Err(_) => out.push_str(&after[..j]),
                }
                rest = &after[j + REF_CLOSE.len_utf8()..];
            }
            None => rest = after,
        }
    }
    out.push_str(rest);
    *s = out;
}

impl Finding {
    /// A finding of `id` on `stream` with nothing found yet, for a detector to fill in:
    /// no cost, one connection, no share, evidence, explanation or fix, medium confidence.
    pub fn new(id: FindingId, stream: u64, endpoints: [Endpoint; 2], vantage: Vantage) -> Self {
        Finding {
            id,
            stream,
            endpoints,
            cost_ns: 0,
            connections: 1,
            share: None,
            evidence: Vec::new(),
            explanation: String::new(),
            fix: Vec::new(),
            confidence: Confidence::Medium,
            vantage,
        }
    }

    /// Replaces the provisional stream ids written with [`StreamRef`] in the explanation,
    /// evidence notes and fixes by their final numbers.
    pub fn resolve_stream_refs(&mut self, number: &impl Fn(u64) -> u64) {
        resolve_refs(&mut self.explanation, number);
        for e in &mut self.evidence {
            resolve_refs(&mut e.note, number);
        }
        for x in &mut self.fix {
            resolve_refs(&mut x.action, number);
        }
    }

    /// Adds an evidence line unless the bound is reached or the finding already cites
    /// that frame with that note (a restart finding citing the same largest round for
    /// each of its restarts: sweep s88-033's server named frame 12 three times).
    pub fn cite(&mut self, frame: u64, ts: Timestamp, note: impl Into<String>) {
        if self.evidence.len() < MAX_EVIDENCE {
            let note = note.into();
            if !self
                .evidence
                .iter()
                .any(|e| e.frame == frame && e.note == note)
            {
                self.evidence.push(Evidence { frame, ts, note });
            }
        }
    }

    /// [`Self::cite`] with the note written only when the bound leaves room for it: for
    /// loops over many connections, whose notes past the bound would be formatted and
    /// dropped (`connection.short_lived` wrote one per short connection of a host pair,
    /// thousands on the mixed bench capture, to keep 12).
    pub fn cite_with(&mut self, frame: u64, ts: Timestamp, note: impl FnOnce() -> String) {
        if self.evidence.len() < MAX_EVIDENCE {
            self.cite(frame, ts, note());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_cited_again_with_the_same_note_is_cited_once() {
        let ep = tcpwhy_track::Endpoint {
            addr: std::net::IpAddr::from([10, 0, 0, 1]),
            port: 80,
        };
        let mut f = Finding::new(
            FindingId::SlowStartRestartAfterIdle,
            0,
            [ep, ep],
            Vantage::Server,
        );
        let t = Timestamp::from_nanos(0);
        for _ in 0..3 {
            f.cite(12, t, "the largest round");
            f.cite(30, t, "last data");
        }
        f.cite(12, t, "another note on the same frame");
        let got: Vec<(u64, &str)> = f
            .evidence
            .iter()
            .map(|e| (e.frame, e.note.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                (12, "the largest round"),
                (30, "last data"),
                (12, "another note on the same frame")
            ]
        );
    }

    #[test]
    fn provisional_stream_numbers_in_texts_are_replaced_by_final_ones() {
        let p = tcpwhy_track::PROVISIONAL_STREAM;
        let mut s = format!(
            "streams {}, {} and {}",
            StreamRef(p | 9),
            StreamRef(4),
            StreamRef(p | 30)
        );
        resolve_refs(&mut s, &|x: u64| if x == p | 9 { 1 } else { 2 });
        assert_eq!(s, "streams 1, 4 and 2");
        // Text without markers is untouched.
        let mut plain = String::from("stream 4");
        resolve_refs(&mut plain, &|_| 0);
        assert_eq!(plain, "stream 4");
    }
}
