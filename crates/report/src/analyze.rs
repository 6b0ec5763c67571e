//! `tcpwhy analyze`: a short verdict, then one block per finding sorted by cost; or the
//! versioned JSON document (docs/json.md).

use crate::flows::{footer, FileReport};
use crate::json;
use crate::units::{ms, ns_to_ms};
use crate::SCHEMA_VERSION;
use serde::ser::{Error as _, SerializeSeq};
use serde::{Serialize, Serializer};
use std::cell::RefCell;
use std::collections::{BTreeMap, HashSet};
use std::fmt::Write as _;
use std::io::{self, Write};
use tcpwhy_detect::detector::plural;
use tcpwhy_detect::host::{HostJoin, HostView};
use tcpwhy_detect::{Exchange, Finding, FindingId};
use tcpwhy_pipeline::{Findings, Render, RenderedView, StreamMark};
use tcpwhy_track::{Endpoint, PROVISIONAL_STREAM};

/// One capture's analysis.
pub struct AnalyzeReport<'a> {
    pub file: FileReport,
    /// Every finding of the pass, sorted by cost; read back as the report is written
    /// (a long capture's findings wait in temporary files, not in memory).
    pub findings: Findings,
    /// Whether a finding is about a connection the user asked for (`--stream`,
    /// `--filter`); the others are left out of everything.
    pub keep: &'a dyn Fn(u64, &[Endpoint; 2]) -> bool,
    /// Findings that cost less are not shown, only counted by id: a mechanism seen at
    /// no measurable cost (a spurious retransmission the sender undid, reordering
    /// absorbed by the duplicate-ACK threshold) is named, not silently hidden.
    pub min_cost_ns: u64,
    /// `(stream, exchanges)` when `--exchanges` was given.
    pub exchanges: Option<Vec<(u64, Vec<Exchange>)>>,
    /// `(bundle directory, host)` for each `--host`, in the order given: each finding
    /// shown is judged against it as it is written.
    pub hosts: &'a [(String, HostView)],
}

/// One reading of a report's findings, in order: those shown, each judged by the host
/// bundles, while those below the cost threshold are counted.
pub(crate) struct Walk<'r> {
    report: &'r AnalyzeReport<'r>,
    findings: Box<dyn Iterator<Item = io::Result<Finding>> + 'r>,
    /// Whether findings are judged by the host bundles on this reading.
    join: bool,
    /// Findings below the threshold per id.
    below: BTreeMap<FindingId, usize>,
    /// Each bundle's join with the findings shown so far.
    joins: Vec<HostJoin>,
}

impl<'r> Walk<'r> {
    pub(crate) fn new(report: &'r AnalyzeReport<'r>, join: bool) -> Self {
        Walk {
            report,
            findings: Box::new(report.findings.iter()),
            join,
            below: BTreeMap::new(),
            joins: report
                .hosts
                .iter()
                .map(|(_, h)| tcpwhy_detect::host::join(&mut [], h))
                .collect(),
        }
    }

    /// `(id, count)` of the findings below the threshold, in id order.
    pub(crate) fn below(&self) -> Vec<(FindingId, usize)> {
        self.below.iter().map(|(&id, &n)| (id, n)).collect()
    }
}

impl Iterator for Walk<'_> {
    type Item = io::Result<Finding>;

    fn next(&mut self) -> Option<io::Result<Finding>> {
        loop {
            let mut f = match self.findings.next()? {
                Ok(f) => f,
                Err(e) => return Some(Err(e)),
            };
            if !(self.report.keep)(f.stream, &f.endpoints) {
                continue;
            }
            if f.cost_ns < self.report.min_cost_ns {
                *self.below.entry(f.id).or_default() += 1;
                continue;
            }
            if self.join {
                for ((_, h), j) in self.report.hosts.iter().zip(&mut self.joins) {
                    let one = tcpwhy_detect::host::join(std::slice::from_mut(&mut f), h);
                    j.correlations.extend(one.correlations);
                }
            }
            return Some(Ok(f));
        }
    }
}

/// How many findings the verdict names.
const VERDICT_TOP: usize = 3;

fn pct(share: Option<f64>) -> String {
    share.map_or(String::new(), |s| {
        format!(" ({:.0} % of the connection's time)", s * 100.0)
    })
}

/// The verdict: the costliest mechanisms summed over connections, `(id, cost, count)`,
/// costliest first (ties in the order first reported).
pub(crate) fn verdict(r: &AnalyzeReport<'_>) -> io::Result<Vec<(FindingId, u64, usize)>> {
    let mut by_id: Vec<(FindingId, u64, usize)> = Vec::new();
    for f in Walk::new(r, false) {
        let f = f?;
        match by_id.iter_mut().find(|(id, _, _)| *id == f.id) {
            Some(e) => {
                e.1 += f.cost_ns;
                e.2 += f.connections as usize;
            }
            None => by_id.push((f.id, f.cost_ns, f.connections as usize)),
        }
    }
    by_id.sort_by_key(|e| std::cmp::Reverse(e.1));
    Ok(by_id)
}

/// Of the ids in `listed` (verdict entries) that are part of another's time, those
/// whose every finding is on a stream that also has a finding of the parent: their
/// time is the parent's, not in addition. Keeps the streams of these ids' findings
/// only (8 bytes each), for the one reading this takes.
pub(crate) fn within_parent(
    r: &AnalyzeReport<'_>,
    listed: &[(FindingId, u64, usize)],
) -> io::Result<Vec<FindingId>> {
    let children: Vec<FindingId> = listed
        .iter()
        .map(|e| e.0)
        .filter(|id| id.part_of().is_some())
        .collect();
    let children = &children[..];
    if children.is_empty() {
        return Ok(Vec::new());
    }
    let mut parents: HashSet<(FindingId, u64)> = HashSet::new();
    let mut child_streams: Vec<(FindingId, u64)> = Vec::new();
    for f in Walk::new(r, false) {
        let f = f?;
        if children.contains(&f.id) {
            child_streams.push((f.id, f.stream));
        }
        if children.iter().any(|c| c.part_of() == Some(f.id)) {
            parents.insert((f.id, f.stream));
        }
    }
    Ok(children
        .iter()
        .copied()
        .filter(|&c| {
            let parent = c.part_of();
            child_streams
                .iter()
                .filter(|(id, _)| *id == c)
                .all(|&(_, s)| parent.is_some_and(|p| parents.contains(&(p, s))))
        })
        .collect())
}

/// Writes the text report; says whether any finding was shown.
pub fn write_text(reports: &[AnalyzeReport<'_>], out: &mut impl Write) -> io::Result<bool> {
    let several = reports.len() > 1;
    let mut any = false;
    for r in reports {
        if several {
            writeln!(out, "== {} ==", r.file.path)?;
        }
        let t0 = r.file.stats.start.unwrap_or_default();
        let by_id = verdict(r)?;
        if let Some(why) = crate::flows::nothing_analysed(&r.file) {
            // First, not "no mechanism": nothing was looked at.
            writeln!(out, "{why}")?;
        } else if by_id.is_empty() {
            writeln!(
                out,
                "No TCP mechanism cost time above the threshold in this capture."
            )?;
        } else {
            any = true;
            let top = &by_id[..by_id.len().min(VERDICT_TOP)];
            let within = within_parent(r, top)?;
            writeln!(out, "Verdict:")?;
            for (id, cost, n) in top {
                // Say when the time is the same as another listed finding's, so that
                // the lines are not read as adding up.
                let part = id
                    .part_of()
                    .filter(|_| within.contains(id))
                    .map_or(String::new(), |p| {
                        format!(" (part of {}'s time, not in addition)", p.as_str())
                    });
                writeln!(
                    out,
                    "  {}: {} ms lost on {n} connection(s){part}",
                    id.as_str(),
                    ms(*cost)
                )?;
            }
            if by_id.len() > VERDICT_TOP {
                let more = by_id.len() - VERDICT_TOP;
                let kinds = plural(more as u64, "kind", "kinds");
                writeln!(out, "  … and {more} more {kinds} of finding below")?;
            }
        }
        let mut walk = Walk::new(r, true);
        let mut block = String::new();
        for f in walk.by_ref() {
            block.clear();
            push_finding(&mut block, &f?, t0);
            out.write_all(block.as_bytes())?;
        }
        let below = walk.below();
        if !below.is_empty() {
            let list: Vec<String> = below
                .iter()
                .map(|(id, n)| format!("{} ×{n}", id.as_str()))
                .collect();
            write!(
                out,
                "\nAlso seen, below --min-cost (not shown; --min-cost 0 shows them): {}\n",
                list.join(", ")
            )?;
        }
        if let Some(xs) = &r.exchanges {
            writeln!(
                out,
                "\nExchanges (request → server time → response in RTT rounds):"
            )?;
            for (stream, list) in xs {
                for x in list {
                    let server = x.server_time_ns().map_or("-".into(), ms);
                    let resp = x.response.as_ref();
                    let rounds: Vec<String> =
                        x.rounds.iter().map(|r| r.segments.to_string()).collect();
                    writeln!(
                        out,
                        "  stream {stream:>5} #{:<3} frames {}–{}  request {} B  server {} ms  response {} B in {} ms, {} round(s) [{}]",
                        x.index + 1,
                        x.request.first_frame,
                        resp.map_or(x.request.last_frame, |r| r.last_frame),
                        x.request.bytes,
                        server,
                        resp.map_or(0, |r| r.bytes),
                        resp.map_or("-".into(), |r| ms(r.duration_ns())),
                        x.rounds.len(),
                        rounds.join(" ")
                    )?;
                }
            }
        }
        for ((dir, _), j) in r.hosts.iter().zip(&walk.joins) {
            out.write_all(crate::host::render_join_text(j, dir).as_bytes())?;
        }
        writeln!(out)?;
        out.write_all(footer(&r.file).as_bytes())?;
    }
    Ok(any)
}

/// One finding's block of the text report, appended to `out` (a buffer reused finding
/// after finding, written out in one piece).
fn push_finding(out: &mut String, f: &Finding, t0: tcpwhy_capture::Timestamp) {
    // Writing to a String cannot fail.
    let _ = writeln!(
        out,
        "\n[{}] stream {}  {} → {}  cost {} ms{}",
        f.id.as_str(),
        f.stream,
        f.endpoints[0],
        f.endpoints[1],
        ms(f.cost_ns),
        pct(f.share)
    );
    push_wrapped(out, &f.explanation, "  ");
    out.push_str("  Evidence (Wireshark frame numbers; time since the first connection began):\n");
    for e in &f.evidence {
        // Seconds since the capture's first TCP connection began, like Wireshark's
        // default time column.
        let rel = e.ts.since(t0) as f64 / 1e9;
        let _ = writeln!(out, "    frame {:>7}  {rel:>12.6} s  {}", e.frame, e.note);
    }
    out.push_str("  Fix:\n");
    for x in &f.fix {
        let _ = match x.host {
            tcpwhy_detect::Host::Both => writeln!(out, "    on both hosts: {}", x.action),
            h => writeln!(out, "    on the {}: {}", h.as_str(), x.action),
        };
    }
    let _ = writeln!(
        out,
        "  Confidence: {}; vantage assumed: {}",
        f.confidence.as_str(),
        f.vantage.name()
    );
}

/// Prose wrapped at 88 columns with an indent, appended to `out`: the words split where
/// `str::split_whitespace` splits them, lines as long as they fit. Text of ASCII bytes other than the vertical tab
/// (which `char::is_whitespace` counts and `u8::is_ascii_whitespace` does not) splits
/// by bytes: the char-by-char split was most of `analyze`'s text output (288 M of the
/// 368 M instructions writing 7,600 findings, callgrind).
pub(crate) fn push_wrapped(out: &mut String, text: &str, indent: &str) {
    if text.bytes().all(|b| b.is_ascii() && b != 0x0b) {
        push_words(out, text.split_ascii_whitespace(), indent);
    } else {
        push_words(out, text.split_whitespace(), indent);
    }
}

fn push_words<'a>(out: &mut String, words: impl Iterator<Item = &'a str>, indent: &str) {
    const WIDTH: usize = 88;
    // The current line's length in bytes, its indent included; 0 before its first word.
    let mut line = 0;
    for word in words {
        if line > 0 && line + 1 + word.len() > WIDTH {
            out.push('\n');
            line = 0;
        }
        if line == 0 {
            out.push_str(indent);
            line = indent.len();
        } else {
            out.push(' ');
            line += 1;
        }
        out.push_str(word);
        line += word.len();
    }
    if line > 0 {
        out.push('\n');
    }
}

#[derive(Serialize)]
struct JsonDoc<'a, 'w> {
    schema_version: u32,
    command: &'static str,
    files: Vec<JsonFile<'a, 'w>>,
}

/// One file. `findings` reads the findings once, as it is written; `below_min_cost`
/// and `hosts`, written after it (serde writes fields in order), report what that
/// reading counted and joined.
#[derive(Serialize)]
struct JsonFile<'a, 'w> {
    #[serde(flatten)]
    head: JsonFileHead<'a>,
    findings: JsonFindings<'a, 'w>,
    /// Finding id → how many findings the cost threshold left out.
    below_min_cost: JsonBelow<'a, 'w>,
    #[serde(skip_serializing_if = "Option::is_none")]
    exchanges: Option<Vec<JsonExchange>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    hosts: Option<JsonHosts<'a, 'w>>,
}

/// The findings shown, each converted and written in turn.
struct JsonFindings<'a, 'w> {
    walk: &'a RefCell<Walk<'w>>,
    /// Set when at least one was written.
    any: &'a std::cell::Cell<bool>,
}

impl Serialize for JsonFindings<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(None)?;
        let mut walk = self.walk.borrow_mut();
        for f in walk.by_ref() {
            let f = f.map_err(S::Error::custom)?;
            self.any.set(true);
            seq.serialize_element(&json_finding(&f))?;
        }
        seq.end()
    }
}

struct JsonBelow<'a, 'w>(&'a RefCell<Walk<'w>>);

impl Serialize for JsonBelow<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        // Keyed by the id as written, in that text's order.
        let walk = self.0.borrow();
        let by_name: BTreeMap<&str, usize> =
            walk.below.iter().map(|(id, &n)| (id.as_str(), n)).collect();
        by_name.serialize(s)
    }
}

struct JsonHosts<'a, 'w>(&'a RefCell<Walk<'w>>);

impl Serialize for JsonHosts<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let walk = self.0.borrow();
        let hosts = walk.report.hosts;
        s.collect_seq(
            hosts
                .iter()
                .zip(&walk.joins)
                .map(|((dir, _), j)| crate::host::join_json(j, dir)),
        )
    }
}

/// A finding in its JSON form, borrowed from the finding: nothing is copied on the way
/// out (no `String` per endpoint and timestamp, no vectors of evidence and fixes).
pub(crate) fn json_finding(f: &Finding) -> JsonFinding<'_> {
    JsonFinding {
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
    }
}

#[derive(Serialize)]
pub(crate) struct JsonFinding<'a> {
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
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&self.0)
    }
}

/// A finding's evidence lines, written as [`JsonEvidence`].
struct EvidenceList<'a>(&'a [tcpwhy_detect::Evidence]);

impl Serialize for EvidenceList<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
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
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
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

/// Renders a finding as an element of a file's `findings` in the JSON document, on the
/// thread that found it ([`tcpwhy_pipeline::analyze_rendered`]): the bytes
/// [`write_json`] writes for it.
pub struct JsonRender;

impl Render for JsonRender {
    fn render(&self, f: &Finding, out: &mut Vec<u8>, marks: &mut Vec<StreamMark>) {
        let start = out.len();
        crate::finding_json::write_finding(out, f);
        if f.stream & PROVISIONAL_STREAM != 0 {
            stream_marks(out, start, marks);
        }
    }
}

/// The document's fields before `files`.
#[derive(Serialize)]
struct JsonHead {
    schema_version: u32,
    command: &'static str,
}

/// A file's fields before `findings`.
#[derive(Serialize)]
struct JsonFileHead<'a> {
    path: &'a str,
    frames: u64,
    tcp_frames: u64,
    connections: usize,
    error: Option<&'a str>,
    /// Frames skipped for an unsupported link type, by link type; absent when none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    skipped_link_types: Vec<crate::flows::JsonLinkType>,
    /// Frames earlier than a frame before them; absent when none.
    #[serde(skip_serializing_if = "crate::flows::is_zero")]
    time_backwards: u64,
    /// Frames whose pcap fraction of a second was out of range; absent when none.
    #[serde(skip_serializing_if = "crate::flows::is_zero")]
    time_out_of_range: u64,
    #[serde(flatten)]
    cuts: crate::flows::JsonCuts,
}

impl<'a> JsonFileHead<'a> {
    fn of(r: &'a AnalyzeReport<'_>) -> Self {
        JsonFileHead {
            path: &r.file.path,
            frames: r.file.frames,
            tcp_frames: r.file.tcp_frames,
            connections: r.file.stats.count as usize,
            error: r.file.error.as_ref().map(|e| e.message.as_str()),
            skipped_link_types: crate::flows::json_link_types(&r.file),
            time_backwards: r.file.skipped.time_backwards(),
            time_out_of_range: r.file.skipped.time_out_of_range(),
            cuts: crate::flows::JsonCuts::of(&r.file.cuts),
        }
    }
}

/// A file's fields after `findings` (no `hosts`: that document is written by serde).
#[derive(Serialize)]
struct JsonFileTail<'a> {
    below_min_cost: BTreeMap<&'a str, usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    exchanges: Option<Vec<JsonExchange>>,
}

/// Writes the JSON document of `tcpwhy analyze --format json`, reading each file's
/// findings once; says whether any finding was shown. Without host bundles the document
/// is written piece by piece around the findings, which are copied as rendered during
/// the pass ([`JsonRender`]) or rendered here; with them, through serde (each finding
/// is joined with the bundles as it is written).
pub fn write_json(reports: &[AnalyzeReport<'_>], out: &mut impl Write) -> io::Result<bool> {
    if reports.iter().any(|r| !r.hosts.is_empty()) {
        return write_json_joined(reports, out);
    }
    let mut buf = Vec::new();
    let head = JsonHead {
        schema_version: SCHEMA_VERSION,
        command: "analyze",
    };
    json::to_writer_pretty_at(&mut buf, &head, 0)?;
    out.write_all(buf.strip_suffix(b"\n}").unwrap_or(&buf))?;
    out.write_all(b",\n  \"files\": [")?;
    let mut any = false;
    for (i, r) in reports.iter().enumerate() {
        out.write_all(if i == 0 { b"\n    " } else { b",\n    " })?;
        let file = JsonFileHead::of(r);
        buf.clear();
        json::to_writer_pretty_at(&mut buf, &file, 2)?;
        out.write_all(buf.strip_suffix(b"\n    }").unwrap_or(&buf))?;
        out.write_all(b",\n      \"findings\": [")?;
        let (written, below) = if r.findings.is_shown() {
            write_shown(r, out)?
        } else {
            let mut walk = Walk::new(r, true);
            let mut written = false;
            for f in walk.by_ref() {
                let f = f?;
                out.write_all(if written {
                    b",\n        "
                } else {
                    b"\n        "
                })?;
                buf.clear();
                crate::finding_json::write_finding(&mut buf, &f);
                out.write_all(&buf)?;
                written = true;
            }
            (written, walk.below)
        };
        any |= written;
        out.write_all(if written { b"\n      ]" } else { b"]" })?;
        let tail = JsonFileTail {
            below_min_cost: below.iter().map(|(id, &n)| (id.as_str(), n)).collect(),
            exchanges: json_exchanges(r),
        };
        buf.clear();
        json::to_writer_pretty_at(&mut buf, &tail, 2)?;
        // `{` opened the tail's fields: they continue the file's.
        out.write_all(b",")?;
        out.write_all(buf.get(1..).unwrap_or_default())?;
    }
    out.write_all(if reports.is_empty() {
        b"]\n}\n"
    } else {
        b"\n  ]\n}\n"
    })?;
    Ok(any)
}

/// The findings of `r` rendered during the pass, those the user asked for and above
/// the cost threshold copied to `out` in order as elements of `findings`; whether any
/// was, and how many below the threshold per id.
fn write_shown(
    r: &AnalyzeReport<'_>,
    out: &mut impl Write,
) -> io::Result<(bool, BTreeMap<FindingId, usize>)> {
    let mut below = BTreeMap::new();
    let mut written = false;
    let mut chunk = Vec::with_capacity(2 * WRITE_CHUNK);
    r.findings.for_each_shown(|f| {
        if !(r.keep)(f.stream, &f.endpoints) {
            return Ok(());
        }
        if f.cost_ns < r.min_cost_ns {
            *below.entry(f.id).or_default() += 1;
            return Ok(());
        }
        chunk.extend_from_slice(if written {
            b",\n        "
        } else {
            b"\n        "
        });
        written = true;
        if !f.marks.is_empty() {
            renumbered(f, &r.findings, &mut chunk);
        } else {
            chunk.extend_from_slice(f.bytes);
        }
        if chunk.len() >= WRITE_CHUNK {
            out.write_all(&chunk)?;
            chunk.clear();
        }
        Ok(())
    })?;
    out.write_all(&chunk)?;
    Ok((written, below))
}

/// Bytes of findings gathered before they go to the output: larger than a `BufWriter`'s
/// buffer, so that they reach the writer below it without another copy.
const WRITE_CHUNK: usize = 64 * 1024;

/// A finding's JSON rendered during a sharded pass, into `out` with the final numbers
/// of its provisional stream ids, where [`stream_marks`] found them.
fn renumbered(f: &RenderedView<'_>, findings: &Findings, out: &mut Vec<u8>) {
    let mut from = 0;
    for m in &f.marks {
        let (at, end) = (m.at as usize, m.at as usize + m.len as usize);
        let (Some(before), true) = (f.bytes.get(from..at), end <= f.bytes.len()) else {
            break;
        };
        out.extend_from_slice(before);
        if let Some(s) = m.stream {
            out.extend_from_slice(
                itoa::Buffer::new()
                    .format(findings.final_stream(s))
                    .as_bytes(),
            );
        }
        from = end;
    }
    out.extend_from_slice(f.bytes.get(from..).unwrap_or_default());
}

/// Where the JSON of a finding of a sharded pass (`bytes`, from `start`) holds
/// provisional stream ids: the `stream` field's value, and the references in its texts
/// ([`tcpwhy_detect::StreamRef`]: `\u0001ID\u0002` once escaped in JSON), each replaced
/// as [`tcpwhy_detect::Finding::resolve_stream_refs`] does (a marker not followed by an
/// id and its end is dropped). Found on the thread that rendered it, so that the report
/// only copies.
fn stream_marks(bytes: &[u8], start: usize, marks: &mut Vec<StreamMark>) {
    const FIELD: &[u8] = b"\"stream\": ";
    const OPEN: &[u8] = b"\\u0001";
    const CLOSE: &[u8] = b"\\u0002";
    let digits = |b: &[u8]| b.iter().take_while(|c| c.is_ascii_digit()).count();
    let number = |b: &[u8]| std::str::from_utf8(b).ok()?.parse::<u64>().ok();
    let mut i = start;
    // The field comes second, after the id (whose text holds no such bytes).
    if let Some(p) = bytes[i..].windows(FIELD.len()).position(|w| w == FIELD) {
        let at = i + p + FIELD.len();
        let n = digits(&bytes[at..]);
        if let Some(stream) = number(&bytes[at..at + n]) {
            marks.push(mark(at - start, n, Some(stream)));
        }
        i = at + n;
    }
    // References: an escape sequence is `\` and one byte, or `\uXXXX`. The next
    // backslash found with `memchr`: byte by byte, this scan of a finding's ≈ 2 KB was
    // three times the rest of its rendering (≈ 15 k instructions a finding, callgrind,
    // `analyze -j 2`).
    while let Some(p) = bytes.get(i..).and_then(|b| memchr::memchr(b'\\', b)) {
        i += p;
        if !bytes[i..].starts_with(OPEN) {
            i += 2;
            continue;
        }
        let after = i + OPEN.len();
        let n = digits(&bytes[after..]);
        match (
            number(&bytes[after..after + n]),
            bytes[after + n..].starts_with(CLOSE),
        ) {
            (Some(stream), true) => {
                let end = after + n + CLOSE.len();
                marks.push(mark(i - start, end - i, Some(stream)));
                i = end;
            }
            _ => {
                marks.push(mark(i - start, OPEN.len(), None));
                i = after;
            }
        }
    }
}

/// A [`StreamMark`].
fn mark(at: usize, len: usize, stream: Option<u64>) -> StreamMark {
    StreamMark {
        at: at as u32,
        len: len as u32,
        stream,
    }
}

/// The exchanges of `r` in their JSON form, when asked for.
fn json_exchanges(r: &AnalyzeReport<'_>) -> Option<Vec<JsonExchange>> {
    r.exchanges.as_ref().map(|xs| {
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
    })
}

/// [`write_json`] with host bundles: the whole document through serde, each finding
/// joined with the bundles as it is written.
fn write_json_joined(reports: &[AnalyzeReport<'_>], out: &mut impl Write) -> io::Result<bool> {
    let walks: Vec<RefCell<Walk<'_>>> = reports
        .iter()
        .map(|r| RefCell::new(Walk::new(r, true)))
        .collect();
    let any = std::cell::Cell::new(false);
    let doc = JsonDoc {
        schema_version: SCHEMA_VERSION,
        command: "analyze",
        files: reports
            .iter()
            .zip(&walks)
            .map(|(r, walk)| JsonFile {
                head: JsonFileHead::of(r),
                findings: JsonFindings { walk, any: &any },
                below_min_cost: JsonBelow(walk),
                exchanges: json_exchanges(r),
                hosts: (!r.hosts.is_empty()).then_some(JsonHosts(walk)),
            })
            .collect(),
    };
    crate::json::to_writer_pretty(&mut *out, &doc)?;
    out.write_all(b"\n")?;
    Ok(any.get())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Wrapping splits where `split_whitespace` does and fills lines as before, on ASCII
    /// text (the byte split) and on text with other characters or a vertical tab.
    #[test]
    fn wrapping_splits_and_fills_as_the_char_split() {
        fn wrap_by_chars(text: &str, indent: &str) -> String {
            let mut out = String::new();
            let mut line = String::from(indent);
            for word in text.split_whitespace() {
                if line.len() > indent.len() && line.len() + 1 + word.len() > 88 {
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
        let pieces = [
            "a",
            "word",
            "40 ms",
            "\t",
            "\n",
            "  ",
            "\u{b}",
            "\u{a0}",
            "\u{2009}",
            "µs",
            "→",
            "×",
            "x".repeat(100).leak(),
            "frame 1234,",
            "",
        ];
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..3_000 {
            let mut text = String::new();
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            for i in 0..(x % 60) {
                text.push_str(pieces[((x >> (i % 50)) as usize + i as usize) % pieces.len()]);
                if (x >> (i % 37)) & 1 == 1 {
                    text.push(' ');
                }
            }
            for indent in ["", "  ", "    "] {
                let mut wrapped = String::new();
                push_wrapped(&mut wrapped, &text, indent);
                assert_eq!(wrapped, wrap_by_chars(&text, indent), "{text:?}");
            }
        }
    }

    /// The `stream` field and every `\u0001ID\u0002` reference are marked where they
    /// are; other escapes (a quote, a lone marker, a backslash at the very end) are
    /// passed over, a marker without its id and end is marked for dropping.
    #[test]
    fn stream_marks_find_the_field_and_each_reference() {
        let head = br#"{"id": "x", "#;
        let text = [
            &br#""stream": 9223372036854775817, "explanation": "a \"quoted\" one, "#[..],
            br#"stream \u00019223372036854775818\u0002 and \u0001 alone, "#,
            br#"then \u00012\u0002\"#,
        ]
        .concat();
        let bytes = [&head[..], &text].concat();
        let mut marks = Vec::new();
        stream_marks(&bytes, head.len(), &mut marks);
        let at = |needle: &[u8], from: usize| {
            from + text[from..]
                .windows(needle.len())
                .position(|w| w == needle)
                .unwrap()
        };
        let field = at(b"9223372036854775817", 0);
        let first = at(br"\u00019223372036854775818", 0);
        let alone = at(br"\u0001 alone", 0);
        let last = at(br"\u00012", 0);
        assert_eq!(
            marks,
            [
                mark(field, 19, Some(9_223_372_036_854_775_817)),
                mark(first, 31, Some(9_223_372_036_854_775_818)),
                mark(alone, 6, None),
                mark(last, 13, Some(2)),
            ]
        );
    }
}
