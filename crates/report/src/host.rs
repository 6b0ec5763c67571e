//! `tcpwhy host`: host findings with the values read and the fix, the live connections'
//! limits, the counters; and the host section of `tcpwhy analyze --host`. Text for
//! people, versioned JSON for programs (docs/json.md).

use crate::analyze::push_wrapped;
use crate::table::{Align, Table};
use crate::SCHEMA_VERSION;
use serde::Serialize;
use tcpwhy_detect::host::{HostAudit, HostJoin, HostView};

/// One `tcpwhy host` run.
pub struct HostReport<'a> {
    /// `live`, or the bundle directory.
    pub source: String,
    pub view: &'a HostView,
    pub audit: &'a HostAudit,
    /// Parser diagnostics (file:line: what was not understood).
    pub diagnostics: Vec<String>,
    /// When the (first) snapshot was taken, as the manifest says.
    pub time: Option<String>,
}

fn opt<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map_or("-".into(), |v| v.to_string())
}

fn pct(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{:.0} %", v * 100.0))
}

fn rate(bps: Option<u64>) -> String {
    bps.map_or("-".into(), |b| format!("{:.1} Mbit/s", b as f64 / 1e6))
}

/// The text report.
pub fn render_text(r: &HostReport<'_>) -> String {
    let v = r.view;
    let mut out = format!(
        "Host {} (kernel {}), {}{}\n",
        v.hostname.as_deref().unwrap_or("?"),
        v.kernel.as_deref().unwrap_or("?"),
        if r.source == "live" {
            "read live".to_string()
        } else {
            format!("bundle {}", r.source)
        },
        r.time
            .as_deref()
            .map_or(String::new(), |t| format!(", {t}"))
    );
    out += &match r.audit.interval_s {
        Some(s) => format!("Counters: two snapshots {s:.1} s apart (deltas are what happened in between).\n"),
        None => "Counters: one snapshot, totals since boot (use --interval 10s to see what is happening now).\n".into(),
    };
    if r.audit.findings.is_empty() {
        out += "\nNo host setting or counter found that costs TCP time.\n";
    }
    for f in &r.audit.findings {
        out += &format!(
            "\n[{}] confidence {}\n",
            f.id.as_str(),
            f.confidence.as_str()
        );
        push_wrapped(&mut out, &f.explanation, "  ");
        out += "  Values read:\n";
        for x in &f.values {
            out += &format!("    {} = {}   ({})\n", x.name, x.value, x.source);
        }
        out += "  Fix:\n";
        for x in &f.fix {
            out += &format!("    {x}\n");
        }
    }
    if !r.audit.sockets.is_empty() {
        out += "\nLive connections (ss -tin): what limits each now\n";
        let mut t = Table::new(&[
            ("LOCAL", Align::Left),
            ("PEER", Align::Left),
            ("CC", Align::Left),
            ("CWND", Align::Right),
            ("SSTHRESH", Align::Right),
            ("RTT ms", Align::Right),
            ("DELIVERY", Align::Right),
            ("BUSY ms", Align::Right),
            ("RWND-LIM", Align::Right),
            ("SNDBUF-LIM", Align::Right),
            ("LIMIT", Align::Left),
        ]);
        for s in &r.audit.sockets {
            t.push(vec![
                s.local.clone(),
                s.peer.clone(),
                opt(s.cc.as_deref()),
                opt(s.cwnd),
                opt(s.ssthresh),
                s.rtt_ms.map_or("-".into(), |r| format!("{r:.1}")),
                rate(s.delivery_rate_bps),
                opt(s.busy_ms),
                pct(s.rwnd_limited_share),
                pct(s.sndbuf_limited_share),
                s.limit.to_string(),
            ]);
        }
        out += &t.render();
    }
    if !r.audit.counters.is_empty() {
        out += "\nCounters\n";
        let mut t = Table::new(&[
            ("NAME", Align::Left),
            ("SINCE BOOT", Align::Right),
            ("DELTA", Align::Right),
            ("PER SECOND", Align::Right),
        ]);
        for (name, total, delta) in &r.audit.counters {
            let per_s = match (delta, r.audit.interval_s) {
                (Some(d), Some(s)) if s > 0.0 => format!("{:.2}", *d as f64 / s),
                _ => "-".into(),
            };
            t.push(vec![name.clone(), total.to_string(), opt(*delta), per_s]);
        }
        out += &t.render();
    }
    if !v.unread.is_empty() || !r.diagnostics.is_empty() {
        out += "\nNot read, or only in part (the findings above could not use it):\n";
        for u in &v.unread {
            out += &format!("  {u}\n");
        }
        for d in &r.diagnostics {
            out += &format!("  {d}\n");
        }
    }
    out
}

#[derive(Serialize)]
struct JsonHostDoc<'a> {
    schema_version: u32,
    command: &'static str,
    host: JsonHost<'a>,
    findings: Vec<JsonHostFinding<'a>>,
    sockets: Vec<JsonSocket<'a>>,
    counters: Vec<JsonCounter<'a>>,
    unread: &'a [String],
    diagnostics: &'a [String],
}

#[derive(Serialize)]
struct JsonHost<'a> {
    source: &'a str,
    hostname: Option<&'a str>,
    kernel: Option<&'a str>,
    time: Option<&'a str>,
    interval_s: Option<f64>,
    addresses: Vec<String>,
}

#[derive(Serialize)]
struct JsonHostFinding<'a> {
    id: &'static str,
    confidence: &'static str,
    explanation: &'a str,
    fix: &'a [String],
    values: Vec<JsonValue<'a>>,
}

#[derive(Serialize)]
struct JsonValue<'a> {
    name: &'a str,
    value: &'a str,
    source: &'a str,
}

#[derive(Serialize)]
struct JsonSocket<'a> {
    local: &'a str,
    peer: &'a str,
    cc: Option<&'a str>,
    cwnd: Option<u32>,
    ssthresh: Option<u32>,
    rtt_ms: Option<f64>,
    delivery_rate_bps: Option<u64>,
    busy_ms: Option<u64>,
    rwnd_limited_share: Option<f64>,
    sndbuf_limited_share: Option<f64>,
    app_limited: bool,
    limit: &'a str,
}

#[derive(Serialize)]
struct JsonCounter<'a> {
    name: &'a str,
    total: u64,
    delta: Option<u64>,
    per_second: Option<f64>,
}

fn round3(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

/// Writes the JSON document of `tcpwhy host --format json`.
pub fn write_json(r: &HostReport<'_>, out: &mut impl std::io::Write) -> std::io::Result<()> {
    let v = r.view;
    let doc = JsonHostDoc {
        schema_version: SCHEMA_VERSION,
        command: "host",
        host: JsonHost {
            source: &r.source,
            hostname: v.hostname.as_deref(),
            kernel: v.kernel.as_deref(),
            time: r.time.as_deref(),
            interval_s: r.audit.interval_s.map(round3),
            addresses: v.addresses.iter().map(|a| a.to_string()).collect(),
        },
        findings: r
            .audit
            .findings
            .iter()
            .map(|f| JsonHostFinding {
                id: f.id.as_str(),
                confidence: f.confidence.as_str(),
                explanation: &f.explanation,
                fix: &f.fix,
                values: f
                    .values
                    .iter()
                    .map(|x| JsonValue {
                        name: &x.name,
                        value: &x.value,
                        source: x.source,
                    })
                    .collect(),
            })
            .collect(),
        sockets: r
            .audit
            .sockets
            .iter()
            .map(|s| JsonSocket {
                local: &s.local,
                peer: &s.peer,
                cc: s.cc.as_deref(),
                cwnd: s.cwnd,
                ssthresh: s.ssthresh,
                rtt_ms: s.rtt_ms,
                delivery_rate_bps: s.delivery_rate_bps,
                busy_ms: s.busy_ms,
                rwnd_limited_share: s.rwnd_limited_share.map(round3),
                sndbuf_limited_share: s.sndbuf_limited_share.map(round3),
                app_limited: s.app_limited,
                limit: s.limit,
            })
            .collect(),
        counters: r
            .audit
            .counters
            .iter()
            .map(|(name, total, delta)| JsonCounter {
                name,
                total: *total,
                delta: *delta,
                per_second: match (delta, r.audit.interval_s) {
                    (Some(d), Some(s)) if s > 0.0 => Some(round3(*d as f64 / s)),
                    _ => None,
                },
            })
            .collect(),
        unread: &v.unread,
        diagnostics: &r.diagnostics,
    };
    crate::json::to_writer_pretty(&mut *out, &doc)?;
    out.write_all(b"\n")
}

/// The text section `analyze --host` appends: which host the bundle is and what it said
/// about each finding.
pub fn render_join_text(j: &HostJoin, bundle: &str) -> String {
    let mut out = format!(
        "\nHost bundle {bundle}: {} ({})\n",
        j.hostname.as_deref().unwrap_or("?"),
        if j.addresses.is_empty() {
            "no addresses seen: ss and tcp_metrics were empty".to_string()
        } else {
            j.addresses
                .iter()
                .map(|a| a.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        }
    );
    if j.correlations.is_empty() {
        out += "  no finding to confirm or contradict\n";
    }
    for c in &j.correlations {
        let conf = if c.confidence_before == c.confidence_after {
            c.confidence_after.as_str().to_string()
        } else {
            format!(
                "{} → {}",
                c.confidence_before.as_str(),
                c.confidence_after.as_str()
            )
        };
        out += &format!(
            "  stream {} {}: {} (bundle is the {}; confidence {conf})\n",
            c.stream,
            c.id.as_str(),
            c.relation.as_str(),
            c.side.as_str()
        );
        push_wrapped(&mut out, &c.note, "    ");
    }
    out
}

#[derive(Serialize)]
pub(crate) struct JsonJoin<'a> {
    bundle: &'a str,
    hostname: Option<&'a str>,
    addresses: Vec<String>,
    correlations: Vec<JsonCorrelation<'a>>,
}

#[derive(Serialize)]
struct JsonCorrelation<'a> {
    stream: u64,
    id: &'static str,
    side: &'static str,
    relation: &'static str,
    note: &'a str,
    confidence_before: &'static str,
    confidence_after: &'static str,
}

pub(crate) fn join_json<'a>(j: &'a HostJoin, bundle: &'a str) -> JsonJoin<'a> {
    JsonJoin {
        bundle,
        hostname: j.hostname.as_deref(),
        addresses: j.addresses.iter().map(|a| a.to_string()).collect(),
        correlations: j
            .correlations
            .iter()
            .map(|c| JsonCorrelation {
                stream: c.stream,
                id: c.id.as_str(),
                side: c.side.as_str(),
                relation: c.relation.as_str(),
                note: &c.note,
                confidence_before: c.confidence_before.as_str(),
                confidence_after: c.confidence_after.as_str(),
            })
            .collect(),
    }
}
