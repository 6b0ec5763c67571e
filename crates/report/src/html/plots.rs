//! The series `tcpwhy report` plots (docs/report.md, "ConnPlot"): what one tracker pass
//! keeps of each connection that has a plotted finding. Inside the findings' time
//! windows every packet is kept one by one (the evidence frames always); elsewhere each
//! of [`COLUMNS`] time columns keeps a summary (lowest and highest sequence, highest ACK
//! and window edge, RTT extremes, the largest flight), so that the page can be zoomed
//! out to the whole connection while its size follows the plots, not the capture.

use serde::Serialize;
use std::collections::HashMap;
use tcpwhy_capture::{Packet, Timestamp};
use tcpwhy_track::{Limit, SegmentEvent, SegmentKinds};

/// Summary columns across a plotted connection's lifetime: about one per pixel column
/// of a plot at its default width on a laptop screen, where min/max per column draws
/// the same picture as every packet would.
pub const COLUMNS: usize = 400;

/// What the pass is asked to plot for one connection.
pub struct Wanted {
    pub stream: u64,
    pub client: String,
    pub server: String,
    /// The connection's first and last frame times.
    pub first: Timestamp,
    pub last: Timestamp,
    /// Time windows (inclusive) in which every packet is kept: the findings' evidence
    /// spans until the pass is set up, then padded, sorted and merged.
    pub windows: Vec<(Timestamp, Timestamp)>,
    /// Evidence frames of the connection's findings: always kept one by one.
    pub evidence: Vec<u64>,
    /// Packets kept one by one at most (evidence frames beyond it are still kept).
    pub quota: usize,
    /// The connection's packets (both directions).
    pub packets: u64,
    /// Its handshake RTT, when the handshake was captured.
    pub rtt_ns: Option<u64>,
}

impl Wanted {
    /// A connection to plot, its lifetime and windows still to be filled in.
    pub fn new(stream: u64, ends: &[tcpwhy_track::Endpoint; 2]) -> Self {
        Wanted {
            stream,
            client: ends[0].to_string(),
            server: ends[1].to_string(),
            first: Timestamp::default(),
            last: Timestamp::default(),
            windows: Vec::new(),
            evidence: Vec::new(),
            quota: 0,
            packets: 0,
            rtt_ns: None,
        }
    }
}

/// Sorts and merges overlapping windows.
pub fn merge_windows(mut w: Vec<(Timestamp, Timestamp)>) -> Vec<(Timestamp, Timestamp)> {
    w.sort_unstable();
    let mut out: Vec<(Timestamp, Timestamp)> = Vec::with_capacity(w.len());
    for (a, b) in w {
        match out.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
}

/// The `kind` bits of a plotted segment: the data contract's table (docs/report.md),
/// written once here.
mod kind {
    pub const RETRANSMISSION: u16 = 1;
    /// Also set later, on a retransmission a D-SACK reported needless.
    pub const SPURIOUS: u16 = 1 << 1;
    pub const OUT_OF_ORDER: u16 = 1 << 2;
    pub const FAST_RETRANSMISSION: u16 = 1 << 3;
    pub const ZERO_WINDOW_PROBE: u16 = 1 << 4;
    pub const KEEP_ALIVE: u16 = 1 << 5;
    pub const SYN: u16 = 1 << 6;
    pub const FIN: u16 = 1 << 7;
    pub const RST: u16 = 1 << 8;
    pub const WINDOW_FULL: u16 = 1 << 9;
    pub const EVIDENCE: u16 = 1 << 10;
}

/// A segment's `kind` bits, from the tracker's classification.
fn kind_bits(k: SegmentKinds, pkt: &Packet<'_>, evidence: bool) -> u16 {
    let retransmitted =
        k.has(SegmentKinds::RETRANSMISSION) || k.has(SegmentKinds::FAST_RETRANSMISSION);
    [
        (retransmitted, kind::RETRANSMISSION),
        (k.has(SegmentKinds::SPURIOUS_RETRANSMISSION), kind::SPURIOUS),
        (k.has(SegmentKinds::OUT_OF_ORDER), kind::OUT_OF_ORDER),
        (
            k.has(SegmentKinds::FAST_RETRANSMISSION),
            kind::FAST_RETRANSMISSION,
        ),
        (
            k.has(SegmentKinds::ZERO_WINDOW_PROBE),
            kind::ZERO_WINDOW_PROBE,
        ),
        (k.has(SegmentKinds::KEEP_ALIVE), kind::KEEP_ALIVE),
        (pkt.flags.syn(), kind::SYN),
        (pkt.flags.fin(), kind::FIN),
        (pkt.flags.rst(), kind::RST),
        (k.has(SegmentKinds::WINDOW_FULL), kind::WINDOW_FULL),
        (evidence, kind::EVIDENCE),
    ]
    .into_iter()
    .filter(|&(on, _)| on)
    .fold(0, |b, (_, bit)| b | bit)
}

/// One summary column of one direction.
#[derive(Clone, Copy, Default)]
struct Column {
    /// Of this side's segments outside the detail windows.
    packets: u32,
    /// Of the peer's ACKs outside the detail windows.
    acks: u32,
    t0: Option<Timestamp>,
    t1: Option<Timestamp>,
    seq_min: Option<u64>,
    seq_max: Option<u64>,
    ack_max: Option<u64>,
    edge_max: Option<u64>,
    /// `(ms·1000, time, frame)` of the smallest and largest RTT sample outside the windows.
    rtt_min: Option<(u64, Timestamp, u64)>,
    rtt_max: Option<(u64, Timestamp, u64)>,
    /// The largest flight after a segment outside the windows, and when.
    flight_max: Option<(u64, Timestamp)>,
    /// New data bytes of this side in the column, windows included.
    new_bytes: u64,
    /// What limited this side's data after its last segment in the column.
    limit: Option<Limit>,
}

impl Column {
    fn touch(&mut self, t: Timestamp) {
        self.t0 = Some(self.t0.map_or(t, |x| x.min(t)));
        self.t1 = Some(self.t1.map_or(t, |x| x.max(t)));
    }
}

fn max_opt(a: Option<u64>, b: u64) -> Option<u64> {
    Some(a.map_or(b, |a| a.max(b)))
}

/// One direction's series: the data one side sent and the ACKs its peer sent back.
#[derive(Default)]
struct DirSeries {
    isn: Option<u32>,
    seg_t: Vec<Timestamp>,
    seg_frame: Vec<u64>,
    seg_seq: Vec<u64>,
    seg_len: Vec<u32>,
    seg_kind: Vec<u16>,
    ack_t: Vec<Timestamp>,
    ack_frame: Vec<u64>,
    ack_ack: Vec<u64>,
    ack_win: Vec<u64>,
    ack_sack: Vec<Option<Vec<[u64; 2]>>>,
    /// RTT samples kept one by one: `(time, ns, frame)`.
    rtt: Vec<(Timestamp, u64, u64)>,
    /// Flight after each of this side's segments kept one by one.
    flight: Vec<(Timestamp, u64)>,
    columns: Vec<Column>,
}

/// One plotted connection being filled.
struct ConnSeries {
    want: Wanted,
    /// Column width in ns (at least 1).
    width: u64,
    kept: usize,
    truncated: bool,
    dirs: [DirSeries; 2],
}

impl ConnSeries {
    fn new(want: Wanted) -> Self {
        let span = want.last.elapsed_since(want.first);
        let width = (span / COLUMNS as u64).saturating_add(1);
        let dir = || DirSeries {
            columns: vec![Column::default(); COLUMNS],
            ..DirSeries::default()
        };
        ConnSeries {
            want,
            width,
            kept: 0,
            truncated: false,
            dirs: [dir(), dir()],
        }
    }

    fn column(&self, t: Timestamp) -> usize {
        let i = t.elapsed_since(self.want.first) / self.width;
        (i as usize).min(COLUMNS - 1)
    }

    fn in_window(&self, t: Timestamp) -> bool {
        // Few windows (one per plotted finding of the connection).
        self.want.windows.iter().any(|&(a, b)| a <= t && t <= b)
    }

    fn segment(&mut self, frame: u64, ts: Timestamp, pkt: &Packet<'_>, ev: &SegmentEvent) {
        let sender = usize::from(!ev.from_client);
        let data_dir = 1 - sender;
        let evidence = self.want.evidence.binary_search(&frame).is_ok();
        let detail = evidence
            || (self.in_window(ts) && {
                if self.kept < self.want.quota {
                    true
                } else {
                    self.truncated = true;
                    false
                }
            });
        if detail {
            self.kept += 1;
        }
        let col = self.column(ts);
        let k = ev.kinds;
        let flags = pkt.flags;
        let carries = ev.payload_len > 0 || flags.syn() || flags.fin() || flags.rst();

        // This side's data.
        {
            let d = &mut self.dirs[sender];
            if flags.syn() {
                d.isn = Some(pkt.seq);
            }
            let c = &mut d.columns[col];
            if k.has(SegmentKinds::NEW_DATA) {
                c.new_bytes += u64::from(ev.payload_len);
            }
            if ev.payload_len > 0 && ev.limit != Limit::None {
                c.limit = Some(ev.limit);
            }
            if carries {
                let end = ev.rel_seq + u64::from(ev.payload_len);
                if detail {
                    d.seg_t.push(ts);
                    d.seg_frame.push(frame);
                    d.seg_seq.push(ev.rel_seq);
                    d.seg_len.push(ev.payload_len);
                    d.seg_kind.push(kind_bits(k, pkt, evidence));
                } else {
                    c.packets += 1;
                    c.touch(ts);
                    c.seq_min = Some(c.seq_min.map_or(ev.rel_seq, |m| m.min(ev.rel_seq)));
                    c.seq_max = max_opt(c.seq_max, end);
                }
                if let Some(f) = ev.in_flight {
                    if detail {
                        d.flight.push((ts, f));
                    } else if c.flight_max.is_none_or(|(m, _)| f > m) {
                        c.flight_max = Some((f, ts));
                    }
                }
            }
        }

        // The peer's ACKs of the other side's data, and the RTT samples they close.
        let Some(ack) = ev.rel_ack.filter(|_| flags.ack()) else {
            return;
        };
        let d = &mut self.dirs[data_dir];
        let edge = ack.saturating_add(ev.window_bytes);
        // Both a data → ACK and a timestamp-echo sample may end at one ACK: both are kept.
        for (_, ns) in [ev.ack_rtt, ev.ts_rtt].into_iter().flatten() {
            if detail {
                d.rtt.push((ts, ns, frame));
            } else {
                let c = &mut d.columns[col];
                if c.rtt_min.is_none_or(|(m, _, _)| ns < m) {
                    c.rtt_min = Some((ns, ts, frame));
                }
                if c.rtt_max.is_none_or(|(m, _, _)| ns > m) {
                    c.rtt_max = Some((ns, ts, frame));
                }
            }
        }
        if detail {
            let blocks = pkt.options.sack_blocks();
            let sack = (!blocks.is_empty()).then(|| {
                // Relative like the ACK: the offset of each edge from the raw ACK, taken
                // as a signed 32-bit distance (RFC 2018 edges lie within a window of it).
                let rel = |edge: u32| {
                    let off = i64::from(edge.wrapping_sub(pkt.ack) as i32);
                    (ack as i64).saturating_add(off).max(0) as u64
                };
                blocks.iter().map(|&(l, r)| [rel(l), rel(r)]).collect()
            });
            d.ack_t.push(ts);
            d.ack_frame.push(frame);
            d.ack_ack.push(ack);
            d.ack_win.push(ev.window_bytes);
            d.ack_sack.push(sack);
        } else {
            let c = &mut d.columns[col];
            c.acks += 1;
            c.touch(ts);
            c.ack_max = max_opt(c.ack_max, ack);
            c.edge_max = max_opt(c.edge_max, edge);
        }
        // A D-SACK reports a retransmission of the data it acknowledges as needless.
        if let Some(rx) = ev.dsack_of {
            if let Ok(i) = d.seg_frame.binary_search(&rx) {
                d.seg_kind[i] |= kind::SPURIOUS;
            }
        }
    }
}

/// The pass's consumer: routes each segment of a plotted connection to its series.
pub struct PlotPass {
    by_stream: HashMap<u64, usize>,
    conns: Vec<ConnSeries>,
}

impl PlotPass {
    pub fn new(wanted: Vec<Wanted>) -> Self {
        let by_stream = wanted
            .iter()
            .enumerate()
            .map(|(i, w)| (w.stream, i))
            .collect();
        PlotPass {
            by_stream,
            conns: wanted.into_iter().map(ConnSeries::new).collect(),
        }
    }

    /// One segment of the capture, in capture order.
    pub fn segment(&mut self, frame: u64, ts: Timestamp, pkt: &Packet<'_>, ev: &SegmentEvent) {
        if let Some(&i) = self.by_stream.get(&ev.stream) {
            self.conns[i].segment(frame, ts, pkt, ev);
        }
    }

    /// The series of every plotted connection, in the order asked for, with times in
    /// seconds since `zero` (the file's first frame).
    pub fn finish(self, zero: Timestamp) -> Vec<ConnPlot> {
        self.conns.into_iter().map(|c| c.plot(zero)).collect()
    }
}

/// Seconds since `zero`, to the microsecond (Wireshark's `frame.time_relative`).
fn secs(t: Timestamp, zero: Timestamp) -> f64 {
    let us = (t.nanos().saturating_sub(zero.nanos()) as f64 / 1e3).round();
    us / 1e6
}

/// Milliseconds to the microsecond.
fn ms(ns: u64) -> f64 {
    (ns as f64 / 1e3).round() / 1e3
}

#[derive(Serialize)]
pub struct ConnPlot {
    pub stream: u64,
    client: String,
    server: String,
    t_first: f64,
    t_last: f64,
    detail: Vec<[f64; 2]>,
    truncated: bool,
    columns: usize,
    client_to_server: Direction,
    server_to_client: Direction,
}

#[derive(Serialize)]
struct Direction {
    isn: Option<u32>,
    segments: Segments,
    acks: Acks,
    summary: Summary,
    rtt: Rtt,
    in_flight: InFlight,
    throughput: Throughput,
    limit: Limits,
}

#[derive(Serialize)]
struct Segments {
    t: Vec<f64>,
    frame: Vec<u64>,
    seq: Vec<u64>,
    len: Vec<u32>,
    kind: Vec<u16>,
}

#[derive(Serialize)]
struct Acks {
    t: Vec<f64>,
    frame: Vec<u64>,
    ack: Vec<u64>,
    win: Vec<u64>,
    sack: Vec<Option<Vec<[u64; 2]>>>,
}

#[derive(Serialize, Default)]
struct Summary {
    t0: Vec<f64>,
    t1: Vec<f64>,
    seq_min: Vec<Option<u64>>,
    seq_max: Vec<Option<u64>>,
    ack_max: Vec<Option<u64>>,
    edge_max: Vec<Option<u64>>,
    packets: Vec<u32>,
}

#[derive(Serialize, Default)]
struct Rtt {
    t: Vec<f64>,
    ms: Vec<f64>,
    frame: Vec<u64>,
}

#[derive(Serialize, Default)]
struct InFlight {
    t: Vec<f64>,
    bytes: Vec<u64>,
}

#[derive(Serialize, Default)]
struct Throughput {
    t: Vec<f64>,
    bytes_per_s: Vec<f64>,
}

#[derive(Serialize, Default)]
struct Limits {
    t0: Vec<f64>,
    t1: Vec<f64>,
    what: Vec<&'static str>,
}

fn limit_name(l: Limit) -> Option<&'static str> {
    match l {
        Limit::None => None,
        Limit::ZeroWindow => Some("zero_window"),
        Limit::Rwnd => Some("rwnd"),
        Limit::Sender => Some("sender"),
        Limit::App => Some("app"),
    }
}

impl ConnSeries {
    fn plot(self, zero: Timestamp) -> ConnPlot {
        let s = |t: Timestamp| secs(t, zero);
        let (first, width) = (self.want.first, self.width);
        let col_start = |i: usize| {
            Timestamp::from_nanos(first.nanos().saturating_add((i as u64 * width) as i64))
        };
        let [c2s, s2c] = self.dirs.map(|d| d.series(&s, &col_start, width));
        ConnPlot {
            stream: self.want.stream,
            client: self.want.client,
            server: self.want.server,
            t_first: s(self.want.first),
            t_last: s(self.want.last),
            detail: self
                .want
                .windows
                .iter()
                .map(|&(a, b)| [s(a), s(b)])
                .collect(),
            truncated: self.truncated,
            columns: COLUMNS,
            client_to_server: c2s,
            server_to_client: s2c,
        }
    }
}

impl DirSeries {
    fn series(
        self,
        s: &impl Fn(Timestamp) -> f64,
        col_start: &impl Fn(usize) -> Timestamp,
        width: u64,
    ) -> Direction {
        let mut summary = Summary::default();
        let mut rtt = self.rtt;
        let mut flight = self.flight;
        let mut throughput = Throughput::default();
        let mut limit = Limits::default();
        let width_s = width as f64 / 1e9;
        // Columns after the last one with anything are left out of the throughput line.
        let used = self
            .columns
            .iter()
            .rposition(|c| c.new_bytes > 0 || c.packets > 0 || c.acks > 0)
            .map_or(0, |i| i + 1);
        let mut open: Option<(usize, &'static str)> = None;
        for (i, c) in self.columns.iter().enumerate() {
            if c.packets > 0 || c.acks > 0 {
                summary.t0.push(c.t0.map_or(0.0, s));
                summary.t1.push(c.t1.map_or(0.0, s));
                summary.seq_min.push(c.seq_min);
                summary.seq_max.push(c.seq_max);
                summary.ack_max.push(c.ack_max);
                summary.edge_max.push(c.edge_max);
                summary.packets.push(c.packets);
            }
            if let Some((ns, t, f)) = c.rtt_min {
                rtt.push((t, ns, f));
            }
            // The largest, unless the column had one sample (then it is the smallest).
            if let Some((ns, t, f)) = c.rtt_max.filter(|m| Some(*m) != c.rtt_min) {
                rtt.push((t, ns, f));
            }
            if let Some((b, t)) = c.flight_max {
                flight.push((t, b));
            }
            if i < used {
                throughput.t.push(s(col_start(i)) + width_s / 2.0);
                // Whole bytes per second: the fractions only made the page longer.
                throughput
                    .bytes_per_s
                    .push((c.new_bytes as f64 / width_s).round());
            }
            // Spans of what limited the data, column by column.
            let what = c.limit.and_then(limit_name);
            match (open, what) {
                (Some((_, w)), Some(x)) if w == x => {}
                (o, x) => {
                    if let Some((from, w)) = o {
                        limit.t0.push(s(col_start(from)));
                        limit.t1.push(s(col_start(i)));
                        limit.what.push(w);
                    }
                    open = x.map(|x| (i, x));
                }
            }
        }
        if let Some((from, w)) = open {
            limit.t0.push(s(col_start(from)));
            limit.t1.push(s(col_start(self.columns.len())));
            limit.what.push(w);
        }
        rtt.sort_by_key(|&(t, _, f)| (t, f));
        flight.sort_by_key(|&(t, _)| t);
        Direction {
            isn: self.isn,
            segments: Segments {
                t: self.seg_t.iter().map(|&t| s(t)).collect(),
                frame: self.seg_frame,
                seq: self.seg_seq,
                len: self.seg_len,
                kind: self.seg_kind,
            },
            acks: Acks {
                t: self.ack_t.iter().map(|&t| s(t)).collect(),
                frame: self.ack_frame,
                ack: self.ack_ack,
                win: self.ack_win,
                sack: self.ack_sack,
            },
            summary,
            rtt: Rtt {
                t: rtt.iter().map(|&(t, _, _)| s(t)).collect(),
                ms: rtt.iter().map(|&(_, ns, _)| ms(ns)).collect(),
                frame: rtt.iter().map(|&(_, _, f)| f).collect(),
            },
            in_flight: InFlight {
                t: flight.iter().map(|&(t, _)| s(t)).collect(),
                bytes: flight.iter().map(|&(_, b)| b).collect(),
            },
            throughput,
            limit,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lab's clean bulk transfer seen at the server (5,246 frames, one connection).
    fn capture() -> String {
        format!(
            "{}/../../examples/lab/clean-bulk/server.pcap",
            env!("CARGO_MANIFEST_DIR")
        )
    }

    /// Each TCP frame's `(frame, time, from the client, carries data/SYN/FIN/RST)`.
    fn frames() -> Vec<(u64, Timestamp, bool, bool)> {
        let mut v = Vec::new();
        tcpwhy_pipeline::segments(&capture(), |f, ts, p, ev| {
            let carries = ev.payload_len > 0 || p.flags.syn() || p.flags.fin() || p.flags.rst();
            v.push((f, ts, ev.from_client, carries));
        })
        .unwrap();
        v
    }

    fn plot(want: Wanted) -> serde_json::Value {
        let mut pass = PlotPass::new(vec![want]);
        tcpwhy_pipeline::segments(&capture(), |f, ts, p, ev| pass.segment(f, ts, p, ev)).unwrap();
        let zero = frames()[0].1;
        serde_json::to_value(pass.finish(zero).remove(0)).unwrap()
    }

    fn want(fr: &[(u64, Timestamp, bool, bool)]) -> Wanted {
        let ends = [
            tcpwhy_track::Endpoint {
                addr: [10, 0, 0, 1].into(),
                port: 1,
            },
            tcpwhy_track::Endpoint {
                addr: [10, 0, 0, 2].into(),
                port: 2,
            },
        ];
        let mut w = Wanted::new(0, &ends);
        w.first = fr[0].1;
        w.last = fr[fr.len() - 1].1;
        w
    }

    #[test]
    fn outside_the_windows_every_packet_is_in_a_summary_column_and_evidence_is_kept() {
        let fr = frames();
        assert!(fr.len() > 5000, "{} frames", fr.len());
        let time = |n: u64| fr.iter().find(|x| x.0 == n).unwrap().1;
        // A late data segment of the server, far outside the window: an evidence frame.
        let late = fr.iter().rev().find(|x| !x.2 && x.3).unwrap().0;
        let mut w = want(&fr);
        w.windows = vec![(time(100), time(200))];
        w.evidence = vec![150, late];
        w.quota = 30;
        let p = plot(w);
        assert_eq!(p["truncated"], true);
        for (name, from_client) in [("client_to_server", true), ("server_to_client", false)] {
            let d = &p[name];
            let sent = fr.iter().filter(|x| x.2 == from_client && x.3).count() as u64;
            let detail = d["segments"]["frame"].as_array().unwrap().len() as u64;
            let summarised: u64 = d["summary"]["packets"]
                .as_array()
                .unwrap()
                .iter()
                .map(|n| n.as_u64().unwrap())
                .sum();
            // Every segment of the side is drawn: one by one or in a column.
            assert_eq!(detail + summarised, sent, "{name}");
            // Columns are at most COLUMNS, in time order.
            let t0 = d["summary"]["t0"].as_array().unwrap();
            assert!(t0.len() <= COLUMNS);
            assert!(t0.windows(2).all(|w| w[0].as_f64() <= w[1].as_f64()));
        }
        let seg = &p["server_to_client"]["segments"];
        let kept: Vec<u64> = seg["frame"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f.as_u64().unwrap())
            .collect();
        assert!(kept.contains(&late), "the evidence frame {late} is kept");
        // Inside the window only frames 100–200, and the quota bounds them.
        assert!(kept.iter().all(|&f| (100..=200).contains(&f) || f == late));
        let acks = p["server_to_client"]["acks"]["frame"]
            .as_array()
            .unwrap()
            .len();
        assert!(kept.len() + acks <= 30 + 2, "{} + {acks}", kept.len());
    }

    #[test]
    fn a_connection_within_its_quota_is_kept_whole_in_time_order() {
        let fr = frames();
        let mut w = want(&fr);
        w.windows = vec![(w.first, w.last)];
        w.quota = usize::MAX;
        let p = plot(w);
        assert_eq!(p["truncated"], false);
        let d = &p["server_to_client"];
        let sent = fr.iter().filter(|x| !x.2 && x.3).count();
        assert_eq!(d["segments"]["frame"].as_array().unwrap().len(), sent);
        assert_eq!(d["summary"]["packets"], serde_json::json!([]));
        // uPlot needs every series' x in ascending order.
        for series in ["segments", "acks", "rtt", "in_flight", "throughput"] {
            let t = d[series]["t"].as_array().unwrap();
            assert!(!t.is_empty(), "{series}");
            assert!(
                t.windows(2).all(|w| w[0].as_f64() <= w[1].as_f64()),
                "{series}"
            );
        }
    }

    #[test]
    fn overlapping_windows_merge() {
        let t = Timestamp::from_nanos;
        assert_eq!(
            merge_windows(vec![
                (t(5), t(9)),
                (t(1), t(3)),
                (t(2), t(6)),
                (t(20), t(30))
            ]),
            vec![(t(1), t(9)), (t(20), t(30))]
        );
    }
}
