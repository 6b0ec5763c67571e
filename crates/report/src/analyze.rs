//! `tcpwhy analyze`: a short verdict, then one block per finding sorted by cost; or the
//! versioned JSON document (docs/json.md).

use crate::flows::{footer, FileReport};
use crate::units::{ms, ns_to_ms};
use crate::SCHEMA_VERSION;
use serde::Serialize;
use tcpwhy_detect::{Exchange, Finding, FindingId};

/// One capture's analysis.
pub struct AnalyzeReport {
    pub file: FileReport,
    /// Findings at or above the cost threshold, sorted by cost.
    pub findings: Vec<Finding>,
    /// `(stream, exchanges)` when `--exchanges` was given.
    pub exchanges: Option<Vec<(u64, Vec<Exchange>)>>,
    /// Findings below the cost threshold, not shown: `(id, count)` in id order. They
    /// are named so that a mechanism seen at no measurable cost (a spurious
    /// retransmission the sender undid, reordering absorbed by the duplicate-ACK
    /// threshold) is not silently hidden.
    pub below_threshold: Vec<(FindingId, usize)>,
    /// `(bundle directory, join)` for each `--host`, in the order given.
    pub hosts: Vec<(String, tcpwhy_detect::host::HostJoin)>,
}

impl AnalyzeReport {
    /// Counts, per id, the findings the threshold left out.
    pub fn count_below(hidden: &[Finding]) -> Vec<(FindingId, usize)> {
        let mut out: Vec<(FindingId, usize)> = Vec::new();
        for f in hidden {
            match out.iter_mut().find(|(id, _)| *id == f.id) {
                Some(e) => e.1 += 1,
                None => out.push((f.id, 1)),
            }
        }
        out.sort_by_key(|e| e.0);
        out
    }
}

/// How many findings the verdict names.
const VERDICT_TOP: usize = 3;

fn pct(share: Option<f64>) -> String {
    share.map_or(String::new(), |s| {
        format!(" ({:.0} % of the connection's time)", s * 100.0)
    })
}

/// The text report.
pub fn render_text(reports: &[AnalyzeReport]) -> String {
    let mut out = String::new();
    let several = reports.len() > 1;
    for r in reports {
        if several {
            out.push_str(&format!("== {} ==\n", r.file.path));
        }
        let t0 = r.file.stats.start.unwrap_or_default();
        if r.findings.is_empty() {
            out.push_str("No TCP mechanism cost time above the threshold in this capture.\n");
        } else {
            // Verdict: the costliest mechanisms, summed over connections.
            let mut by_id: Vec<(&str, u64, usize)> = Vec::new();
            for f in &r.findings {
                match by_id.iter_mut().find(|(id, _, _)| *id == f.id.as_str()) {
                    Some(e) => {
                        e.1 += f.cost_ns;
                        e.2 += f.connections as usize;
                    }
                    None => by_id.push((f.id.as_str(), f.cost_ns, f.connections as usize)),
                }
            }
            by_id.sort_by_key(|e| std::cmp::Reverse(e.1));
            out.push_str("Verdict:\n");
            for (id, cost, n) in by_id.iter().take(VERDICT_TOP) {
                // Say when the time is the same as another listed finding's, so that
                // the lines are not read as adding up.
                let on_same_streams = |child: &str, parent: FindingId| {
                    r.findings
                        .iter()
                        .filter(|f| f.id.as_str() == child)
                        .all(|f| {
                            r.findings
                                .iter()
                                .any(|g| g.id == parent && g.stream == f.stream)
                        })
                };
                let within = FindingId::parse(id)
                    .and_then(FindingId::part_of)
                    .filter(|&p| on_same_streams(id, p))
                    .map_or(String::new(), |p| {
                        format!(" (part of {}'s time, not in addition)", p.as_str())
                    });
                out.push_str(&format!(
                    "  {id}: {} ms lost on {n} connection(s){within}\n",
                    ms(*cost)
                ));
            }
            if by_id.len() > VERDICT_TOP {
                out.push_str(&format!(
                    "  … and {} more kinds of finding below\n",
                    by_id.len() - VERDICT_TOP
                ));
            }
            for f in &r.findings {
                out.push('\n');
                out.push_str(&format!(
                    "[{}] stream {}  {} → {}  cost {} ms{}\n",
                    f.id.as_str(),
                    f.stream,
                    f.endpoints[0],
                    f.endpoints[1],
                    ms(f.cost_ns),
                    pct(f.share)
                ));
                out.push_str(&wrap(&f.explanation, "  "));
                out.push_str("  Evidence (Wireshark frame numbers; time since the first connection began):\n");
                for e in &f.evidence {
                    // Seconds since the capture's first TCP connection began, like
                    // Wireshark's default time column.
                    let rel = e.ts.since(t0) as f64 / 1e9;
                    out.push_str(&format!(
                        "    frame {:>7}  {rel:>12.6} s  {}\n",
                        e.frame, e.note
                    ));
                }
                out.push_str("  Fix:\n");
                for x in &f.fix {
                    let on = match x.host {
                        tcpwhy_detect::Host::Both => "on both hosts".to_string(),
                        h => format!("on the {}", h.as_str()),
                    };
                    out.push_str(&format!("    {on}: {}\n", x.action));
                }
                out.push_str(&format!(
                    "  Confidence: {}; vantage assumed: {}\n",
                    f.confidence.as_str(),
                    f.vantage.name()
                ));
            }
        }
        if !r.below_threshold.is_empty() {
            let list: Vec<String> = r
                .below_threshold
                .iter()
                .map(|(id, n)| format!("{} ×{n}", id.as_str()))
                .collect();
            out.push_str(&format!(
                "\nAlso seen, below --min-cost (not shown; --min-cost 0 shows them): {}\n",
                list.join(", ")
            ));
        }
        if let Some(xs) = &r.exchanges {
            out.push_str("\nExchanges (request → server time → response in RTT rounds):\n");
            for (stream, list) in xs {
                for x in list {
                    let server = x.server_time_ns().map_or("-".into(), ms);
                    let resp = x.response.as_ref();
                    let rounds: Vec<String> =
                        x.rounds.iter().map(|r| r.segments.to_string()).collect();
                    out.push_str(&format!(
                        "  stream {stream:>5} #{:<3} frames {}–{}  request {} B  server {} ms  response {} B in {} ms, {} round(s) [{}]\n",
                        x.index + 1,
                        x.request.first_frame,
                        resp.map_or(x.request.last_frame, |r| r.last_frame),
                        x.request.bytes,
                        server,
                        resp.map_or(0, |r| r.bytes),
                        resp.map_or("-".into(), |r| ms(r.duration_ns())),
                        x.rounds.len(),
                        rounds.join(" ")
                    ));
                }
            }
        }
        for (dir, j) in &r.hosts {
            out.push_str(&crate::host::render_join_text(j, dir));
        }
        out.push('\n');
        out.push_str(&footer(&r.file));
    }
    out
}

/// Wraps prose at 88 columns with an indent.
pub(crate) fn wrap(text: &str, indent: &str) -> String {
    const WIDTH: usize = 88;
    let mut out = String::new();
    let mut line = String::from(indent);
    for word in text.split_whitespace() {
        if line.len() > indent.len() && line.len() + 1 + word.len() > WIDTH {
            out.push_str(&line);
            out.push('\n');
            line = String::from(indent);
        }
        if line.len() > indent.len() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if line.len() > indent.len() {
        out.push_str(&line);
        out.push('\n');
    }
    out
}

#[derive(Serialize)]
struct JsonDoc<'a> {
    schema_version: u32,
    command: &'static str,
    files: Vec<JsonFile<'a>>,
}

#[derive(Serialize)]
struct JsonFile<'a> {
    path: &'a str,
    frames: u64,
    tcp_frames: u64,
    connections: usize,
    error: Option<&'a str>,
    findings: Findings<'a>,
    /// Finding id → how many findings the cost threshold left out.
    below_min_cost: std::collections::BTreeMap<&'static str, usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    exchanges: Option<Vec<JsonExchange>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    hosts: Vec<crate::host::JsonJoin<'a>>,
}

#[derive(Serialize)]
struct JsonFinding<'a> {
    id: &'static str,
    stream: u64,
    client: Shown<&'a tcpwhy_track::Endpoint>,
    server: Shown<&'a tcpwhy_track::Endpoint>,
    cost_ms: f64,
    connections: u64,
    share: Option<f64>,
    evidence: EvidenceList<'a>,
    explanation: &'a str,
    fix: FixList<'a>,
    confidence: &'static str,
    vantage: &'static str,
}

#[derive(Serialize)]
struct JsonEvidence<'a> {
    frame: u64,
    time: Shown<tcpwhy_capture::Timestamp>,
    note: &'a str,
}

#[derive(Serialize)]
struct JsonFix<'a> {
    host: &'static str,
    action: &'a str,
}

/// A value written as a JSON string through its `Display`: the same bytes as its
/// `to_string()`, without a `String` made and freed per endpoint and timestamp.
struct Shown<T>(T);

impl<T: std::fmt::Display> Serialize for Shown<T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&self.0)
    }
}

/// The findings, each made into its JSON form as it is written: the document is
/// written straight from the analysis, not from a copy of it (a `Vec` of findings, each
/// with its own vectors of evidence and fixes, built and dropped on the way out).
struct Findings<'a>(&'a [Finding]);

impl Serialize for Findings<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(|f| JsonFinding {
            id: f.id.as_str(),
            stream: f.stream,
            client: Shown(&f.endpoints[0]),
            server: Shown(&f.endpoints[1]),
            cost_ms: ns_to_ms(f.cost_ns),
            connections: f.connections,
            share: f.share.map(|s| (s * 1000.0).round() / 1000.0),
            evidence: EvidenceList(&f.evidence),
            explanation: &f.explanation,
            fix: FixList(&f.fix),
            confidence: f.confidence.as_str(),
            vantage: f.vantage.name(),
        }))
    }
}

/// A finding's evidence lines, written as [`JsonEvidence`].
struct EvidenceList<'a>(&'a [tcpwhy_detect::Evidence]);

impl Serialize for EvidenceList<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(|e| JsonEvidence {
            frame: e.frame,
            time: Shown(e.ts),
            note: &e.note,
        }))
    }
}

/// A finding's fixes, written as [`JsonFix`].
struct FixList<'a>(&'a [tcpwhy_detect::Fix]);

impl Serialize for FixList<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(|x| JsonFix {
            host: x.host.as_str(),
            action: &x.action,
        }))
    }
}

#[derive(Serialize)]
struct JsonExchange {
    stream: u64,
    index: u32,
    request_first_frame: u64,
    request_last_frame: u64,
    request_bytes: u64,
    server_time_ms: Option<f64>,
    response_first_frame: Option<u64>,
    response_last_frame: Option<u64>,
    response_bytes: u64,
    response_ms: Option<f64>,
    rounds: Vec<u32>,
    idle_before_ms: Option<f64>,
}

/// Writes the JSON document of `tcpwhy analyze --format json`.
pub fn write_json(reports: &[AnalyzeReport], out: &mut impl std::io::Write) -> std::io::Result<()> {
    let doc = JsonDoc {
        schema_version: SCHEMA_VERSION,
        command: "analyze",
        files: reports
            .iter()
            .map(|r| JsonFile {
                path: &r.file.path,
                frames: r.file.frames,
                tcp_frames: r.file.tcp_frames,
                connections: r.file.stats.count as usize,
                error: r.file.error.as_ref().map(|e| e.message.as_str()),
                findings: Findings(&r.findings),
                below_min_cost: r
                    .below_threshold
                    .iter()
                    .map(|(id, n)| (id.as_str(), *n))
                    .collect(),
                exchanges: r.exchanges.as_ref().map(|xs| {
                    xs.iter()
                        .flat_map(|(stream, list)| {
                            list.iter().map(move |x| JsonExchange {
                                stream: *stream,
                                index: x.index,
                                request_first_frame: x.request.first_frame,
                                request_last_frame: x.request.last_frame,
                                request_bytes: x.request.bytes,
                                server_time_ms: x.server_time_ns().map(ns_to_ms),
                                response_first_frame: x.response.map(|r| r.first_frame),
                                response_last_frame: x.response.map(|r| r.last_frame),
                                response_bytes: x.response.map_or(0, |r| r.bytes),
                                response_ms: x.response.map(|r| ns_to_ms(r.duration_ns())),
                                rounds: x.rounds.iter().map(|r| r.segments).collect(),
                                idle_before_ms: x.idle_before_ns.map(ns_to_ms),
                            })
                        })
                        .collect()
                }),
                hosts: r
                    .hosts
                    .iter()
                    .map(|(dir, j)| crate::host::join_json(j, dir))
                    .collect(),
            })
            .collect(),
    };
    crate::json::to_writer_pretty(&mut *out, &doc)?;
    out.write_all(b"\n")
}
