//! `tcpwhy flows`: one row per connection, as a table or as JSON.

use crate::flows_row::write_row;
use crate::json;
use crate::table::{fit_cells, Align, Table};
#[cfg(test)]
use crate::units::ns_to_ms;
use crate::units::{push_bytes, push_ms, push_secs, push_u64};
use crate::SCHEMA_VERSION;
use serde::Serialize;
use std::fmt::Write as _;
use std::io::{self, Write};
use std::net::IpAddr;
use tcpwhy_track::{
    ClientBy, ConnSummary, DirSummary, Endpoint, LimitTimes, RttStats, SegmentCounts, Vantage,
    WindowScale,
};

pub use tcpwhy_pipeline::{Connections, FileReport, ReadError, RowBatch};

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

/// A direction's SYN options as the OPTS column shows them: "mss1460,ws7,sack,ts";
/// "cut" when the snaplen cut them, "-" for none, "?" without a SYN.
fn push_opts(out: &mut String, d: &DirSummary) {
    let Some(s) = d.syn else {
        return out.push('?');
    };
    let start = out.len();
    let sep = |out: &mut String| {
        if out.len() > start {
            out.push(',');
        }
    };
    if let Some(m) = s.mss {
        sep(out);
        out.push_str("mss");
        push_u64(out, m.into());
    }
    if let Some(w) = s.wscale {
        sep(out);
        out.push_str("ws");
        push_u64(out, w.into());
    }
    if s.sack_permitted {
        sep(out);
        out.push_str("sack");
    }
    if s.timestamps {
        sep(out);
        out.push_str("ts");
    }
    // The snaplen cut the options: those after the last one shown are unknown.
    if d.syn_cut {
        sep(out);
        out.push_str("cut");
    }
    if out.len() == start {
        out.push('-');
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
    let mut s = String::new();
    push_limit(&mut s, l);
    s
}

/// [`limit_text`], appended to `out`.
fn push_limit(out: &mut String, l: &LimitTimes) {
    let total = l.total_ns();
    if total == 0 {
        return out.push('-');
    }
    // A share from 0 to 100, rounded as a float: its Display is the integer's.
    let pct = |v: u64| (v as f64 * 100.0 / total as f64).round() as u64;
    for (name, v) in [
        ("rwnd ", l.rwnd_ns),
        ("% cwnd ", l.sender_ns),
        ("% app ", l.app_ns),
    ] {
        out.push_str(name);
        push_u64(out, pct(v));
    }
    out.push('%');
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
        let mut cells = Cells::default();
        for c in f.connections.iter() {
            row(&c?, t0, &mut cells);
            fit_cells(&mut widths, cells.iter());
            rows += 1;
        }
        if let Some(why) = nothing_analysed(f) {
            writeln!(out, "{why}")?;
        } else if rows == 0 {
            writeln!(out, "no TCP connections")?;
        } else {
            out.write_all(t.header_line(&widths).as_bytes())?;
            // Lines gather in one buffer, written out in pieces of about this size.
            const CHUNK: usize = 64 * 1024;
            let mut lines = String::with_capacity(2 * CHUNK);
            for c in f.connections.iter() {
                row(&c?, t0, &mut cells);
                t.push_line(&mut lines, &widths, cells.iter());
                if lines.len() >= CHUNK {
                    out.write_all(lines.as_bytes())?;
                    lines.clear();
                }
            }
            out.write_all(lines.as_bytes())?;
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

/// The table's columns.
const COLUMNS: usize = 17;

/// One row's cells in one buffer, reused row after row: cell `i` is
/// `text[ends[i - 1]..ends[i]]`. A row of Strings was 25 allocations, made twice a row.
#[derive(Default)]
struct Cells {
    text: String,
    ends: [usize; COLUMNS],
    n: usize,
}

impl Cells {
    /// Ends the cell written since the last one.
    fn end(&mut self) {
        if let Some(e) = self.ends.get_mut(self.n) {
            *e = self.text.len();
            self.n += 1;
        }
    }

    fn iter(&self) -> impl Iterator<Item = &str> {
        (0..self.n).map(|i| {
            let start = if i == 0 { 0 } else { self.ends[i - 1] };
            &self.text[start..self.ends[i]]
        })
    }
}

/// One connection's cells, written into `cells`.
fn row(c: &ConnSummary, t0: Option<tcpwhy_capture::Timestamp>, cells: &mut Cells) {
    let [cs, sc] = &c.dirs;
    cells.text.clear();
    cells.n = 0;
    let t = &mut cells.text;
    push_u64(t, c.stream);
    cells.end();

    let t = &mut cells.text;
    push_endpoint(t, c.endpoints[0]);
    if c.client_by == ClientBy::PortGuess {
        t.push('?');
    }
    cells.end();

    push_endpoint(&mut cells.text, c.endpoints[1]);
    cells.end();

    push_secs(&mut cells.text, t0.map_or(0, |t| c.start.elapsed_since(t)));
    cells.end();

    push_secs(&mut cells.text, c.duration_ns());
    cells.end();

    let t = &mut cells.text;
    push_u64(t, cs.packets);
    t.push('/');
    push_u64(t, sc.packets);
    cells.end();

    let t = &mut cells.text;
    push_bytes(t, cs.bytes);
    t.push('/');
    push_bytes(t, sc.bytes);
    cells.end();

    let t = &mut cells.text;
    match path_rtt(c) {
        None => t.push('-'),
        Some(r) => {
            push_ms(t, r.min_ns);
            t.push('/');
            push_ms(t, r.median_ns);
            t.push('/');
            push_ms(t, r.p95_ns);
        }
    }
    cells.end();

    let t = &mut cells.text;
    let dash_or_bytes = |t: &mut String, v: Option<u64>| match v {
        None => t.push('-'),
        Some(b) => push_bytes(t, b),
    };
    dash_or_bytes(t, cs.max_in_flight.max(sc.max_in_flight));
    cells.end();

    let t = &mut cells.text;
    dash_or_bytes(t, cs.max_window_bytes);
    t.push('/');
    dash_or_bytes(t, sc.max_window_bytes);
    t.push_str(wscale_text(cs.wscale));
    cells.end();

    let t = &mut cells.text;
    push_opts(t, cs);
    t.push_str(" | ");
    push_opts(t, sc);
    cells.end();

    cells.text.push_str(c.vantage.name());
    cells.end();

    let both = |k: fn(&SegmentCounts) -> u64| k(&cs.counts) + k(&sc.counts);
    let t = &mut cells.text;
    push_u64(t, both(|x| x.retransmissions));
    t.push('/');
    push_u64(t, both(|x| x.fast_retransmissions));
    t.push('/');
    push_u64(t, both(|x| x.spurious_retransmissions));
    cells.end();

    for k in [
        (|x: &SegmentCounts| x.out_of_order) as fn(&SegmentCounts) -> u64,
        |x| x.dup_acks,
        |x| x.zero_windows,
    ] {
        push_u64(&mut cells.text, both(k));
        cells.end();
    }

    push_limit(&mut cells.text, &c.dirs[main_direction(c)].limits);
    cells.end();
}

/// An endpoint as its Display writes it (`10.0.0.1:443`, `[2001:db8::1]:443`), IPv4
/// without the formatting machinery.
fn push_endpoint(out: &mut String, e: Endpoint) {
    let IpAddr::V4(a) = e.addr else {
        // Writing to a String cannot fail.
        let _ = write!(out, "{e}");
        return;
    };
    for (i, octet) in a.octets().into_iter().enumerate() {
        if i > 0 {
            out.push('.');
        }
        push_u64(out, octet.into());
    }
    out.push(':');
    push_u64(out, e.port.into());
}

/// One line when frames were skipped: how many of how many, and why (by reason, and
/// unsupported link types by number and name). For standard error, so that a capture
/// read only in part never looks like a clean one.
pub fn skip_line(f: &FileReport) -> Option<String> {
    let skipped = f.skipped.total();
    (skipped > 0).then(|| {
        format!(
            "{}: skipped {skipped} of {} frames: {}",
            f.path,
            f.frames,
            f.skipped.describe()
        )
    })
}

/// When no frame of the file could be analysed as TCP: the one line that says so and
/// why, which the reports put first and the CLI turns into exit status 2 (a capture of
/// the wrong link type or without TCP is no healthy capture).
pub fn nothing_analysed(f: &FileReport) -> Option<String> {
    if f.tcp_frames > 0 {
        return None;
    }
    Some(if f.frames == 0 {
        format!(
            "{}: no frame to analyse: the capture holds no frames",
            f.path
        )
    } else {
        format!(
            "{}: no frame could be analysed as TCP: {} of {} frames skipped: {}",
            f.path,
            f.skipped.total(),
            f.frames,
            f.skipped.describe()
        )
    })
}

/// A line for each way the tracker finalised connections early to bound memory
/// (`FileReport::cuts`), for standard error and the footer.
pub fn cut_lines(f: &FileReport) -> Vec<String> {
    let mut lines = Vec::new();
    if f.cuts.handshakes > 0 {
        lines.push(format!(
            "{}: {} connection(s) were finalised in their handshake: more than {} \
             handshakes (SYN, SYN/ACK, nothing else) were open at once, a SYN flood or a \
             scan; the oldest were finalised to bound memory, and a later segment of one \
             continues its stream without being judged again",
            f.path,
            f.cuts.handshakes,
            tcpwhy_track::MAX_OPEN_HANDSHAKES
        ));
    }
    if f.cuts.connections > 0 {
        lines.push(format!(
            "{}: {} connection(s) were finalised before their time: more than {} were \
             tracked at once, a flood or a scan; closed ones and those heard from one side \
             only were finalised first (any, past {}), oldest last packet first, to bound \
             memory, and a later segment of one continues its stream without being judged \
             again",
            f.path,
            f.cuts.connections,
            tcpwhy_track::LIVE_CUT_START,
            tcpwhy_track::MAX_LIVE_CONNECTIONS
        ));
    }
    if f.cuts.streams_forgotten > 0 {
        lines.push(format!(
            "{}: {} ended connection(s) were forgotten early, as more than {} closed ones \
             had ended within 5 min, or more than {} had gone quiet without closing (a \
             busy host, a flood or a scan): a late segment without SYN on one of their \
             4-tuples, if any came, started a new stream where Wireshark continues the old \
             one, and stream numbers after it differ from Wireshark's",
            f.path,
            f.cuts.streams_forgotten,
            tcpwhy_track::MAX_CLOSED_TOMBSTONES,
            tcpwhy_track::MAX_KEPT_TOMBSTONES
        ));
    }
    lines
}

/// One line when frames of the file have times that cannot be trusted (earlier than a
/// frame before them, or out of range), for standard error and the footer.
pub fn time_line(f: &FileReport) -> Option<String> {
    let (back, out) = (f.skipped.time_backwards(), f.skipped.time_out_of_range());
    let mut what = Vec::new();
    if back > 0 {
        what.push(format!(
            "{back} frame(s) earlier than a frame before them (the capture clock ran \
             backwards, or files were merged)"
        ));
    }
    if out > 0 {
        what.push(format!(
            "{out} frame(s) whose fraction of a second is out of range"
        ));
    }
    (!what.is_empty()).then(|| {
        format!(
            "{}: {}: analysed at the latest trusted time before them; no RTT sample starts \
             or ends at them",
            f.path,
            what.join(", ")
        )
    })
}

/// The accounting line under a table: frames read, analysed, skipped and why.
pub fn footer(f: &FileReport) -> String {
    let mut s = format!(
        "{} connections; {} frames, {} TCP",
        f.stats.count, f.frames, f.tcp_frames
    );
    let skipped = f.skipped.describe();
    if !skipped.is_empty() {
        s.push_str(&format!("; skipped: {skipped}"));
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
    // ICMP errors quoting TCP headers: their streams are Wireshark's, a stream of only
    // such errors is a row without packets; a path-MTU black hole is named by frame.
    if let Some(first) = f.stats.icmp_first_frame {
        let too_big = match f.stats.icmp_too_big_frame {
            Some(t) => format!(
                "; a \"fragmentation needed\" / \"packet too big\" in frame {t}: \
                 check the path MTU"
            ),
            None => String::new(),
        };
        s.push_str(&format!(
            "note: {} ICMP error(s) quote TCP headers, the first in frame {first}{too_big}; \
             they take Wireshark's stream numbers (a stream of only such errors has no \
             packets) and are listed per connection in `flows --format json` (icmp_errors)\n",
            f.stats.icmp_errors
        ));
    }
    for h in cut_lines(f) {
        s.push_str(&format!("warning: {h}\n"));
    }
    if let Some(t) = time_line(f) {
        s.push_str(&format!("warning: {t}\n"));
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

/// The document's fields before `files`.
#[derive(Serialize)]
struct JsonHead {
    schema_version: u32,
    command: &'static str,
}

/// A file's fields before `connections` (its last).
#[derive(Serialize)]
struct JsonFile<'a> {
    path: &'a str,
    format: &'a str,
    frames: u64,
    tcp_frames: u64,
    skipped: serde_json::Map<String, serde_json::Value>,
    /// Frames skipped for an unsupported link type, by link type; absent when none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    skipped_link_types: Vec<JsonLinkType>,
    /// Frames earlier than a frame before them; absent when none.
    #[serde(skip_serializing_if = "is_zero")]
    time_backwards: u64,
    /// Frames whose pcap fraction of a second was out of range; absent when none.
    #[serde(skip_serializing_if = "is_zero")]
    time_out_of_range: u64,
    #[serde(flatten)]
    cuts: JsonCuts,
    error: Option<JsonError<'a>>,
}

/// What the tracker's bounds on memory did (`FileReport::cuts`), in both commands' file
/// heads; each count absent when none.
#[derive(Serialize)]
pub(crate) struct JsonCuts {
    #[serde(skip_serializing_if = "is_zero")]
    handshakes_cut: u64,
    #[serde(skip_serializing_if = "is_zero")]
    connections_cut: u64,
    #[serde(skip_serializing_if = "is_zero")]
    streams_forgotten: u64,
}

impl JsonCuts {
    pub(crate) fn of(c: &tcpwhy_track::Cuts) -> Self {
        JsonCuts {
            handshakes_cut: c.handshakes,
            connections_cut: c.connections,
            streams_forgotten: c.streams_forgotten,
        }
    }
}

pub(crate) fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Frames of one link type tcpwhy does not read.
#[derive(Serialize)]
pub(crate) struct JsonLinkType {
    link_type: u32,
    /// LINKTYPE_* name without the prefix, `null` when not in tcpwhy's table.
    name: Option<&'static str>,
    frames: u64,
}

/// The unsupported link types of a file, for both JSON documents.
pub(crate) fn json_link_types(f: &FileReport) -> Vec<JsonLinkType> {
    f.skipped
        .link_types()
        .iter()
        .map(|&(n, frames)| JsonLinkType {
            link_type: n,
            name: tcpwhy_capture::LinkType::name_of(n),
            frames,
        })
        .collect()
}

#[derive(Serialize)]
struct JsonError<'a> {
    message: &'a str,
    frame: u64,
    offset: u64,
}

#[cfg(test)]
#[derive(Serialize)]
pub(crate) struct JsonConn {
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
    icmp_errors: Option<JsonIcmpErrors>,
    client_to_server: JsonDir,
    server_to_client: JsonDir,
}

#[cfg(test)]
#[derive(Serialize)]
struct JsonIcmpErrors {
    count: u64,
    first_frame: u64,
    first: &'static str,
    too_big_frame: Option<u64>,
    next_hop_mtu: Option<u32>,
}

#[cfg(test)]
#[derive(Serialize)]
struct JsonRtt {
    samples: u64,
    min: f64,
    median: f64,
    p95: f64,
    max: f64,
}

#[cfg(test)]
#[derive(Serialize)]
struct JsonSyn {
    mss: Option<u16>,
    wscale: Option<u8>,
    sack_permitted: bool,
    timestamps: bool,
    /// The snaplen cut the options: an option not shown may have been sent. Written
    /// only when true (docs/json.md).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    cut: bool,
}

#[cfg(test)]
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

#[cfg(test)]
#[derive(Serialize)]
struct JsonLimits {
    rwnd: f64,
    zero_window: f64,
    sender: f64,
    app: f64,
}

#[cfg(test)]
fn json_rtt(r: Option<RttStats>) -> Option<JsonRtt> {
    r.map(|r| JsonRtt {
        samples: r.samples,
        min: ns_to_ms(r.min_ns),
        median: ns_to_ms(r.median_ns),
        p95: ns_to_ms(r.p95_ns),
        max: ns_to_ms(r.max_ns),
    })
}

#[cfg(test)]
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
            cut: d.syn_cut,
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

#[cfg(test)]
pub(crate) fn json_conn(c: &ConnSummary) -> JsonConn {
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
        icmp_errors: c.icmp_errors.map(|e| JsonIcmpErrors {
            count: e.count,
            first_frame: e.first_frame,
            first: e.first.name(),
            too_big_frame: e.too_big_frame,
            next_hop_mtu: e.next_hop_mtu,
        }),
        client_to_server: json_dir(&c.dirs[0]),
        server_to_client: json_dir(&c.dirs[1]),
    }
}

/// Writes the JSON document of `tcpwhy flows --format json`, streamed: no copy of the
/// whole document is built in memory.
pub fn write_json(files: &[FileReport], out: &mut impl Write) -> io::Result<()> {
    write_json_threads(files, out, 1)
}

/// Rows rendered per batch by [`write_json_threads`]' helpers.
const ROWS_PER_BATCH: usize = 256;

/// [`write_json`] with the rows turned into JSON by `threads` helper threads, in order.
///
/// The rows are most of the document and of the time it takes (`flows` on the mixed
/// bench capture: 25 % of its instructions, all after the pass, so that a second core
/// sped `flows` up by only 1.08×). The document is written in pieces: its head and
/// each file's fields by serde, each row at its depth ([`json::to_writer_pretty_at`]),
/// and the brackets and line breaks between them as serde would write them, so that the
/// bytes are those of serializing the document whole (tested against that below).
pub fn write_json_threads(
    files: &[FileReport],
    out: &mut impl Write,
    threads: usize,
) -> io::Result<()> {
    let mut head = Vec::new();
    let doc = JsonHead {
        schema_version: SCHEMA_VERSION,
        command: "flows",
    };
    json::to_writer_pretty_at(&mut head, &doc, 0)?;
    out.write_all(head.strip_suffix(b"\n}").unwrap_or(&head))?;
    out.write_all(b",\n  \"files\": [")?;
    for (i, f) in files.iter().enumerate() {
        out.write_all(if i == 0 { b"\n    " } else { b",\n    " })?;
        let file = json_file(f);
        head.clear();
        json::to_writer_pretty_at(&mut head, &file, 2)?;
        out.write_all(head.strip_suffix(b"\n    }").unwrap_or(&head))?;
        out.write_all(b",\n      \"connections\": [")?;
        let any = if threads > 1 && f.connections.stored_rows() > 2 * ROWS_PER_BATCH as u64 {
            write_rows_parallel(&f.connections, out, threads)?
        } else {
            let mut any = false;
            let mut buf = Vec::with_capacity(2 * WRITE_CHUNK);
            for c in f.connections.iter() {
                write_row(&mut buf, &c?, !any);
                any = true;
                if buf.len() >= WRITE_CHUNK {
                    out.write_all(&buf)?;
                    buf.clear();
                }
            }
            out.write_all(&buf)?;
            any
        };
        out.write_all(if any {
            b"\n      ]\n    }"
        } else {
            b"]\n    }"
        })?;
    }
    out.write_all(if files.is_empty() {
        b"]\n}\n"
    } else {
        b"\n  ]\n}\n"
    })
}

/// A file's fields before its `connections`.
fn json_file(f: &FileReport) -> JsonFile<'_> {
    JsonFile {
        path: &f.path,
        format: &f.format,
        frames: f.frames,
        tcp_frames: f.tcp_frames,
        skipped: f
            .skipped
            .iter()
            .map(|(r, n)| (r.name().to_string(), n.into()))
            .collect(),
        skipped_link_types: json_link_types(f),
        time_backwards: f.skipped.time_backwards(),
        time_out_of_range: f.skipped.time_out_of_range(),
        cuts: JsonCuts::of(&f.cuts),
        error: f.error.as_ref().map(|e| JsonError {
            message: &e.message,
            frame: e.frame,
            offset: e.offset,
        }),
    }
}

/// Bytes of rows gathered before they go to the output: larger than a `BufWriter`'s
/// buffer, so that they reach the writer below it without another copy.
const WRITE_CHUNK: usize = 64 * 1024;

/// The rows of `rows` decoded and rendered by `threads` helpers in batches and written in
/// order; whether there was any. This thread only merges the stores' rows into batches
/// ([`Connections::batches`]). At most two batches a helper are in flight, so memory
/// stays bounded whatever the number of rows.
fn write_rows_parallel(
    rows: &Connections,
    out: &mut impl Write,
    threads: usize,
) -> io::Result<bool> {
    use std::collections::BTreeMap;
    use std::sync::{mpsc, Mutex};
    let (job_tx, job_rx) = mpsc::channel::<(usize, RowBatch)>();
    let (done_tx, done_rx) = mpsc::channel::<(usize, io::Result<Vec<u8>>)>();
    let job_rx = Mutex::new(job_rx);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            let (job_rx, done_tx) = (&job_rx, done_tx.clone());
            scope.spawn(move || loop {
                let job = match job_rx.lock() {
                    Ok(rx) => rx.recv(),
                    Err(_) => return,
                };
                let Ok((n, batch)) = job else { return };
                // Every row with its separator: the first one written loses it below.
                let rendered = batch.connections(rows).map(|conns| {
                    let mut buf = Vec::with_capacity(conns.len() * 4096);
                    for c in &conns {
                        write_row(&mut buf, c, false);
                    }
                    buf
                });
                if done_tx.send((n, rendered)).is_err() {
                    return;
                }
            });
        }
        drop(done_tx);
        let max_in_flight = 2 * threads;
        let (mut sent, mut written, mut any) = (0, 0, false);
        let mut ready: BTreeMap<usize, Vec<u8>> = BTreeMap::new();
        let mut batches = rows.batches();
        let mut more = true;
        let result = 'rows: loop {
            while more && sent - written < max_in_flight {
                match batches.next_batch(ROWS_PER_BATCH) {
                    Ok(Some(batch)) => {
                        if job_tx.send((sent, batch)).is_err() {
                            break;
                        }
                        sent += 1;
                    }
                    Ok(None) => more = false,
                    Err(e) => break 'rows Err(e),
                }
            }
            if written == sent {
                break Ok(any);
            }
            match done_rx.recv() {
                Ok((n, Ok(buf))) => {
                    ready.insert(n, buf);
                }
                Ok((_, Err(e))) => break Err(e),
                Err(_) => break Err(io::Error::other("a JSON writer thread failed")),
            }
            while let Some(buf) = ready.remove(&written) {
                let bytes = match (any, buf.split_first()) {
                    (false, Some((b',', rest))) => rest,
                    _ => &buf[..],
                };
                any |= !buf.is_empty();
                if let Err(e) = out.write_all(bytes) {
                    break 'rows Err(e);
                }
                written += 1;
            }
        };
        // The helpers stop when the jobs end.
        drop(job_tx);
        result
    })
}

/// The JSON document as a string (tests, small outputs).
pub fn render_json(files: &[FileReport]) -> String {
    let mut v = Vec::new();
    // Writing to a Vec cannot fail.
    let _ = write_json(files, &mut v);
    String::from_utf8(v).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use tcpwhy_capture::{SkipCounts, SkipReason, Timestamp};
    use tcpwhy_track::{Cuts, Endpoint};

    /// The document as serde_json writes it whole: what the pieces must add up to.
    #[derive(Serialize)]
    struct Whole<'a> {
        schema_version: u32,
        command: &'static str,
        files: Vec<WholeFile<'a>>,
    }

    #[derive(Serialize)]
    struct WholeFile<'a> {
        #[serde(flatten)]
        head: JsonFile<'a>,
        connections: Vec<JsonConn>,
    }

    fn whole(files: &[FileReport]) -> String {
        let doc = Whole {
            schema_version: SCHEMA_VERSION,
            command: "flows",
            files: files
                .iter()
                .map(|f| WholeFile {
                    head: json_file(f),
                    connections: f
                        .connections
                        .iter()
                        .map(|c| json_conn(&c.unwrap()))
                        .collect(),
                })
                .collect(),
        };
        serde_json::to_string_pretty(&doc).unwrap() + "\n"
    }

    fn file(rows: u64, error: bool) -> FileReport {
        let mut connections = Vec::new();
        for i in 0..rows {
            let ep = |last: u8, port: u16| Endpoint {
                addr: std::net::IpAddr::from([10, 0, 0, last]),
                port,
            };
            let mut c = ConnSummary {
                stream: i,
                endpoints: [ep(1, 40000 + i as u16), ep(2, 443)],
                client_by: ClientBy::Syn,
                first_frame: 2 * i + 1,
                last_frame: 2 * i + 9,
                start: Timestamp::from_nanos(i as i64 * 1_000_000),
                end: Timestamp::from_nanos(i as i64 * 1_000_000 + 5_000),
                dirs: Default::default(),
                syn_to_synack_ns: Some(250_000),
                synack_to_ack_ns: (i % 2 == 0).then_some(1_000),
                vantage: Vantage::Client,
                reused_port: false,
                continuation: false,
                icmp_errors: None,
            };
            c.dirs[0].packets = i;
            connections.push(c);
        }
        let connections = Connections::from_summaries(connections).unwrap();
        let mut skipped = SkipCounts::default();
        if error {
            skipped.add(SkipReason::NotTcp);
        }
        FileReport {
            path: format!("f{rows}.pcap"),
            format: "pcap µs".into(),
            frames: 2 * rows,
            tcp_frames: rows,
            skipped,
            error: error.then(|| ReadError {
                message: "cut \"short\"".into(),
                frame: 7,
                offset: 99,
            }),
            stats: Default::default(),
            connections,
            cuts: Default::default(),
        }
    }

    /// The document written in pieces, on one thread or several, is the document serde
    /// writes whole: no files, a file without rows, and files with more rows than the
    /// parallel writer's batches, with and without an error and skipped frames.
    #[test]
    fn json_in_pieces_is_the_whole_document() {
        let cases = [
            vec![],
            vec![file(0, false)],
            vec![file(3, true), file(0, true)],
            vec![file(1100, false), file(2 * ROWS_PER_BATCH as u64 + 1, true)],
        ];
        for files in &cases {
            let want = whole(files);
            for threads in [1, 2, 3] {
                let mut got = Vec::new();
                write_json_threads(files, &mut got, threads).unwrap();
                assert_eq!(String::from_utf8(got).unwrap(), want, "{threads} threads");
            }
        }
    }

    /// What the tracker's bounds on memory did is said once per file, in the JSON and
    /// under the table, each count only when it is not zero (every other capture's output
    /// is unchanged).
    #[test]
    fn memory_bounds_are_reported_only_when_they_acted() {
        let json = |f: &FileReport| {
            let mut out = Vec::new();
            write_json(std::slice::from_ref(f), &mut out).unwrap();
            String::from_utf8(out).unwrap()
        };
        let fields = ["handshakes_cut", "connections_cut", "streams_forgotten"];
        let quiet = file(2, false);
        for field in fields {
            assert!(!json(&quiet).contains(field));
        }
        assert!(!footer(&quiet).contains("warning"));
        type Set = fn(&mut Cuts);
        let cases: [(&str, Set, &str, &[&str]); 3] = [
            (
                "handshakes_cut",
                |c| c.handshakes = 4000,
                "4000",
                &[
                    "warning: f2.pcap: 4000 connection(s) were finalised in their handshake: \
                   more than 32768 handshakes",
                ],
            ),
            (
                "connections_cut",
                |c| c.connections = 9000,
                "9000",
                &[
                    "warning: f2.pcap: 9000 connection(s) were finalised before their time: \
                     more than 65536 were tracked at once",
                    "(any, past 262144)",
                ],
            ),
            (
                "streams_forgotten",
                |c| c.streams_forgotten = 70,
                "70",
                &[
                    "warning: f2.pcap: 70 ended connection(s) were forgotten early, as more \
                     than 262144 closed ones had ended within 5 min, or more than 262144 had \
                     gone quiet without closing",
                ],
            ),
        ];
        for (field, set, count, said) in cases {
            let mut f = file(2, false);
            set(&mut f.cuts);
            let doc = json(&f);
            assert!(
                doc.contains(&format!("\n      \"{field}\": {count},\n")),
                "{field}"
            );
            for other in fields.iter().filter(|&&o| o != field) {
                assert!(!doc.contains(other), "{field} with {other}");
            }
            let text = footer(&f);
            for line in said {
                assert!(text.contains(line), "{field}: {text}");
            }
            assert_eq!(text.matches("warning").count(), 1, "{field}");
        }
    }
}
