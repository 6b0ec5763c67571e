//! The one pass over a capture — read → decode → track → detect → findings — on one
//! thread or sharded by connection across several, as a library: the binary, the tests,
//! the fuzz targets (and later the Python binding) call these entry points instead of
//! each wiring the stages together.
//!
//! Memory follows the connections open at once, not their total: the tracker finalises a
//! connection when it ends (RST, FIN both ways, idleness; `tcpwhy_track::Tracker`) and
//! hands its summary over at once, before the next segment; [`analyze`] runs the
//! detectors' judgement of that connection then and frees its state, keeping only
//! findings and counts. [`flows`] keeps one row per connection because its output is
//! every row, sorted by `tcp.stream`. What is kept to the end to be printed in order
//! (findings sorted by cost, rows by stream) is held in a [`spill::SpillSort`]: up to
//! [`spill::SPILL_BUDGET`] in memory, beyond it in sorted runs in temporary files.
//!
//! Sharding: each thread reads every frame of one shared map of the file and tracks the
//! connections of its shard only ([`Sharder`]: a new 4-tuple goes to the least-loaded
//! shard), so no packet is handed between threads. A shard cannot know the final
//! `tcp.stream` numbers (they count the connections of every shard in the order of their
//! first frames), so its connections carry provisional ids
//! ([`PROVISIONAL_STREAM`] | first frame) until the shards are joined; [`StreamNumbers`]
//! then maps them, and findings are renumbered ([`tcpwhy_detect::Analysis::renumber`]).

mod connections;
mod findings;
mod report;
pub mod spill;

pub use connections::Connections;
pub use findings::Findings;
pub use report::{ConnStats, FileReport, ReadError};

use spill::{Sorted, SpillSort};
use std::path::Path;
use tcpwhy_capture::{
    decode, flow_addrs, Capture, FileFormat, FlowAddrs, Packet, SkipCounts, Timestamp,
};
use tcpwhy_detect::{Analyzer, Config, Exchange, Finding};
use tcpwhy_track::{ConnSummary, Endpoint, SegmentEvent, Sharder, Tracker, PROVISIONAL_STREAM};

/// Frames between progress updates (cheap enough to be invisible on the hot path).
const PROGRESS_EVERY: u64 = 1 << 16;

/// Files smaller than this are read by one thread: starting more costs more than it saves.
const PARALLEL_MIN_BYTES: u64 = 64 << 20;

/// Told how far the pass got, by one thread, every [`PROGRESS_EVERY`] frames. The
/// binary draws a progress bar with it; libraries never touch the terminal.
pub trait Progress: Sync {
    /// The pass starts on an input of `total_bytes` (unknown for a stream).
    fn start(&self, total_bytes: Option<u64>);
    /// Bytes of the input read so far.
    fn update(&self, bytes_read: u64);
    /// The pass is over.
    fn finish(&self);
}

/// How to run a pass.
#[derive(Clone, Copy, Default)]
pub struct Options<'p> {
    /// Threads; 0 chooses ([`auto_threads`]). Standard input is always read by one.
    pub threads: usize,
    pub progress: Option<&'p dyn Progress>,
    /// Bytes of findings a pass holds in memory before it writes them to temporary
    /// files, shared by its threads; `None`: [`spill::SPILL_BUDGET`]. (Tests make it
    /// tiny to force spilling.)
    pub spill_budget: Option<usize>,
}

/// How many threads a pass on `path` uses when the user did not say: one per core for a
/// large file, one for small files and standard input (a stream can be read once).
pub fn auto_threads(path: &str) -> usize {
    let large = path != "-" && std::fs::metadata(path).is_ok_and(|m| m.len() >= PARALLEL_MIN_BYTES);
    if large {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        1
    }
}

/// Opens `path` (`-` is standard input).
pub fn open(path: &str) -> Result<Capture, String> {
    let r = if path == "-" {
        Capture::from_reader(Box::new(std::io::stdin()))
    } else {
        Capture::open(Path::new(path))
    };
    r.map_err(|e| format!("{path}: {e}"))
}

/// What a pass hands its consumer: every TCP segment in capture order (of its shard), and
/// every connection once the tracker finalised it — always before the segment that
/// follows the finalisation, so that a late packet reviving a finalised connection (a
/// continuation, `ConnSummary::continuation`) comes after the summary of its first part.
pub trait Sink {
    fn segment(&mut self, _frame: u64, _ts: Timestamp, _pkt: &Packet<'_>, _ev: &SegmentEvent) {}
    fn connection(&mut self, summary: ConnSummary);
    /// Whether `segment` reads [`SegmentEvent::ip_id`]; if not, the tracker does not keep
    /// the senders' IP ID order ([`Tracker::without_ip_ids`]).
    fn reads_ip_ids(&self) -> bool {
        true
    }
    /// Whether `segment` does anything; if not, the tracker makes no [`SegmentEvent`]s
    /// ([`Tracker::track`]) and `segment` is not called.
    fn reads_segments(&self) -> bool {
        true
    }
}

/// Frame counts and where reading stopped, for one thread's pass.
#[derive(Default)]
struct Tally {
    frames: u64,
    tcp_frames: u64,
    skipped: SkipCounts,
    error: Option<ReadError>,
}

/// The next frame, or where and why reading stopped (for the report). Inline: as a call
/// it moved the frame through two `Result`s, ≈ 30 instructions a frame (callgrind).
#[inline(always)]
fn next_frame(cap: &mut Capture) -> Result<Option<tcpwhy_capture::Frame<'_>>, ReadError> {
    cap.next_frame().map_err(|e| ReadError {
        message: e.to_string(),
        frame: e.frame,
        offset: e.offset,
    })
}

/// This thread's share of a sharded pass.
struct Shard {
    me: usize,
    of: usize,
    /// The same on every thread, fed every frame's endpoints, so they agree on owners.
    sharder: Sharder,
}

/// The tracker and what consumes its output, packet by packet: the summary of every
/// connection finalised while a packet was processed goes to the sink before that
/// packet's segment (see [`Sink`]).
struct Stage<S> {
    tracker: Tracker,
    sink: S,
}

impl<S: Sink> Stage<S> {
    fn packet(&mut self, frame: u64, ts: Timestamp, pkt: &Packet<'_>) -> SegmentEvent {
        let ev = self.tracker.process(frame, ts, pkt);
        for c in self.tracker.drain_finished() {
            self.sink.connection(c);
        }
        self.sink.segment(frame, ts, pkt, &ev);
        ev
    }

    /// [`Self::packet`] for a sink that does not read segments.
    fn track(&mut self, frame: u64, ts: Timestamp, pkt: &Packet<'_>) {
        self.tracker.track(frame, ts, pkt);
        for c in self.tracker.drain_finished() {
            self.sink.connection(c);
        }
    }

    /// Finalises every connection still open and returns the sink.
    fn finish(self) -> S {
        let mut sink = self.sink;
        for c in self.tracker.finish() {
            sink.connection(c);
        }
        sink
    }
}

/// One thread's pass over `cap` into `sink`. In a sharded pass every frame is decoded
/// and counted (TCP or skipped) by exactly one thread: the owner of its connection, or
/// for a frame without readable endpoints thread `number % of`.
fn run<S: Sink>(
    cap: &mut Capture,
    mut shard: Option<Shard>,
    sink: S,
    progress: Option<&dyn Progress>,
) -> (Tally, S) {
    let mut tracker = match shard {
        None => Tracker::new(),
        Some(_) => Tracker::with_provisional_streams(),
    };
    if !sink.reads_ip_ids() {
        tracker = tracker.without_ip_ids();
    }
    let events = sink.reads_segments();
    let mut stage = Stage { tracker, sink };
    if let Some(p) = progress {
        p.start(cap.total_bytes());
    }
    let mut t = Tally::default();
    t.error = loop {
        if t.frames % PROGRESS_EVERY == 0 {
            if let Some(p) = progress {
                p.update(cap.bytes_read());
            }
        }
        let frame = match next_frame(cap) {
            Ok(Some(f)) => f,
            Ok(None) => break None,
            Err(e) => break Some(e),
        };
        t.frames += 1;
        // Another shard's frame is recognised by its endpoints alone, before a full decode.
        let owner = match &mut shard {
            Some(s) => match flow_addrs(&frame).map(|a| s.sharder.shard(&a)) {
                Some(o) if o != s.me => continue,
                o => o,
            },
            None => None,
        };
        // Borrow the decoded packet in place: moving the 136-byte value out of the
        // Result cost a memcpy per frame (measured: ~10 % of the pass).
        let decoded = decode(&frame);
        let pkt = match &decoded {
            Ok(pkt) => pkt,
            Err(reason) => {
                let mine = shard
                    .as_ref()
                    .is_none_or(|s| owner.unwrap_or((frame.number % s.of as u64) as usize) == s.me);
                if mine {
                    t.skipped.add(*reason);
                }
                continue;
            }
        };
        if let Some(s) = &mut shard {
            if owner.unwrap_or_else(|| s.sharder.shard(&FlowAddrs::of(pkt))) != s.me {
                continue;
            }
        }
        t.tcp_frames += 1;
        if events {
            stage.packet(frame.number, frame.ts, pkt);
        } else {
            stage.track(frame.number, frame.ts, pkt);
        }
    };
    let sink = stage.finish();
    if let Some(p) = progress {
        p.finish();
    }
    (t, sink)
}

fn format_name(f: FileFormat) -> String {
    match f {
        FileFormat::Pcap {
            nanosecond,
            big_endian,
            modified,
        } => format!(
            "pcap{}{}{}",
            if modified { " (modified)" } else { "" },
            if nanosecond { " ns" } else { " µs" },
            if big_endian { " big-endian" } else { "" }
        ),
        FileFormat::PcapNg => "pcapng".into(),
    }
}

/// The result of [`sharded`]: the file's counts and every shard's sink.
struct Sharded<S> {
    report: FileReport,
    sinks: Vec<S>,
}

/// A pass over `path` on `threads` threads (one for standard input or a small count),
/// each feeding its own sink made by `make` (told its shard and how many there are:
/// `(0, 1)` for a serial pass).
fn sharded<S: Sink + Send>(
    path: &str,
    opts: &Options<'_>,
    make: impl Fn(usize, usize) -> S + Sync,
) -> Result<Sharded<S>, String> {
    let threads = match opts.threads {
        0 => auto_threads(path),
        n => n,
    };
    if threads <= 1 || path == "-" {
        let mut cap = open(path)?;
        let format = format_name(cap.format());
        let (t, sink) = run(&mut cap, None, make(0, 1), opts.progress);
        return Ok(Sharded {
            report: FileReport::new(path, format, t.frames, t.tcp_frames, t.skipped, t.error),
            sinks: vec![sink],
        });
    }
    let caps =
        Capture::open_shared(Path::new(path), threads).map_err(|e| format!("{path}: {e}"))?;
    let format = format_name(caps[0].format());
    let make = &make;
    let results: Vec<(Tally, S)> = std::thread::scope(|scope| {
        let handles: Vec<_> = caps
            .into_iter()
            .enumerate()
            .map(|(shard, mut cap)| {
                // Thread 0 reports progress: every thread reads every frame.
                let progress = if shard == 0 { opts.progress } else { None };
                scope.spawn(move || {
                    let s = Shard {
                        me: shard,
                        of: threads,
                        sharder: Sharder::new(threads),
                    };
                    run(&mut cap, Some(s), make(shard, threads), progress)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join())
            .collect::<Result<Vec<_>, _>>()
    })
    .map_err(|_| format!("{path}: a worker thread failed"))?;
    // Every thread read the same frames and met the same error; TCP frames and skips
    // were counted by one thread each.
    let mut report = FileReport::new(path, format, 0, 0, SkipCounts::default(), None);
    let mut sinks = Vec::with_capacity(results.len());
    for (i, (t, sink)) in results.into_iter().enumerate() {
        report.tcp_frames += t.tcp_frames;
        report.skipped.merge(&t.skipped);
        if i == 0 {
            (report.frames, report.error) = (t.frames, t.error);
        }
        sinks.push(sink);
    }
    Ok(Sharded { report, sinks })
}

/// Keeps connection rows for [`flows`] as they end, encoded ([`connections`]): a short
/// connection's row takes tens of bytes instead of a 776-byte summary, and beyond the
/// memory budget they wait in temporary files.
struct Rows(connections::RowStore);

impl Sink for Rows {
    fn connection(&mut self, summary: ConnSummary) {
        self.0.push(summary);
    }
    fn reads_ip_ids(&self) -> bool {
        false
    }
    fn reads_segments(&self) -> bool {
        false
    }
}

/// Every connection of `path` with its statistics (`tcpwhy flows`), sorted by stream,
/// continuations merged. Rows beyond the memory budget ([`Options::spill_budget`]) wait
/// in temporary files; an error writing them fails the pass.
pub fn flows(path: &str, opts: &Options<'_>) -> Result<FileReport, String> {
    let budget = opts.spill_budget.unwrap_or(spill::SPILL_BUDGET);
    let s = sharded(path, opts, |me, shards| {
        // At most 256 threads (the command line's bound on -j).
        Rows(connections::RowStore::new(budget / shards, me as u16))
    })?;
    let keeping = |e: std::io::Error| format!("{path}: keeping the connections: {e}");
    let mut report = s.report;
    let mut stores = Vec::new();
    for Rows(mut r) in s.sinks {
        if let Some(e) = r.error.take() {
            return Err(keeping(e));
        }
        stores.push((r.rows.seal(), r.servers));
    }
    report.connections = Connections::new(stores).map_err(keeping)?;
    report.stats = ConnStats::of_connections(&report.connections).map_err(keeping)?;
    Ok(report)
}

/// Every TCP segment of `path` with its tracker event, in capture order, on one thread
/// (`tcpwhy segments`).
pub fn segments(
    path: &str,
    on_segment: impl FnMut(u64, Timestamp, &Packet<'_>, &SegmentEvent),
) -> Result<FileReport, String> {
    struct Each<F>(F, ConnStats);
    impl<F: FnMut(u64, Timestamp, &Packet<'_>, &SegmentEvent)> Sink for Each<F> {
        fn segment(&mut self, frame: u64, ts: Timestamp, pkt: &Packet<'_>, ev: &SegmentEvent) {
            (self.0)(frame, ts, pkt, ev)
        }
        fn connection(&mut self, summary: ConnSummary) {
            self.1.add(&summary);
        }
    }
    let mut cap = open(path)?;
    let format = format_name(cap.format());
    let (t, sink) = run(&mut cap, None, Each(on_segment, ConnStats::default()), None);
    let mut report = FileReport::new(path, format, t.frames, t.tcp_frames, t.skipped, t.error);
    report.stats = sink.1;
    Ok(report)
}

/// Final `tcp.stream` numbers of a sharded pass: the provisional id of a connection is
/// [`PROVISIONAL_STREAM`] | its first frame, and its number is the count of connections
/// (of every shard) whose first frame came before — what one tracker would have given.
pub struct StreamNumbers {
    /// First frames of every connection, sorted.
    first_frames: Vec<u64>,
}

impl StreamNumbers {
    /// `shards`: each shard's first frames, in any order.
    pub fn new(shards: Vec<Vec<u64>>) -> Self {
        let mut first_frames: Vec<u64> = shards.into_iter().flatten().collect();
        first_frames.sort_unstable();
        StreamNumbers { first_frames }
    }

    /// The final number of `stream` (unchanged when it is not provisional).
    pub fn get(&self, stream: u64) -> u64 {
        if stream & PROVISIONAL_STREAM == 0 {
            return stream;
        }
        let frame = stream & !PROVISIONAL_STREAM;
        match self.first_frames.binary_search(&frame) {
            Ok(i) | Err(i) => i as u64,
        }
    }
}

/// Feeds an [`Analyzer`] and keeps what the report needs of each connection.
struct Analyzing {
    analyzer: Analyzer,
    stats: ConnStats,
    /// First frames of this shard's connections, to number the streams at the end
    /// (sharded passes only: 8 bytes a connection).
    first_frames: Option<Vec<u64>>,
    /// Where each connection's findings go once it is judged ([`analyze`]); without it
    /// they stay in the analyzer ([`Pass`]).
    store: Option<SpillSort<Finding>>,
    /// The first error writing the store (a full disk): the pass fails with it.
    store_error: Option<std::io::Error>,
}

impl Analyzing {
    fn new(config: Config, first_frames: bool, store: Option<SpillSort<Finding>>) -> Self {
        Analyzing {
            analyzer: Analyzer::new(config),
            stats: ConnStats::default(),
            first_frames: first_frames.then(Vec::new),
            store,
            store_error: None,
        }
    }
}

impl Sink for Analyzing {
    fn segment(&mut self, frame: u64, ts: Timestamp, pkt: &Packet<'_>, ev: &SegmentEvent) {
        self.analyzer.on_segment(frame, ts, pkt, ev);
    }
    fn connection(&mut self, summary: ConnSummary) {
        self.stats.add(&summary);
        if let (Some(v), false) = (&mut self.first_frames, summary.continuation) {
            v.push(summary.first_frame);
        }
        self.analyzer.on_connection(&summary);
        if let Some(store) = &mut self.store {
            for f in self.analyzer.drain_findings() {
                if self.store_error.is_none() {
                    self.store_error = store.push(&f).err();
                }
            }
        }
    }
}

/// `(stream, [client, server], exchanges)` of every connection (`analyze --exchanges`).
pub type Exchanges = Vec<(u64, [Endpoint; 2], Vec<Exchange>)>;

/// The findings of `path` (`tcpwhy analyze`): every detector over every connection, the
/// connections judged as they end. `report.connections` stays empty; `report.stats`
/// holds what the report says of them. Findings beyond the memory budget
/// ([`Options::spill_budget`]) wait in temporary files; an error writing them fails the
/// pass.
pub fn analyze(
    path: &str,
    opts: &Options<'_>,
    config: &Config,
) -> Result<(FileReport, Findings, Exchanges), String> {
    let budget = opts.spill_budget.unwrap_or(spill::SPILL_BUDGET);
    let s = sharded(path, opts, |_, shards| {
        let store = SpillSort::new(budget / shards);
        Analyzing::new(config.clone(), shards > 1, Some(store))
    })?;
    let mut report = s.report;
    let mut sinks = s.sinks.into_iter();
    let Some(mut first) = sinks.next() else {
        return Ok((report, Findings::default(), Vec::new()));
    };
    let keeping = |e: std::io::Error| format!("{path}: keeping the findings: {e}");
    let mut frames = vec![first.first_frames.take().unwrap_or_default()];
    let mut stores = Vec::new();
    let mut take_store = |a: &mut Analyzing| -> Result<(), String> {
        if let Some(e) = a.store_error.take() {
            return Err(keeping(e));
        }
        stores.extend(a.store.take().map(SpillSort::seal));
        Ok(())
    };
    take_store(&mut first)?;
    for mut other in sinks {
        take_store(&mut other)?;
        frames.push(other.first_frames.take().unwrap_or_default());
        first.stats.merge(&other.stats);
        first.analyzer.absorb(other.analyzer);
    }
    let sharded = frames.len() > 1;
    let mut analysis = first.analyzer.finish();
    // Findings reported at the end (about patterns across connections, and those the
    // detectors held to judge with what later connections showed): after every
    // shard's, as when one sort took them all.
    let mut last = SpillSort::new(budget);
    for f in analysis.findings.drain(..) {
        last.push(&f).map_err(keeping)?;
    }
    stores.push(last.seal());
    let numbers = StreamNumbers::new(frames);
    analysis.renumber(|s| numbers.get(s));
    let findings = Findings::new(
        Sorted::join(stores).map_err(keeping)?,
        sharded.then_some(numbers),
    );
    report.stats = first.stats;
    Ok((report, findings, analysis.exchanges))
}

/// The pass the tests and fuzz targets make on frames they build themselves: each
/// packet through the tracker and the analyzer, as [`analyze`] does on one thread.
pub struct Pass(Stage<Analyzing>);

impl Pass {
    pub fn new(config: Config) -> Self {
        Pass(Stage {
            tracker: Tracker::new(),
            sink: Analyzing::new(config, false, None),
        })
    }

    /// One TCP packet seen at `ts` in frame `frame`.
    pub fn packet(&mut self, frame: u64, ts: Timestamp, pkt: &Packet<'_>) -> SegmentEvent {
        self.0.packet(frame, ts, pkt)
    }

    /// Connections the analyzer holds state for right now.
    pub fn open_connections(&self) -> usize {
        self.0.sink.analyzer.open_connections()
    }

    /// Ends the pass: every open connection finalised, then the findings.
    pub fn finish(self) -> (ConnStats, tcpwhy_detect::Analysis) {
        let sink = self.0.finish();
        (sink.stats, sink.analyzer.finish())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provisional_streams_are_numbered_by_their_first_frames_across_shards() {
        // Shard 0 saw connections starting at frames 7 and 2, shard 1 at 5 and 40.
        let n = StreamNumbers::new(vec![vec![7, 2], vec![40, 5]]);
        let p = |frame: u64| PROVISIONAL_STREAM | frame;
        assert_eq!(
            [n.get(p(2)), n.get(p(5)), n.get(p(7)), n.get(p(40))],
            [0, 1, 2, 3]
        );
        // A final number (a serial pass) is left alone.
        assert_eq!(n.get(3), 3);
    }
}
