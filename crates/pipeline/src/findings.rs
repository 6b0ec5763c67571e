//! The findings of a pass, sorted as the report prints them, held in a
//! [`SpillSort`](crate::spill::SpillSort) so that a long capture's per-connection
//! findings (≈ 7.6 k per million packets of the bench's mixed traffic) do not grow
//! memory with its length (issue 13).

use crate::spill::{Record, Sorted};
use crate::StreamNumbers;
use serde::{Deserialize, Serialize, Serializer};
use std::cmp::Ordering;
use std::io;
use tcpwhy_capture::Timestamp;
use tcpwhy_detect::{Confidence, Evidence, Finding, FindingId, Fix, Host};
use tcpwhy_track::{Endpoint, Vantage};

/// What findings are sorted on, first in their encoding: the cost, largest first, then
/// stream, id, first evidence frame and explanation — the total order the report has
/// always used (`tcpwhy_detect::Analyzer::finish`), so that it does not depend on how
/// connections were sharded. All but the explanation are written big-endian in
/// [`KEY_LEN`] bytes (the cost inverted, so that larger comes first), so that two
/// findings compare as bytes; the explanation follows, as its postcard string.
const KEY_LEN: usize = 8 + 8 + 2 + 1 + 8;

fn write_key(
    cost_ns: u64,
    stream: u64,
    id: FindingId,
    first_frame: Option<u64>,
    out: &mut Vec<u8>,
) {
    out.extend_from_slice(&(!cost_ns).to_be_bytes());
    out.extend_from_slice(&stream.to_be_bytes());
    // The id's position in FindingId::ALL, which is its order.
    let id = FindingId::ALL.iter().position(|x| *x == id).unwrap_or(0) as u16;
    out.extend_from_slice(&id.to_be_bytes());
    out.push(u8::from(first_frame.is_some()));
    out.extend_from_slice(&first_frame.unwrap_or(0).to_be_bytes());
}

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_be_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// The explanation of an encoded finding (borrowed).
fn explanation(b: &[u8]) -> Option<&str> {
    postcard::take_from_bytes::<&str>(b.get(KEY_LEN..)?)
        .ok()
        .map(|(s, _)| s)
}

/// The rest of a finding, as written.
#[derive(Serialize)]
struct RestOut<'a> {
    endpoints: [Endpoint; 2],
    connections: u64,
    share: Option<f64>,
    evidence: EvidenceOut<'a>,
    fix: FixOut<'a>,
    confidence: u8,
    vantage: Vantage,
}

/// The rest of a finding, as read back: the same fields in the same order.
#[derive(Deserialize)]
struct RestIn {
    endpoints: [Endpoint; 2],
    connections: u64,
    share: Option<f64>,
    evidence: Vec<(u64, Timestamp, String)>,
    fix: Vec<(u8, String)>,
    confidence: u8,
    vantage: Vantage,
}

/// Evidence written as `(frame, time, note)` without copying it.
struct EvidenceOut<'a>(&'a [Evidence]);

impl Serialize for EvidenceOut<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(|e| (e.frame, e.ts, e.note.as_str())))
    }
}

/// Fixes written as `(host, action)`.
struct FixOut<'a>(&'a [Fix]);

impl Serialize for FixOut<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(
            self.0
                .iter()
                .map(|x| (host_code(x.host), x.action.as_str())),
        )
    }
}

fn host_code(h: Host) -> u8 {
    match h {
        Host::Client => 0,
        Host::Server => 1,
        Host::Both => 2,
    }
}

fn host_of(code: u8) -> Option<Host> {
    Some(match code {
        0 => Host::Client,
        1 => Host::Server,
        2 => Host::Both,
        _ => return None,
    })
}

const CONFIDENCES: [Confidence; 3] = [Confidence::Low, Confidence::Medium, Confidence::High];

impl Record for Finding {
    fn encode(&self, out: &mut Vec<u8>) {
        // Every field named: a field added to Finding fails to compile here until it is
        // stored too.
        let Finding {
            id,
            stream,
            endpoints,
            cost_ns,
            connections,
            share,
            evidence,
            explanation,
            fix,
            confidence,
            vantage,
        } = self;
        let first_frame = evidence.first().map(|e| e.frame);
        write_key(*cost_ns, *stream, *id, first_frame, out);
        let rest = RestOut {
            endpoints: *endpoints,
            connections: *connections,
            share: *share,
            evidence: EvidenceOut(evidence),
            fix: FixOut(fix),
            confidence: CONFIDENCES
                .iter()
                .position(|c| c == confidence)
                .unwrap_or(0) as u8,
            vantage: *vantage,
        };
        // Vec<u8> output cannot fail, and every field has a known encoding.
        let bytes = std::mem::take(out);
        let bytes = postcard::to_extend(explanation.as_str(), bytes).expect("a str encodes");
        *out = postcard::to_extend(&rest, bytes).expect("a finding encodes");
    }

    fn decode(bytes: &[u8]) -> Option<Self> {
        let id = u16::from_be_bytes(bytes.get(16..18)?.try_into().ok()?);
        let (text, rest): (&str, _) = postcard::take_from_bytes(bytes.get(KEY_LEN..)?).ok()?;
        let r: RestIn = postcard::from_bytes(rest).ok()?;
        Some(Finding {
            id: *FindingId::ALL.get(usize::from(id))?,
            stream: u64_at(bytes, 8)?,
            endpoints: r.endpoints,
            cost_ns: !u64_at(bytes, 0)?,
            connections: r.connections,
            share: r.share,
            evidence: r
                .evidence
                .into_iter()
                .map(|(frame, ts, note)| Evidence { frame, ts, note })
                .collect(),
            explanation: text.to_string(),
            fix: r
                .fix
                .into_iter()
                .map(|(h, action)| {
                    Some(Fix {
                        host: host_of(h)?,
                        action,
                    })
                })
                .collect::<Option<_>>()?,
            confidence: *CONFIDENCES.get(usize::from(r.confidence))?,
            vantage: r.vantage,
        })
    }

    /// The cost inverted and the stream.
    const ORDER_PREFIX: usize = 16;

    fn cmp_encoded(a: &[u8], b: &[u8]) -> Ordering {
        let key = |x: &[u8]| x.len().min(KEY_LEN);
        a[..key(a)]
            .cmp(&b[..key(b)])
            .then_with(|| explanation(a).cmp(&explanation(b)))
    }
}

/// Writes a finding as the report prints it, on the thread that judged it
/// ([`crate::analyze_rendered`]): the report then copies the bytes out in order instead
/// of converting every finding on one thread after the pass.
pub trait Render: Sync {
    /// Appends `f` as the report prints it to `out`. In a sharded pass its stream numbers
    /// are provisional (`f.stream`, and [`tcpwhy_detect::StreamRef`]s in its texts): the
    /// renderer says where in `marks`, and the report writes their final numbers there
    /// ([`Findings::final_stream`]) as it copies.
    fn render(&self, f: &Finding, out: &mut Vec<u8>, marks: &mut Vec<StreamMark>);
}

/// Where a rendered finding holds a provisional stream id: `bytes[at..at + len]` stand
/// for the final number of `stream` (`None`: for nothing, a marker to drop).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StreamMark {
    pub at: u32,
    pub len: u32,
    pub stream: Option<u64>,
}

/// A finding already rendered ([`Render`]): what the report needs to choose and count
/// it, and its bytes.
pub struct Rendered {
    pub id: FindingId,
    /// Final once read back through [`Findings::shown`].
    pub stream: u64,
    pub endpoints: [Endpoint; 2],
    pub cost_ns: u64,
    pub connections: u64,
    /// As [`Render::render`] wrote them (provisional stream numbers in a sharded pass).
    pub bytes: Vec<u8>,
    /// Where `bytes` hold provisional stream ids, in order.
    pub marks: Vec<StreamMark>,
    /// The rest of the sort key (a finding's: [`KEY_LEN`]).
    first_frame: Option<u64>,
    explanation: String,
}

impl Rendered {
    /// `f` rendered by `render`, taking its explanation.
    pub(crate) fn new(mut f: Finding, render: &dyn Render) -> Self {
        let (mut bytes, mut marks) = (Vec::new(), Vec::new());
        render.render(&f, &mut bytes, &mut marks);
        Rendered {
            id: f.id,
            stream: f.stream,
            endpoints: f.endpoints,
            cost_ns: f.cost_ns,
            connections: f.connections,
            bytes,
            marks,
            first_frame: f.evidence.first().map(|e| e.frame),
            explanation: std::mem::take(&mut f.explanation),
        }
    }
}

impl Record for Rendered {
    fn encode(&self, out: &mut Vec<u8>) {
        write_key(self.cost_ns, self.stream, self.id, self.first_frame, out);
        let bytes = std::mem::take(out);
        let bytes = postcard::to_extend(self.explanation.as_str(), bytes).expect("a str encodes");
        *out = postcard::to_extend(&(self.endpoints, self.connections, &self.marks), bytes)
            .expect("endpoints encode");
        out.extend_from_slice(&self.bytes);
    }

    fn decode(bytes: &[u8]) -> Option<Self> {
        let (shown, explanation) = RenderedView::decode(bytes)?;
        Some(Rendered {
            id: shown.id,
            stream: shown.stream,
            endpoints: shown.endpoints,
            cost_ns: shown.cost_ns,
            connections: shown.connections,
            bytes: shown.bytes.to_vec(),
            marks: shown.marks,
            first_frame: (*bytes.get(18)? == 1).then_some(u64_at(bytes, 19)?),
            explanation: std::str::from_utf8(explanation).ok()?.to_string(),
        })
    }

    fn cmp_encoded(a: &[u8], b: &[u8]) -> Ordering {
        Finding::cmp_encoded(a, b)
    }

    const ORDER_PREFIX: usize = <Finding as Record>::ORDER_PREFIX;
}

/// A rendered finding read back for the report ([`Findings::for_each_shown`]): its
/// bytes borrowed from where the store read it, its stream final. Reading each as an
/// owned [`Rendered`] copied its bytes and explanation into new allocations, freed
/// right after: the report's one thread did that for every finding.
pub struct RenderedView<'a> {
    pub id: FindingId,
    pub stream: u64,
    pub endpoints: [Endpoint; 2],
    pub cost_ns: u64,
    pub connections: u64,
    /// As [`Render::render`] wrote them (provisional stream numbers in a sharded pass).
    pub bytes: &'a [u8],
    /// Where `bytes` hold provisional stream ids, in order.
    pub marks: Vec<StreamMark>,
}

impl<'a> RenderedView<'a> {
    /// The finding [`Rendered::encode`] wrote in `bytes`, and its explanation's bytes
    /// (not checked as UTF-8 here: the report does not read them). postcard writes a
    /// string as a byte string: its length, then its bytes.
    fn decode(bytes: &'a [u8]) -> Option<(Self, &'a [u8])> {
        let id = u16::from_be_bytes(bytes.get(16..18)?.try_into().ok()?);
        let (explanation, rest): (&[u8], _) =
            postcard::take_from_bytes(bytes.get(KEY_LEN..)?).ok()?;
        let ((endpoints, connections, marks), rendered): (
            ([Endpoint; 2], u64, Vec<StreamMark>),
            _,
        ) = postcard::take_from_bytes(rest).ok()?;
        let shown = RenderedView {
            id: *FindingId::ALL.get(usize::from(id))?,
            stream: u64_at(bytes, 8)?,
            endpoints,
            cost_ns: !u64_at(bytes, 0)?,
            connections,
            bytes: rendered,
            marks,
        };
        Some((shown, explanation))
    }
}

/// Every finding of a pass in the report's order (cost, largest first), read back one at
/// a time with their final stream numbers: whole, or rendered on the threads that found
/// them ([`Render`]), never both.
#[derive(Default)]
pub struct Findings {
    sorted: Sorted<Finding>,
    shown: Sorted<Rendered>,
    /// A sharded pass's final stream numbers, given to each finding as it is read.
    numbers: Option<StreamNumbers>,
}

impl Findings {
    pub(crate) fn new(
        sorted: Sorted<Finding>,
        shown: Sorted<Rendered>,
        numbers: Option<StreamNumbers>,
    ) -> Self {
        Findings {
            sorted,
            shown,
            numbers,
        }
    }

    /// How many.
    pub fn len(&self) -> u64 {
        self.sorted.len() + self.shown.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether they were rendered during the pass: read them with [`Self::shown`].
    pub fn is_shown(&self) -> bool {
        !self.shown.is_empty()
    }

    /// Sorted runs of them in temporary files.
    pub fn runs_on_disk(&self) -> usize {
        self.sorted.runs_on_disk() + self.shown.runs_on_disk()
    }

    /// The final number of a stream id found in a rendered finding's bytes.
    pub fn final_stream(&self, stream: u64) -> u64 {
        self.numbers.as_ref().map_or(stream, |n| n.get(stream))
    }

    /// The rendered findings in order, each lent to `each` with its final stream number
    /// (its bytes keep the provisional ones); the first error, reading a temporary file
    /// back or from `each`, ends the reading.
    pub fn for_each_shown(
        &self,
        mut each: impl FnMut(&RenderedView<'_>) -> io::Result<()>,
    ) -> io::Result<()> {
        self.shown.for_each_encoded(|b| {
            let (mut f, _) = RenderedView::decode(b).ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    "a finding read back from memory or a temporary file did not decode",
                )
            })?;
            f.stream = self.final_stream(f.stream);
            each(&f)
        })
    }

    /// The findings in order, decoded one at a time (as often as needed: a text report
    /// reads them once for its verdict and once to print them). An error reading a
    /// temporary file back ends the iteration.
    pub fn iter(&self) -> impl Iterator<Item = io::Result<Finding>> + '_ {
        self.sorted.iter().map(move |r| {
            let mut f = r?;
            if let Some(n) = &self.numbers {
                f.stream = n.get(f.stream);
                f.resolve_stream_refs(&|s| n.get(s));
            }
            Ok(f)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spill::SpillSort;

    fn finding(id: FindingId, stream: u64, cost_ns: u64, frame: u64, text: &str) -> Finding {
        Finding {
            id,
            stream,
            endpoints: [
                Endpoint {
                    addr: std::net::IpAddr::from([10, 0, 0, 1]),
                    port: 40000,
                },
                Endpoint {
                    addr: "2001:db8::2".parse().unwrap(),
                    port: 443,
                },
            ],
            cost_ns,
            connections: 3,
            share: Some(0.123456789),
            evidence: vec![
                Evidence {
                    frame,
                    ts: Timestamp::from_nanos(1_700_000_000_123_456_789),
                    note: "SYN".into(),
                },
                Evidence {
                    frame: frame + 2,
                    ts: Timestamp::from_nanos(-5),
                    note: "é".into(),
                },
            ],
            explanation: text.into(),
            fix: vec![
                Fix {
                    host: Host::Server,
                    action: "sysctl -w x=1".into(),
                },
                Fix {
                    host: Host::Both,
                    action: String::new(),
                },
            ],
            confidence: Confidence::Medium,
            vantage: Vantage::Server,
        }
    }

    #[test]
    fn a_finding_reads_back_as_written() {
        let f = finding(
            FindingId::ALL[FindingId::ALL.len() - 1],
            7,
            12_000_000,
            3,
            "x",
        );
        let mut bytes = Vec::new();
        f.encode(&mut bytes);
        let back = Finding::decode(&bytes).unwrap();
        assert_eq!(format!("{back:?}"), format!("{f:?}"));
        // A truncated encoding is refused, not misread.
        assert!(Finding::decode(&bytes[..bytes.len() - 1]).is_none());
    }

    #[test]
    fn findings_sort_by_cost_then_stream_id_first_frame_and_text() {
        let [a, b] = [FindingId::ALL[0], FindingId::ALL[1]];
        let fs = vec![
            finding(a, 2, 5, 1, "z"),
            finding(b, 1, 5, 1, "z"),
            finding(a, 1, 5, 9, "z"),
            finding(a, 1, 5, 1, "z"),
            finding(a, 1, 5, 1, "y"),
            finding(a, 9, 6, 1, "z"),
        ];
        // Spilled one record a run: the order comes from the merge.
        let mut s = SpillSort::new(1);
        for f in &fs {
            s.push(f).unwrap();
        }
        assert!(s.runs() > 0);
        let got: Vec<(u64, u64, usize, u64, String)> =
            Findings::new(s.seal(), Sorted::default(), None)
                .iter()
                .map(|f| {
                    let f = f.unwrap();
                    let id = FindingId::ALL.iter().position(|&x| x == f.id).unwrap();
                    (f.cost_ns, f.stream, id, f.evidence[0].frame, f.explanation)
                })
                .collect();
        let want = [
            (6, 9, 0, 1, "z"),
            (5, 1, 0, 1, "y"),
            (5, 1, 0, 1, "z"),
            (5, 1, 0, 9, "z"),
            (5, 1, 1, 1, "z"),
            (5, 2, 0, 1, "z"),
        ];
        let want: Vec<_> = want
            .iter()
            .map(|&(c, s, i, fr, t)| (c, s, i, fr, t.to_string()))
            .collect();
        assert_eq!(got, want);
    }
}
