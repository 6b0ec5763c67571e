//! `tcpwhy flows`: one row per connection, as a table or as JSON.

use crate::table::{fit, Align, Table};
use crate::units::{bytes, ms, ns_to_ms, secs};
use crate::SCHEMA_VERSION;
use serde::{Serialize, Serializer};
use std::io::{self, Write};
use tcpwhy_track::{
    ClientBy, ConnSummary, DirSummary, LimitTimes, RttStats, SegmentCounts, Vantage, WindowScale,
};

pub use tcpwhy_pipeline::{Connections, FileReport, ReadError};

/// The RTT a person cares about: the full path RTT seen from the capture point.
///
/// Data→ACK samples measure the full RTT only for data sent from the capture host
/// (mechanisms.md, "Vantage point first"): the client's data at a client-side capture,
/// the server's at a server-side one. Elsewhere the handshake RTT is the best estimate.
pub fn path_rtt(c: &ConnSummary) -> Option<RttStats> {
    let from_vantage = match c.vantage {
        Vantage::Client => Some(&c.dirs[0]),
        Vantage::Server => Some(&c.dirs[1]),
        Vantage::Middle | Vantage::Unknown => None,
    };
    if let Some(d) = from_vantage {
        // A receiver-side capture has few data→ACK samples from the vantage side (its
        // requests) but one timestamp echo per ACK it sends: take the richer set.
        let best = match (d.rtt_ack, d.rtt_ts) {
            (Some(a), Some(t)) if t.samples > a.samples => Some(t),
            (a, t) => a.or(t),
        };
        if best.is_some() {
            return best;
        }
    }
    c.handshake_rtt_ns().filter(|&h| h > 0).map(|h| RttStats {
        samples: 1,
        min_ns: h,
        median_ns: h,
        p95_ns: h,
        max_ns: h,
    })
}

fn opts(d: &DirSummary) -> String {
    let Some(s) = d.syn else {
        return "?".into();
    };
    let mut o = Vec::new();
    if let Some(m) = s.mss {
        o.push(format!("mss{m}"));
    }
    if let Some(w) = s.wscale {
        o.push(format!("ws{w}"));
    }
    if s.sack_permitted {
        o.push("sack".into());
    }
    if s.timestamps {
        o.push("ts".into());
    }
    if o.is_empty() {
        "-".into()
    } else {
        o.join(",")
    }
}

fn wscale_text(w: Option<WindowScale>) -> &'static str {
    match w {
        Some(WindowScale::NotNegotiated) => " (no wscale)",
        Some(WindowScale::Unknown) | None => " (wscale ?)",
        Some(WindowScale::Shift(_)) => "",
    }
}

/// The direction that carried the connection's data: the one with more unique bytes.
pub fn main_direction(c: &ConnSummary) -> usize {
    usize::from(c.dirs[1].unique_bytes > c.dirs[0].unique_bytes)
}

/// "rwnd 82% cwnd 10% app 8%": shares of the counted transfer time (docs/tracking.md,
/// "What limited a transfer"); "cwnd" is the sender's own window, congestion window or
/// send buffer. "-" when no transfer time was counted.
pub fn limit_text(l: &LimitTimes) -> String {
    let total = l.total_ns();
    if total == 0 {
        return "-".into();
    }
    let pct = |v: u64| (v as f64 * 100.0 / total as f64).round();
    format!(
        "rwnd {}% cwnd {}% app {}%",
        pct(l.rwnd_ns),
        pct(l.sender_ns),
        pct(l.app_ns)
    )
}

/// The aligned table of `tcpwhy flows`, written as it is read: the rows are read twice
/// (once for the columns' widths), never held.
pub fn write_text(files: &[FileReport], out: &mut impl Write) -> io::Result<()> {
    let several = files.len() > 1;
    for f in files {
        if several {
            writeln!(out, "== {} ==", f.path)?;
        }
        let t = Table::new(&[
            ("STREAM", Align::Right),
            ("CLIENT", Align::Left),
            ("SERVER", Align::Left),
            ("START", Align::Right),
            ("DUR s", Align::Right),
            ("PKTS c>s/s>c", Align::Right),
            ("BYTES c>s/s>c", Align::Right),
            ("RTT ms min/med/p95", Align::Right),
            ("FLIGHT", Align::Right),
            ("MAXWIN c/s", Align::Right),
            ("OPTS client | server", Align::Left),
            ("VANTAGE", Align::Left),
            ("RETX all/fast/spur", Align::Right),
            ("OOO", Align::Right),
            ("DUPACK", Align::Right),
            ("ZWIN", Align::Right),
            ("LIMIT", Align::Left),
        ]);
        let t0 = f.stats.start;
        let mut widths = t.header_widths();
        let mut rows = 0u64;
        for c in f.connections.iter() {
            fit(&mut widths, &row(&c?, t0));
            rows += 1;
        }
        if rows == 0 {
            writeln!(out, "no TCP connections")?;
        } else {
            out.write_all(t.header_line(&widths).as_bytes())?;
            for c in f.connections.iter() {
                let cells = row(&c?, t0);
                let line = t.line(&widths, &mut cells.iter().map(|c| c.as_str()));
                out.write_all(line.as_bytes())?;
            }
        }
        out.write_all(footer(f).as_bytes())?;
    }
    Ok(())
}

/// The table as a string (tests, small outputs).
pub fn render_text(files: &[FileReport]) -> String {
    let mut v = Vec::new();
    // Writing to a Vec cannot fail; an error reading rows back ends the table.
    let _ = write_text(files, &mut v);
    String::from_utf8(v).unwrap_or_default()
}

/// One connection's cells.
fn row(c: &ConnSummary, t0: Option<tcpwhy_capture::Timestamp>) -> Vec<String> {
    let [cs, sc] = &c.dirs;
    let rtt = path_rtt(c).map_or("-".into(), |r| {
        format!("{}/{}/{}", ms(r.min_ns), ms(r.median_ns), ms(r.p95_ns))
    });
    let flight = cs.max_in_flight.max(sc.max_in_flight);
    let win = |d: &DirSummary| d.max_window_bytes.map_or("-".into(), bytes);
    let retx = |k: fn(&SegmentCounts) -> u64| k(&cs.counts) + k(&sc.counts);
    let client_mark = match c.client_by {
        ClientBy::PortGuess => "?",
        _ => "",
    };
    vec![
        c.stream.to_string(),
        format!("{}{client_mark}", c.endpoints[0]),
        c.endpoints[1].to_string(),
        secs(t0.map_or(0, |t| c.start.elapsed_since(t))),
        secs(c.duration_ns()),
        format!("{}/{}", cs.packets, sc.packets),
        format!("{}/{}", bytes(cs.bytes), bytes(sc.bytes)),
        rtt,
        flight.map_or("-".into(), bytes),
        format!("{}/{}{}", win(cs), win(sc), wscale_text(cs.wscale)),
        format!("{} | {}", opts(cs), opts(sc)),
        c.vantage.name().into(),
        format!(
            "{}/{}/{}",
            retx(|x| x.retransmissions),
            retx(|x| x.fast_retransmissions),
            retx(|x| x.spurious_retransmissions)
        ),
        retx(|x| x.out_of_order).to_string(),
        retx(|x| x.dup_acks).to_string(),
        retx(|x| x.zero_windows).to_string(),
        limit_text(&c.dirs[main_direction(c)].limits),
    ]
}

/// The accounting line under a table: frames read, analysed, skipped and why.
pub fn footer(f: &FileReport) -> String {
    let mut s = format!(
        "{} connections; {} frames, {} TCP",
        f.stats.count, f.frames, f.tcp_frames
    );
    let skipped: Vec<String> = f
        .skipped
        .iter()
        .map(|(r, n)| format!("{n} {}", r.describe()))
        .collect();
    if !skipped.is_empty() {
        s.push_str(&format!("; skipped: {}", skipped.join(", ")));
    }
    s.push('\n');
    // Capture loss: the peer acknowledged data the file does not hold. Said once, so that
    // nobody reads those holes as network loss or reordering.
    if f.stats.acked_unseen > 0 {
        s.push_str(&format!(
            "note: the capture missed packets: {} ACK(s) on {} connection(s) acknowledged \
             data that is not in the file (acked_unseen); those holes are capture loss, not \
             network loss or reordering\n",
            f.stats.acked_unseen, f.stats.acked_unseen_connections
        ));
    }
    if let Some(e) = &f.error {
        s.push_str(&format!(
            "warning: {}: stopped early: {} — the results above cover frames 1–{}\n",
            f.path,
            e.message,
            e.frame.saturating_sub(1)
        ));
    }
    s
}

// ---- JSON (docs/json.md) ----

#[derive(Serialize)]
struct JsonFlows<'a> {
    schema_version: u32,
    command: &'static str,
    files: Vec<JsonFile<'a>>,
}

#[derive(Serialize)]
struct JsonFile<'a> {
    path: &'a str,
    format: &'a str,
    frames: u64,
    tcp_frames: u64,
    skipped: serde_json::Map<String, serde_json::Value>,
    error: Option<JsonError<'a>>,
    connections: JsonConns<'a>,
}

/// A file's connections, each decoded and written in turn: the document is streamed row
/// by row, never held whole.
struct JsonConns<'a>(&'a Connections);

impl Serialize for JsonConns<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{Error, SerializeSeq};
        let mut seq = s.serialize_seq(None)?;
        for c in self.0.iter() {
            seq.serialize_element(&json_conn(&c.map_err(S::Error::custom)?))?;
        }
        seq.end()
    }
}

#[derive(Serialize)]
struct JsonError<'a> {
    message: &'a str,
    frame: u64,
    offset: u64,
}

#[derive(Serialize)]
struct JsonConn {
    stream: u64,
    client: String,
    server: String,
    client_by: &'static str,
    first_frame: u64,
    last_frame: u64,
    start: String,
    duration_ms: f64,
    vantage: &'static str,
    handshake_rtt_ms: Option<f64>,
    syn_to_synack_ms: Option<f64>,
    synack_to_ack_ms: Option<f64>,
    rtt_ms: Option<JsonRtt>,
    reused_port: bool,
    client_to_server: JsonDir,
    server_to_client: JsonDir,
}

#[derive(Serialize)]
struct JsonRtt {
    samples: u64,
    min: f64,
    median: f64,
    p95: f64,
    max: f64,
}

#[derive(Serialize)]
struct JsonSyn {
    mss: Option<u16>,
    wscale: Option<u8>,
    sack_permitted: bool,
    timestamps: bool,
}

#[derive(Serialize)]
struct JsonDir {
    packets: u64,
    data_packets: u64,
    bytes: u64,
    unique_bytes: u64,
    isn: Option<u32>,
    syn: Option<JsonSyn>,
    window_scale: serde_json::Value,
    max_window_bytes: Option<u64>,
    max_in_flight_bytes: Option<u64>,
    rtt_ack_ms: Option<JsonRtt>,
    rtt_ts_ms: Option<JsonRtt>,
    retransmissions: u64,
    fast_retransmissions: u64,
    spurious_retransmissions: u64,
    out_of_order: u64,
    dup_acks: u64,
    zero_windows: u64,
    zero_window_probes: u64,
    window_full: u64,
    window_updates: u64,
    keep_alives: u64,
    dsacks: u64,
    previous_segment_not_captured: u64,
    acked_unseen: u64,
    capture_duplicates: u64,
    limited_ms: JsonLimits,
    fin: bool,
    rst: bool,
}

#[derive(Serialize)]
struct JsonLimits {
    rwnd: f64,
    zero_window: f64,
    sender: f64,
    app: f64,
}

fn json_rtt(r: Option<RttStats>) -> Option<JsonRtt> {
    r.map(|r| JsonRtt {
        samples: r.samples,
        min: ns_to_ms(r.min_ns),
        median: ns_to_ms(r.median_ns),
        p95: ns_to_ms(r.p95_ns),
        max: ns_to_ms(r.max_ns),
    })
}

fn json_dir(d: &DirSummary) -> JsonDir {
    let c = &d.counts;
    JsonDir {
        packets: d.packets,
        data_packets: d.data_packets,
        bytes: d.bytes,
        unique_bytes: d.unique_bytes,
        isn: d.isn,
        syn: d.syn.map(|s| JsonSyn {
            mss: s.mss,
            wscale: s.wscale,
            sack_permitted: s.sack_permitted,
            timestamps: s.timestamps,
        }),
        window_scale: match d.wscale {
            Some(WindowScale::Shift(s)) => serde_json::Value::from(s),
            Some(WindowScale::NotNegotiated) => "not_negotiated".into(),
            Some(WindowScale::Unknown) | None => "unknown".into(),
        },
        max_window_bytes: d.max_window_bytes,
        max_in_flight_bytes: d.max_in_flight,
        rtt_ack_ms: json_rtt(d.rtt_ack),
        rtt_ts_ms: json_rtt(d.rtt_ts),
        retransmissions: c.retransmissions,
        fast_retransmissions: c.fast_retransmissions,
        spurious_retransmissions: c.spurious_retransmissions,
        out_of_order: c.out_of_order,
        dup_acks: c.dup_acks,
        zero_windows: c.zero_windows,
        zero_window_probes: c.zero_window_probes,
        window_full: c.window_full,
        window_updates: c.window_updates,
        keep_alives: c.keep_alives,
        dsacks: c.dsacks,
        previous_segment_not_captured: c.previous_segment_not_captured,
        acked_unseen: c.acked_unseen,
        capture_duplicates: c.capture_duplicates,
        limited_ms: JsonLimits {
            rwnd: ns_to_ms(d.limits.rwnd_ns),
            zero_window: ns_to_ms(d.limits.zero_window_ns),
            sender: ns_to_ms(d.limits.sender_ns),
            app: ns_to_ms(d.limits.app_ns),
        },
        fin: d.fin,
        rst: d.rst,
    }
}

fn json_conn(c: &ConnSummary) -> JsonConn {
    JsonConn {
        stream: c.stream,
        client: c.endpoints[0].to_string(),
        server: c.endpoints[1].to_string(),
        client_by: match c.client_by {
            ClientBy::Syn => "syn",
            ClientBy::SynAck => "syn_ack",
            ClientBy::KnownServer => "known_server",
            ClientBy::PortGuess => "port_guess",
        },
        first_frame: c.first_frame,
        last_frame: c.last_frame,
        start: c.start.to_string(),
        duration_ms: ns_to_ms(c.duration_ns()),
        vantage: c.vantage.name(),
        handshake_rtt_ms: c.handshake_rtt_ns().map(ns_to_ms),
        syn_to_synack_ms: c.syn_to_synack_ns.map(ns_to_ms),
        synack_to_ack_ms: c.synack_to_ack_ns.map(ns_to_ms),
        rtt_ms: json_rtt(path_rtt(c)),
        reused_port: c.reused_port,
        client_to_server: json_dir(&c.dirs[0]),
        server_to_client: json_dir(&c.dirs[1]),
    }
}

/// Writes the JSON document of `tcpwhy flows --format json`, streamed: no copy of the
/// whole document is built in memory.
pub fn write_json(files: &[FileReport], out: &mut impl std::io::Write) -> std::io::Result<()> {
    let doc = JsonFlows {
        schema_version: SCHEMA_VERSION,
        command: "flows",
        files: files
            .iter()
            .map(|f| JsonFile {
                path: &f.path,
                format: &f.format,
                frames: f.frames,
                tcp_frames: f.tcp_frames,
                skipped: f
                    .skipped
                    .iter()
                    .map(|(r, n)| (r.name().to_string(), n.into()))
                    .collect(),
                error: f.error.as_ref().map(|e| JsonError {
                    message: &e.message,
                    frame: e.frame,
                    offset: e.offset,
                }),
                connections: JsonConns(&f.connections),
            })
            .collect(),
    };
    serde_json::to_writer_pretty(&mut *out, &doc)?;
    out.write_all(b"\n")
}

/// The JSON document as a string (tests, small outputs).
pub fn render_json(files: &[FileReport]) -> String {
    let mut v = Vec::new();
    // Writing to a Vec cannot fail.
    let _ = write_json(files, &mut v);
    String::from_utf8(v).unwrap_or_default()
}
