//! `tcpwhy report`: one self-contained HTML page per capture (docs/report.md). After
//! analyze's pass, two more over the capture: `flows`' (the connections table) and a
//! tracker pass that keeps the series of the connections whose findings get a plot
//! ([`plots`]). The page is the template in `assets/` with the vendored uPlot, the
//! page's script and style, and the data as one JSON document, all inline: it opens
//! offline and can be mailed or attached to a ticket as one file.
//!
//! What the page holds is bounded whatever the capture: [`FINDINGS_CAP`] findings
//! listed, `max_plots` plots of at most [`DETAIL_BUDGET`] packets kept one by one and
//! [`plots::COLUMNS`] summary columns each, [`ROWS_CAP`] table rows, [`TEXT_CAP`] bytes of
//! the text report.

pub mod plots;

use crate::analyze::{json_finding, verdict, within_parent, write_text, AnalyzeReport, Walk};
use plots::{merge_windows, PlotPass, Wanted};
use serde_json::{json, Map, Value};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet};
use std::io::Write;
use tcpwhy_capture::Timestamp;
use tcpwhy_detect::Finding;

/// Findings listed on the page (the costliest; the rest are counted and left to
/// `analyze --format json`): a finding is about 1 kB of the page.
pub const FINDINGS_CAP: usize = 2_000;
/// Rows of the connections table: every connection with a finding, then the longest.
/// A row is about 1.9 kB of the page (measured: 3.85 MB for 2,000 rows of the bench's
/// mixed capture), so at most ≈ 2 MB.
pub const ROWS_CAP: usize = 1_000;
/// Packets kept one by one across all plots, shared equally by the plotted
/// connections. Measured on the bench's mixed capture: ≈ 62 bytes of the page per
/// packet kept (its segment or ACK, and the RTT and flight points it brings), so ≈ 3.7
/// MB at most; with the findings (≈ 1.4 MB), the table (≈ 1.9 MB), the summary columns
/// (≈ 0.8 MB for 50 plots) and the text, a page stays under 10 MB whatever the capture.
pub const DETAIL_BUDGET: usize = 60_000;
/// The text report is embedded up to this size (a capture with 100,000 findings has a
/// text report of about 100 MB; the page then says where to get it whole).
pub const TEXT_CAP: usize = 512 << 10;
/// Connections without a finding that get a plot too (the longest), within
/// `--max-plots`: a page of a healthy capture still shows its traffic.
const EXTRA_PLOTS: usize = 5;
/// The default of `--max-plots`.
pub const DEFAULT_MAX_PLOTS: usize = 50;
/// A finding's plot window is its evidence's time span widened on each side by a
/// quarter of it and by at least [`PAD_RTTS`] round trips of its connection (the
/// handshake's), so that the rounds before and after the evidence show at any RTT; by
/// [`PAD_NO_RTT_NS`] when the handshake was not captured. The summary columns cover
/// the rest (a display choice, not a diagnostic threshold).
const PAD_RTTS: u64 = 2;
const PAD_NO_RTT_NS: u64 = 20_000_000;

/// How to write a page.
pub struct PageOptions {
    /// Findings that get a plot, costliest first.
    pub max_plots: usize,
    /// `tcpwhy VERSION (COMMIT)`.
    pub generator: String,
    /// Threads of the connections-table pass (0: as `flows` chooses).
    pub threads: usize,
}

/// What a page holds, for the line the CLI prints.
#[derive(Debug)]
pub struct Written {
    pub bytes: usize,
    pub findings: usize,
    pub findings_total: usize,
    pub plots: usize,
    pub rows: usize,
    pub rows_total: u64,
}

/// Writes the page of `r`, the analysis of `input` (a file: it is read twice more).
pub fn write_page(
    r: &AnalyzeReport<'_>,
    input: &str,
    o: &PageOptions,
    out: &mut impl Write,
) -> Result<Written, String> {
    let shown = &r.file.path;
    let reading = |e: std::io::Error| format!("{shown}: reading the findings back: {e}");

    // The findings shown (as `analyze` shows them), the first FINDINGS_CAP kept whole.
    let mut walk = Walk::new(r, true);
    let mut findings: Vec<Finding> = Vec::new();
    let mut total = 0;
    let mut finding_streams: HashSet<u64> = HashSet::new();
    for f in walk.by_ref() {
        let f = f.map_err(reading)?;
        total += 1;
        finding_streams.insert(f.stream);
        if findings.len() < FINDINGS_CAP {
            findings.push(f);
        }
    }
    let below = walk.below();

    // Which findings get a plot, and the time windows of each plotted connection.
    let plotted: Vec<usize> = (0..findings.len().min(o.max_plots)).collect();
    let mut wanted: Vec<Wanted> = Vec::new();
    let mut index: HashMap<u64, usize> = HashMap::new();
    for &i in &plotted {
        let f = &findings[i];
        let k = *index.entry(f.stream).or_insert_with(|| {
            wanted.push(Wanted::new(f.stream, &f.endpoints));
            wanted.len() - 1
        });
        let w = &mut wanted[k];
        w.evidence.extend(f.evidence.iter().map(|e| e.frame));
        // The evidence's span: padded once the connection's RTT is known (below).
        if let (Some(a), Some(b)) = (
            f.evidence.iter().map(|e| e.ts).min(),
            f.evidence.iter().map(|e| e.ts).max(),
        ) {
            w.windows.push((a, b));
        }
    }

    // The connections table (every connection `keep` selects), each plotted
    // connection's lifetime, and the longest connections without a finding (plotted
    // too, so that a healthy capture still shows its traffic).
    let opts = tcpwhy_pipeline::Options {
        threads: o.threads,
        ..Default::default()
    };
    let flows = tcpwhy_pipeline::flows(input, &opts)?;
    let conns = |e: std::io::Error| format!("{shown}: reading the connections back: {e}");
    let mut rows = TopRows::default();
    let mut rows_total = 0u64;
    let extra_max = EXTRA_PLOTS.min(o.max_plots.saturating_sub(wanted.len()));
    let mut extra: Vec<(u64, Wanted)> = Vec::new();
    for c in flows.connections.iter() {
        let c = c.map_err(conns)?;
        if !(r.keep)(c.stream, &c.endpoints) {
            continue;
        }
        rows_total += 1;
        let w = match index.get(&c.stream) {
            Some(&k) => Some(&mut wanted[k]),
            None if !finding_streams.contains(&c.stream) => longest(&mut extra, extra_max, &c),
            None => None,
        };
        if let Some(w) = w {
            w.first = c.start;
            w.last = c.end;
            w.packets = c.packets();
            w.rtt_ns = c.handshake_rtt_ns();
        }
        rows.offer(finding_streams.contains(&c.stream), &c);
    }
    let rows = rows.sorted();
    let rows_shown = rows.len();
    extra.sort_by_key(|(d, w)| (Reverse(*d), w.stream));
    wanted.extend(extra.into_iter().map(|(_, w)| w));
    // The detail budget, shared equally; a connection within its share is kept whole.
    let quota = DETAIL_BUDGET / wanted.len().max(1);
    for w in &mut wanted {
        w.quota = quota;
        w.windows = if w.packets as usize <= quota {
            vec![(w.first, w.last)]
        } else {
            let (first, last) = (w.first, w.last);
            let floor = w
                .rtt_ns
                .map_or(PAD_NO_RTT_NS, |r| r.saturating_mul(PAD_RTTS));
            let pad = |a: Timestamp, b: Timestamp| (b.elapsed_since(a) / 4).max(floor) as i64;
            let padded = w.windows.iter().map(|&(a, b)| {
                let p = pad(a, b);
                (
                    Timestamp::from_nanos(a.nanos().saturating_sub(p)),
                    Timestamp::from_nanos(b.nanos().saturating_add(p)),
                )
            });
            merge_windows(padded.collect())
                .into_iter()
                .map(|(a, b)| (a.max(first), b.min(last)))
                .filter(|(a, b)| a <= b)
                .collect()
        };
    }

    // The series of the plotted connections.
    let zero = first_frame_time(input)?.unwrap_or_default();
    let mut pass = PlotPass::new(
        wanted
            .into_iter()
            .map(|mut w| {
                w.evidence.sort_unstable();
                w.evidence.dedup();
                w
            })
            .collect(),
    );
    tcpwhy_pipeline::segments(input, |frame, ts, pkt, ev| pass.segment(frame, ts, pkt, ev))?;
    let plots = pass.finish(zero);

    // The text report, as `analyze` prints it.
    let mut text = Capped::default();
    write_text(std::slice::from_ref(r), &mut text).map_err(reading)?;
    let text = text.into_text();

    let file = json!({
        "path": r.file.path,
        "frames": r.file.frames,
        "tcp_frames": r.file.tcp_frames,
        "connections": r.file.stats.count,
        "error": r.file.error.as_ref().map(|e| e.message.as_str()),
        "findings": findings.iter().map(|f| serde_json::to_value(json_finding(f)).unwrap_or(Value::Null)).collect::<Vec<_>>(),
        "below_min_cost": below.iter().map(|(id, n)| (id.as_str().to_string(), json!(n))).collect::<Map<_, _>>(),
    });
    let data = json!({
        "schema": 1,
        "generator": o.generator,
        "file": file,
        "findings_total": total,
        "verdict": verdict_json(r).map_err(reading)?,
        "text": text,
        "start": zero.to_string(),
        "flows": {
            "connections": rows,
            "total": rows_total,
            "cap": ROWS_CAP,
        },
        "plots": {
            "cap": o.max_plots,
            "detail_budget": DETAIL_BUDGET,
            "findings": plotted,
            "connections": plots,
        },
    });
    let page = fill_template(&r.file.path, &o.generator, &data);
    out.write_all(page.as_bytes())
        .map_err(|e| format!("writing the page: {e}"))?;
    Ok(Written {
        bytes: page.len(),
        findings: findings.len(),
        findings_total: total,
        plots: plotted.len(),
        rows: rows_shown,
        rows_total,
    })
}

/// Keeps `c` among the `max` longest connections in `extra` if it is one of them
/// (dropping the shortest), and returns its entry.
fn longest<'e>(
    extra: &'e mut Vec<(u64, Wanted)>,
    max: usize,
    c: &tcpwhy_track::ConnSummary,
) -> Option<&'e mut Wanted> {
    let d = c.duration_ns();
    if extra.len() >= max {
        let (i, (least, _)) = extra.iter().enumerate().min_by_key(|(_, (d, _))| *d)?;
        if *least >= d {
            return None;
        }
        extra.swap_remove(i);
    }
    extra.push((d, Wanted::new(c.stream, &c.endpoints)));
    extra.last_mut().map(|(_, w)| w)
}

/// The rows of the connections table: the [`ROWS_CAP`] first by (has a finding,
/// duration, lower stream), chosen as the rows stream past (a min-heap of that size).
#[derive(Default)]
struct TopRows(BinaryHeap<Reverse<Row>>);

/// A row with the key it is chosen by.
struct Row {
    key: (bool, u64, Reverse<u64>),
    json: Value,
}

impl TopRows {
    fn offer(&mut self, has_finding: bool, c: &tcpwhy_track::ConnSummary) {
        let key = (has_finding, c.duration_ns(), Reverse(c.stream));
        if self.0.len() >= ROWS_CAP {
            match self.0.peek() {
                Some(Reverse(least)) if least.key < key => {
                    self.0.pop();
                }
                _ => return,
            }
        }
        // `flows --format json`'s row, as a value to put in the page's document.
        let mut buf = Vec::new();
        crate::flows_row::write_row(&mut buf, c, true);
        let json = serde_json::from_slice(&buf).unwrap_or(Value::Null);
        self.0.push(Reverse(Row { key, json }));
    }

    /// The rows kept, by stream.
    fn sorted(self) -> Vec<Value> {
        let mut v: Vec<Row> = self.0.into_iter().map(|Reverse(r)| r).collect();
        v.sort_unstable_by_key(|r| (r.key.2).0);
        v.into_iter().map(|r| r.json).collect()
    }
}

impl PartialEq for Row {
    fn eq(&self, o: &Self) -> bool {
        self.key == o.key
    }
}
impl Eq for Row {}
impl PartialOrd for Row {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Row {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.key.cmp(&o.key)
    }
}

/// Every id the verdict names, costliest first, with its catalogue entry and whether
/// its time is part of another listed id's (then not in addition to it).
fn verdict_json(r: &AnalyzeReport<'_>) -> std::io::Result<Vec<Value>> {
    let by_id = verdict(r)?;
    let within = within_parent(r, &by_id)?;
    Ok(by_id
        .iter()
        .map(|&(id, cost, n)| {
            let e = id.entry();
            json!({
                "id": e.id,
                "title": e.title,
                "meaning": e.meaning,
                "fix_goes_to": e.fix_goes_to,
                "cost_ms": crate::units::ns_to_ms(cost),
                "connections": n,
                "part_of": id.part_of().filter(|_| within.contains(&id)).map(|p| p.as_str()),
            })
        })
        .collect())
}

/// The text report as it is written, kept up to [`TEXT_CAP`] bytes: a capture with a
/// million findings has a text report of a GB, which the page does not need whole.
#[derive(Default)]
struct Capped {
    kept: Vec<u8>,
    cut: bool,
}

impl Write for Capped {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        let room = TEXT_CAP.saturating_sub(self.kept.len());
        if b.len() > room {
            self.cut = true;
        }
        self.kept.extend_from_slice(&b[..b.len().min(room)]);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Capped {
    /// The text, cut at a line end with a line saying so when it did not fit.
    fn into_text(self) -> String {
        let mut t = String::from_utf8_lossy(&self.kept).into_owned();
        if self.cut {
            let end = t.rfind('\n').map_or(0, |i| i + 1);
            t.truncate(end);
            t.push_str("… (cut here: `tcpwhy analyze` prints the whole report)\n");
        }
        t
    }
}

/// The time of the file's first frame (Wireshark's time 0), if it has one.
fn first_frame_time(input: &str) -> Result<Option<Timestamp>, String> {
    let mut cap = tcpwhy_pipeline::open(input)?;
    match cap.next_frame() {
        Ok(f) => Ok(f.map(|f| f.ts)),
        // The analysis already said what is wrong with the file.
        Err(_) => Ok(None),
    }
}

const TEMPLATE: &str = include_str!("../../assets/report.html");
const REPORT_JS: &str = include_str!("../../assets/report.js");
const REPORT_CSS: &str = include_str!("../../assets/report.css");
const UPLOT_JS: &str = include_str!("../../assets/vendor/uplot/uPlot.iife.min.js");
const UPLOT_CSS: &str = include_str!("../../assets/vendor/uplot/uPlot.min.css");

/// The template with its `{{MARKERS}}` replaced, in one pass: text put in is never
/// looked at again, so a marker inside the data or a script stays as it is.
fn fill_template(path: &str, generator: &str, data: &Value) -> String {
    // `<` as `\u003c`: still the same JSON, and nothing in it can close the script
    // element that holds it (`</script>`) or open a comment.
    let data = data.to_string().replace('<', "\\u003c");
    let title = html_escape(&format!("tcpwhy: {path}"));
    let generator = html_escape(generator);
    let mut page = String::with_capacity(TEMPLATE.len() + data.len() + UPLOT_JS.len() + 65536);
    let mut rest = TEMPLATE;
    while let Some(i) = rest.find("{{") {
        let Some(j) = rest[i..].find("}}") else { break };
        let name = &rest[i + 2..i + j];
        let with: Option<&str> = match name {
            "TITLE" => Some(&title),
            "GENERATOR" => Some(&generator),
            "UPLOT_CSS" => Some(UPLOT_CSS),
            "UPLOT_JS" => Some(UPLOT_JS),
            "REPORT_CSS" => Some(REPORT_CSS),
            "REPORT_JS" => Some(REPORT_JS),
            "DATA" => Some(&data),
            _ => None,
        };
        match with {
            Some(w) => {
                page.push_str(&rest[..i]);
                page.push_str(w);
            }
            None => page.push_str(&rest[..i + j + 2]),
        }
        rest = &rest[i + j + 2..];
    }
    page.push_str(rest);
    page
}

fn html_escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_are_replaced_once_and_data_cannot_close_its_script() {
        let data = json!({"note": "</script><script>alert(1)</script> {{TITLE}}"});
        let page = fill_template("a<b>.pcap", "tcpwhy 0 (x)", &data);
        assert!(page.contains("<title>tcpwhy: a&lt;b&gt;.pcap</title>"));
        // The data's own `{{TITLE}}` is data, not a marker.
        assert!(page.contains("{{TITLE}}"));
        assert!(!page.contains("</script><script>alert"));
        let start = page.find("id=\"tcpwhy-data\">").unwrap() + "id=\"tcpwhy-data\">".len();
        let end = start + page[start..].find("</script>").unwrap();
        let back: Value = serde_json::from_str(&page[start..end]).unwrap();
        assert_eq!(back, data);
    }

    #[test]
    fn a_long_text_report_is_cut_at_a_line_end() {
        let mut t = Capped::default();
        let line = "é".repeat(49) + "x\n";
        for _ in 0..TEXT_CAP / 100 + 10 {
            t.write_all(line.as_bytes()).unwrap();
        }
        let t = t.into_text();
        assert!(t.len() <= TEXT_CAP + 80);
        assert!(t.ends_with("prints the whole report)\n"));
        // Whole lines only: the one before the note is a line as written.
        assert_eq!(t.lines().rev().nth(1).unwrap(), line.trim_end());
    }
}
