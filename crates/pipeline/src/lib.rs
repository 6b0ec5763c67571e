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
//! Sharding: one reader (the calling thread) reads every frame once, tracks the frames
//! of shard 0 itself and gives the others to the worker that owns their connection
//! ([`Sharder`]: a new 4-tuple goes to the least-loaded shard, the reader's weighed by
//! how its workers keep up; a frame without readable endpoints to shard `number %
//! shards`), in batches through bounded channels ([`hand_out`]); each worker decodes,
//! counts and tracks only its frames, in capture order ([`work`]). `-j N` is N threads:
//! the reader and N − 1 workers, one per core. From a memory-mapped file a batch holds the
//! frames' positions in the shared map ([`FrameAt`]), from a stream (standard input,
//! gzip) copies of their bytes; spent batches go back to the reader to be filled again,
//! so memory stays at a few batches a worker ([`QUEUED_BATCHES`]). A worker cannot know
//! the final `tcp.stream` numbers (they count the connections of every worker in the
//! order of their first frames), so its connections carry provisional ids
//! ([`PROVISIONAL_STREAM`] | first frame) until the workers are joined; [`StreamNumbers`]
//! then maps them, and findings are renumbered ([`tcpwhy_detect::Analysis::renumber`]).

mod connections;
mod findings;
mod report;
pub mod spill;

pub use connections::{Batches, Connections, RowBatch};
pub use findings::{Findings, Render, Rendered, RenderedView, StreamMark};
pub use report::{ConnStats, FileReport, ReadError};

use spill::{Sorted, SpillSort};
use std::ops::ControlFlow;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{channel, sync_channel, Receiver, Sender, SyncSender, TrySendError};
use tcpwhy_capture::{
    decode, flow_addrs, icmp_error, plain_ipv4_ends, Capture, FileFormat, FlowAddrs, Frame,
    FrameAt, MapSpan, MappedBytes, Packet, SkipCounts, SkipReason, Timestamp,
};
use tcpwhy_detect::{Analyzer, Config, Exchange, Finding};
use tcpwhy_track::{
    ConnSummary, Cuts, Endpoint, SegmentEvent, Sharder, Tracker, MAX_LIVE_CONNECTIONS,
    MAX_OPEN_HANDSHAKES, PROVISIONAL_STREAM,
};

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
    /// Worker threads; 0 chooses ([`auto_threads`]). More than one are fed by a reader on
    /// the calling thread (see "Sharding" above).
    pub threads: usize,
    pub progress: Option<&'p dyn Progress>,
    /// Bytes of findings a pass holds in memory before it writes them to temporary
    /// files, shared by its threads; `None`: [`spill::SPILL_BUDGET`]. (Tests make it
    /// tiny to force spilling.)
    pub spill_budget: Option<usize>,
    /// Told each finding as soon as its connection is judged, before it is stored (a
    /// live capture prints them as connections end: `analyze -i`). Findings about
    /// patterns across connections come only at the end, and are not told. In a sharded
    /// pass the stream numbers told are provisional (`PROVISIONAL_STREAM` | first
    /// frame).
    pub on_finding: Option<&'p (dyn Fn(&Finding) + Sync)>,
}

/// How many worker threads a pass on `path` uses when the user did not say: one per core
/// for a large file and for standard input (a live capture piped in, of unknown size),
/// one for small files (read serially, no thread started).
pub fn auto_threads(path: &str) -> usize {
    let large = path == "-" || std::fs::metadata(path).is_ok_and(|m| m.len() >= PARALLEL_MIN_BYTES);
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
    /// [`Tracker::cuts`] of the thread's tracker.
    cuts: Cuts,
}

impl Tally {
    /// The report of a file read by this one thread.
    fn report(self, path: &str, format: String) -> FileReport {
        FileReport {
            cuts: self.cuts,
            ..FileReport::new(
                path,
                format,
                self.frames,
                self.tcp_frames,
                self.skipped,
                self.error,
            )
        }
    }
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

/// The tracker and what consumes its output, packet by packet: the summary of every
/// connection finalised while a packet was processed goes to the sink before that
/// packet's segment (see [`Sink`]).
struct Stage<S> {
    tracker: Tracker,
    sink: S,
    /// `sink.reads_segments()`, asked once.
    events: bool,
}

impl<S: Sink> Stage<S> {
    /// A stage for one of a pass's `shards` trackers: of more than one, it gives
    /// provisional stream ids. The shards share [`MAX_OPEN_HANDSHAKES`] and
    /// [`MAX_LIVE_CONNECTIONS`] (and with it `tcpwhy_track::MAX_CLOSED_TOMBSTONES`), so that
    /// the memory a flood takes does not grow with `-j`.
    fn new(sink: S, shards: usize) -> Self {
        let mut tracker = if shards > 1 {
            Tracker::with_provisional_streams()
        } else {
            Tracker::new()
        };
        let shards = shards.max(1);
        tracker = tracker
            .with_handshake_cap(MAX_OPEN_HANDSHAKES / shards)
            .with_live_cap(MAX_LIVE_CONNECTIONS / shards);
        if !sink.reads_ip_ids() {
            tracker = tracker.without_ip_ids();
        }
        let events = sink.reads_segments();
        Stage {
            tracker,
            sink,
            events,
        }
    }

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

    /// Decodes `frame` and tracks it, or counts why it was skipped. Always inlined into
    /// the frame loops: whether LLVM inlined it changed with unrelated edits (to `flows`,
    /// and with `analyze`'s rendering added to this crate), and the call costs
    /// ≈ 14–25 instructions a frame (callgrind, `flows -j 1` of the 1 M-packet prefix).
    #[inline(always)]
    fn frame(&mut self, frame: &Frame<'_>, t: &mut Tally) {
        // Borrow the decoded packet in place: moving the 136-byte value out of the
        // Result cost a memcpy per frame (measured: ~10 % of the pass).
        let decoded = decode(frame);
        match &decoded {
            Ok(pkt) => {
                t.tcp_frames += 1;
                if frame.ts_untrusted {
                    self.untimed(frame, pkt);
                } else if self.events {
                    self.packet(frame.number, frame.ts, pkt);
                } else {
                    self.track(frame.number, frame.ts, pkt);
                }
            }
            Err(reason) => {
                t.skipped.add_frame(*reason, frame.link);
                if *reason == SkipReason::NotTcp {
                    self.icmp(frame);
                }
            }
        }
    }

    /// A segment at a time that is not its own (`Frame::ts_untrusted`): tracked with no
    /// RTT sample starting or ending at it. Out of line: rare.
    #[cold]
    #[inline(never)]
    fn untimed(&mut self, frame: &Frame<'_>, pkt: &Packet<'_>) {
        self.tracker.time_untrusted(true);
        if self.events {
            self.packet(frame.number, frame.ts, pkt);
        } else {
            self.track(frame.number, frame.ts, pkt);
        }
        self.tracker.time_untrusted(false);
    }

    /// A frame skipped as not TCP may be an ICMP error quoting a segment: the tracker
    /// keeps it as evidence and gives it its `tcp.stream`, as Wireshark does. It stays
    /// counted as skipped (not TCP). Out of line: TCP frames never come here.
    #[cold]
    #[inline(never)]
    fn icmp(&mut self, frame: &Frame<'_>) {
        if let Some(e) = icmp_error(frame) {
            self.tracker.icmp_error(frame.number, frame.ts, &e);
        }
    }

    /// Finalises every connection still open and returns the sink; counts in `t` the
    /// connections its tracker cut and the streams it forgot early.
    fn finish(self, t: &mut Tally) -> S {
        t.cuts += self.tracker.cuts();
        let mut sink = self.sink;
        for c in self.tracker.finish() {
            sink.connection(c);
        }
        sink
    }
}

/// One thread's pass over every frame of `cap` into `sink`.
fn run<S: Sink>(cap: &mut Capture, sink: S, progress: Option<&dyn Progress>) -> (Tally, S) {
    let mut stage = Stage::new(sink, 1);
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
        // The frames of a pcap file in a loop of their own, up to the next progress
        // update; `next_frame` for the rest.
        let until_update = PROGRESS_EVERY - t.frames % PROGRESS_EVERY;
        let plain = cap.plain_frames(until_update, |mut frame| {
            t.frames += 1;
            t.skipped.observe_time(&mut frame);
            stage.frame(&frame, &mut t);
            ControlFlow::Continue(())
        });
        if plain > 0 {
            continue;
        }
        match next_frame(cap) {
            Ok(Some(mut frame)) => {
                t.frames += 1;
                t.skipped.observe_time(&mut frame);
                stage.frame(&frame, &mut t);
            }
            Ok(None) => break None,
            Err(e) => break Some(e),
        }
    };
    let sink = stage.finish(&mut t);
    if let Some(p) = progress {
        p.finish();
    }
    (t, sink)
}

/// Frames a worker of a sharded pass is handed at once: few enough that the batches
/// queued for every worker stay small (see [`QUEUED_BATCHES`]), many enough that the
/// channel costs nothing per frame.
const BATCH_FRAMES: usize = 1024;

/// Captured bytes a batch copied from a stream holds, or of a memory-mapped file spans
/// (its frames' and, between them, other shards'), before it is handed over: with
/// [`BATCH_FRAMES`], one frame may take it past this by at most
/// [`tcpwhy_capture::bounds::MAX_CAPTURED_LEN`] (1 MiB). A file's pages stay mapped from
/// the first frame of the slowest worker's batch on, so this bounds them too, whatever
/// the frames' sizes or a worker's share of them.
const BATCH_BYTES: usize = 256 << 10;

/// Batches waiting for each worker before the reader blocks. The reader tracks a shard
/// too, so while it waits on a full queue, or a worker waits on an empty one, a core
/// idles: the queue absorbs the swings of thousands of frames in the work each side has
/// (bulk transfers and bursts of short connections, fixed to a shard when they open)
/// that weighing new connections ([`REWEIGH`]) cannot. `analyze -j 2` of the bench's
/// 10 M-packet mixed capture, time the reader blocked plus time the worker waited
/// (2 runs each): 16 batches 0.38–0.55 s, 32: 0.12–0.19 s, 48: 0.11–0.15 s, 64:
/// 0.04–0.17 s, at 222–224, 234–237, 242–245 and 243–253 MiB peak RSS (the file's
/// pages the queue spans stay mapped). `flows`, whose reader is the busier side, gains
/// nothing either way. Memory of a sharded pass beyond its trackers: a
/// worker's batches are the queued ones, the one it works on and the one being filled,
/// 32 + 2 = 34 (the reader makes a new batch only when no spent one came back, so no
/// more exist). A batch of a file is 1,024 × 48 bytes of positions, ≈ 1.6 MiB a worker,
/// and keeps the ≤ 256 KiB of the file it spans mapped (+ ≤ 1 MiB when a huge frame ends
/// it; [`BATCH_BYTES`]): ≤ 9 MiB a worker, ≤ 43 MiB at worst. From a stream a batch holds
/// the same bound of copied bytes instead. A memory map is released behind the slowest
/// worker's batch (`MappedBytes::hold_from`).
const QUEUED_BATCHES: usize = 32;

/// How much a shard's weight moves when the reader sees a worker run dry or fall behind
/// ([`Sharder::reweigh`]).
const REWEIGH: f64 = 1.25;

/// Frames the reader of a sharded pass hands one worker: their positions in the memory
/// map, or (a stream) their captured bytes copied into `bytes`, where their positions
/// point. Sent back empty once spent, to be filled again: the pass does not allocate per
/// batch.
struct Batch {
    frames: Vec<FrameAt>,
    bytes: Vec<u8>,
}

impl Batch {
    fn new() -> Self {
        Batch {
            frames: Vec::with_capacity(BATCH_FRAMES),
            bytes: Vec::new(),
        }
    }
}

/// The workers of a sharded pass, as the reader sees them.
#[derive(Clone, Copy)]
struct Workers<'a> {
    /// Each worker's queue of batches.
    senders: &'a [SyncSender<Batch>],
    /// Batches each worker has been sent and not yet finished.
    outstanding: &'a [AtomicUsize],
    /// Batches the workers are done with, to be filled again.
    spent: &'a Receiver<Batch>,
}

/// The reader of a sharded pass: reads every frame of `cap` once, decides its owner with
/// one [`Sharder`] (the owner of its connection, or for a frame without readable
/// endpoints shard `number % shards`), and tracks it in `own` (shard 0, counted in
/// `own_tally`) or hands it to that worker in batches. The owner decodes it and counts it
/// (TCP or skipped). Returns the frames read and where reading stopped; reports progress.
///
/// Why the reader tracks a shard: with a reader beside one worker per core, `-j 2` ran 3
/// threads on 2 cores, and a reader blocked on one worker's full queue left the other
/// worker without frames (the bench's 2 M-packet mixed capture: 22 % of sends blocked and
/// 22 % of receives found the queue empty; 1.46 of 2 cores busy). The reader's own shard
/// is weighed by how its workers keep up (`outstanding`: a worker that ran dry when a
/// batch is sent moves new connections its way, a full queue moves them to the reader;
/// [`REWEIGH`]), because what a frame costs the reader besides tracking (reading,
/// finding the endpoints, batching) depends on the command and the traffic.
fn hand_out<S: Sink>(
    cap: &mut Capture,
    map: Option<&MapSpan>,
    own: &mut Stage<S>,
    own_tally: &mut Tally,
    to: Workers<'_>,
    progress: Option<&dyn Progress>,
) -> Tally {
    let workers = to.senders;
    let mut hand = Handing {
        sharder: Sharder::new(workers.len() + 1),
        filling: workers.iter().map(|_| Batch::new()).collect(),
        own,
        own_tally,
        map,
        to,
    };
    let mut t = Tally::default();
    if let Some(p) = progress {
        p.start(cap.total_bytes());
    }
    t.error = loop {
        if t.frames % PROGRESS_EVERY == 0 {
            if let Some(p) = progress {
                p.update(cap.bytes_read());
            }
        }
        // The frames of a pcap file in a loop of their own, up to the next progress
        // update; `next_frame` for the rest.
        let until_update = PROGRESS_EVERY - t.frames % PROGRESS_EVERY;
        let mut stop = false;
        let plain = cap.plain_frames(until_update, |frame| {
            let flow = hand.frame(frame, &mut t);
            stop = flow.is_break();
            flow
        });
        if stop {
            break None;
        }
        if plain > 0 {
            continue;
        }
        match next_frame(cap) {
            Ok(Some(frame)) => {
                if hand.frame(frame, &mut t).is_break() {
                    break None;
                }
            }
            Ok(None) => break None,
            Err(e) => break Some(e),
        }
    };
    for (batch, to) in hand.filling.into_iter().zip(workers) {
        if !batch.frames.is_empty() {
            let _ = to.send(batch);
        }
    }
    t
}

/// What the reader of a sharded pass keeps to hand frames out ([`hand_out`]).
struct Handing<'a, 'o, S> {
    sharder: Sharder,
    /// The batch being filled for each worker.
    filling: Vec<Batch>,
    own: &'o mut Stage<S>,
    own_tally: &'o mut Tally,
    map: Option<&'a MapSpan>,
    to: Workers<'a>,
}

impl<S: Sink> Handing<'_, '_, S> {
    /// The shard of a frame whose endpoints [`flow_addrs`] could not find: its decoded
    /// segment's, for an ICMP error the owner of the connection it quotes, else shard
    /// `number % shards`.
    #[inline(never)]
    fn unlocated(&mut self, frame: &Frame<'_>) -> usize {
        let shards = self.to.senders.len() + 1;
        match &decode(frame) {
            Ok(pkt) => self.sharder.shard(&FlowAddrs::of(pkt)),
            Err(SkipReason::NotTcp) => match icmp_error(frame) {
                Some(e) => self.sharder.shard(&e.quoted),
                None => (frame.number % shards as u64) as usize,
            },
            Err(_) => (frame.number % shards as u64) as usize,
        }
    }

    /// Hands one frame to its owner's batch; `Break` when that worker is gone (it
    /// panicked: the pass fails when it is joined). Inlined at both of `hand_out`'s
    /// calls: a closure called from both was a call per frame (≈ 31 instructions with
    /// its frame copied in, callgrind).
    #[inline(always)]
    fn frame(&mut self, mut frame: Frame<'_>, t: &mut Tally) -> ControlFlow<()> {
        let Workers {
            senders: workers,
            outstanding,
            spent,
        } = self.to;
        t.frames += 1;
        t.skipped.observe_time(&mut frame);
        // The endpoints alone, before a full decode: as numbers for a plain IPv4 frame,
        // as addresses for the others; the decode only when they cannot be found that way.
        let owner = match plain_ipv4_ends(&frame) {
            Some(e) => self.sharder.shard_v4(e),
            None => match flow_addrs(&frame) {
                Some(a) => self.sharder.shard(&a),
                None => self.unlocated(&frame),
            },
        };
        // Shard 0 is the reader's own.
        let Some(worker) = owner.checked_sub(1) else {
            self.own.frame(&frame, self.own_tally);
            return ControlFlow::Continue(());
        };
        let Some(batch) = self.filling.get_mut(worker) else {
            return ControlFlow::Continue(());
        };
        let bytes = match self.map {
            // An empty frame's bytes may lie outside the map: any position gives them.
            Some(m) => {
                let at = m.offset_of(frame.data).unwrap_or(0);
                batch.frames.push(FrameAt::new(&frame, at));
                // The part of the file the batch spans stays mapped until its worker is
                // done with it.
                at.saturating_sub(batch.frames.first().map_or(at, |f| f.start))
            }
            None => {
                batch.frames.push(FrameAt::new(&frame, batch.bytes.len()));
                batch.bytes.extend_from_slice(frame.data);
                batch.bytes.len()
            }
        };
        if batch.frames.len() >= BATCH_FRAMES || bytes >= BATCH_BYTES {
            let full = std::mem::replace(batch, spent.try_recv().unwrap_or_else(|_| Batch::new()));
            // The worker ran dry: new connections lean its way. Its queue is full: they
            // lean the reader's way.
            if outstanding[worker].fetch_add(1, Ordering::Relaxed) == 0 {
                self.sharder.reweigh(0, REWEIGH);
            }
            let sent = match workers[worker].try_send(full) {
                Err(TrySendError::Full(full)) => {
                    self.sharder.reweigh(0, 1.0 / REWEIGH);
                    workers[worker].send(full).is_ok()
                }
                r => r.is_ok(),
            };
            if !sent {
                return ControlFlow::Break(());
            }
        }
        ControlFlow::Continue(())
    }
}

/// A worker of a sharded pass: decodes and tracks the frames the reader hands it
/// ([`hand_out`]), in the order of the capture, into `sink`.
fn work<S: Sink>(
    batches: Receiver<Batch>,
    outstanding: &AtomicUsize,
    spent: Sender<Batch>,
    map: Option<MappedBytes>,
    sink: S,
    shards: usize,
) -> (Tally, S) {
    let mut stage = Stage::new(sink, shards);
    let mut t = Tally::default();
    for mut batch in batches {
        if let (Some(m), Some(first)) = (&map, batch.frames.first()) {
            m.hold_from(first.start);
        }
        let bytes = map.as_ref().map_or(&batch.bytes[..], MappedBytes::bytes);
        for at in &batch.frames {
            stage.frame(&at.frame(bytes), &mut t);
        }
        batch.frames.clear();
        batch.bytes.clear();
        outstanding.fetch_sub(1, Ordering::Relaxed);
        // The reader gone: nobody needs the batch.
        let _ = spent.send(batch);
    }
    // Nothing more is read from the map: its pages may go.
    drop(map);
    let sink = stage.finish(&mut t);
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

/// A pass over `path` with `threads` workers, each feeding its own sink made by `make`
/// (told its shard and how many there are: `(0, 1)` for a serial pass). One thread reads
/// serially; more are `threads` workers fed by a reader on the calling thread
/// ([`hand_out`], [`work`]).
fn sharded<S: Sink + Send>(
    path: &str,
    opts: &Options<'_>,
    make: impl Fn(usize, usize) -> S + Sync,
) -> Result<Sharded<S>, String> {
    let threads = match opts.threads {
        0 => auto_threads(path),
        n => n,
    };
    if threads <= 1 {
        let mut cap = open(path)?;
        let format = format_name(cap.format());
        let (t, sink) = run(&mut cap, make(0, 1), opts.progress);
        return Ok(Sharded {
            report: t.report(path, format),
            sinks: vec![sink],
        });
    }
    // A file is handed out by position in its memory map; standard input, a pipe or
    // gzip by copies of the frames' bytes.
    let (mut cap, maps) = if path == "-" {
        (open(path)?, Vec::new())
    } else {
        Capture::open_handing_out(Path::new(path), threads - 1)
            .map_err(|e| format!("{path}: {e}"))?
    };
    let locate = maps.first().map(MappedBytes::span);
    let mut maps = maps.into_iter();
    let format = format_name(cap.format());
    let make = &make;
    let outstanding: Vec<AtomicUsize> = (1..threads).map(|_| AtomicUsize::new(0)).collect();
    let (read, results) = std::thread::scope(|scope| {
        let (spent_tx, spent) = channel();
        let mut senders = Vec::with_capacity(threads);
        let handles: Vec<_> = (1..threads)
            .zip(&outstanding)
            .map(|(shard, outstanding)| {
                let (tx, batches) = sync_channel(QUEUED_BATCHES);
                senders.push(tx);
                let (spent, map) = (spent_tx.clone(), maps.next());
                scope.spawn(move || {
                    work(
                        batches,
                        outstanding,
                        spent,
                        map,
                        make(shard, threads),
                        threads,
                    )
                })
            })
            .collect();
        drop(spent_tx);
        let mut own = Stage::new(make(0, threads), threads);
        let mut own_tally = Tally::default();
        let read = hand_out(
            &mut cap,
            locate.as_ref(),
            &mut own,
            &mut own_tally,
            Workers {
                senders: &senders,
                outstanding: &outstanding,
                spent: &spent,
            },
            opts.progress,
        );
        // The workers finish their last batches and end.
        drop(senders);
        let sink = own.finish(&mut own_tally);
        let own = (own_tally, sink);
        let results = handles
            .into_iter()
            .map(|h| h.join())
            .collect::<Result<Vec<_>, _>>()
            .map(|mut r| {
                r.insert(0, own);
                r
            });
        (read, results)
    });
    if let Some(p) = opts.progress {
        p.finish();
    }
    let results = results.map_err(|_| format!("{path}: a worker thread failed"))?;
    // The reader counted the frames, their times and met the error; TCP frames and skips
    // were counted by one worker each.
    let mut report = FileReport::new(path, format, read.frames, 0, read.skipped, read.error);
    let mut sinks = Vec::with_capacity(results.len());
    for (t, sink) in results {
        report.tcp_frames += t.tcp_frames;
        report.cuts += t.cuts;
        report.skipped.merge(&t.skipped);
        sinks.push(sink);
    }
    Ok(Sharded { report, sinks })
}

/// Keeps connection rows for [`flows`] as they end ([`connections`]): as summaries while
/// they fit in the memory budget, beyond it encoded (tens of bytes for a short
/// connection's row) and in temporary files.
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
    let hold = connections::HeldRows::new(budget);
    let s = sharded(path, opts, |me, shards| {
        // At most 256 threads (the command line's bound on -j).
        Rows(connections::RowStore::new(
            budget / shards,
            me as u16,
            hold.clone(),
        ))
    })?;
    let keeping = |e: std::io::Error| format!("{path}: keeping the connections: {e}");
    let mut report = s.report;
    let mut stores = Vec::new();
    for Rows(mut r) in s.sinks {
        if let Some(e) = r.error.take() {
            return Err(keeping(e));
        }
        stores.push(r.seal());
    }
    report.connections = Connections::new(stores).map_err(keeping)?;
    report.stats = report.connections.stats().map_err(keeping)?;
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
    let (t, sink) = run(&mut cap, Each(on_segment, ConnStats::default()), None);
    let mut report = t.report(path, format);
    report.stats = sink.1;
    Ok(report)
}

/// Final `tcp.stream` numbers of a sharded pass: the provisional id of a connection is
/// [`PROVISIONAL_STREAM`] | its first frame, and its number is the count of connections
/// (of every shard) whose first frame came before — what one tracker would have given.
pub struct StreamNumbers {
    /// First frames of every connection, sorted.
    first_frames: Vec<u64>,
    /// Every [`NUMBERS_STEP`]th of them: a lookup searches these, then the step of
    /// `first_frames` they bound. One binary search of the 107 k first frames of the
    /// bench's mixed capture (0.8 MB) missed the cache at most of its 17 probes: 71 % of
    /// the time the report spent reading findings back after a 2-thread pass (perf).
    index: Vec<u64>,
}

/// First frames a [`StreamNumbers`] index entry stands for: 512 bytes of them, a few
/// cache lines to search once the index (1/64 of them) has found the step.
const NUMBERS_STEP: usize = 64;

impl StreamNumbers {
    /// `shards`: each shard's first frames, in any order.
    pub fn new(shards: Vec<Vec<u64>>) -> Self {
        let mut first_frames: Vec<u64> = shards.into_iter().flatten().collect();
        first_frames.sort_unstable();
        let index = first_frames.iter().step_by(NUMBERS_STEP).copied().collect();
        StreamNumbers {
            first_frames,
            index,
        }
    }

    /// The final number of `stream` (unchanged when it is not provisional): the count of
    /// first frames before its own.
    pub fn get(&self, stream: u64) -> u64 {
        if stream & PROVISIONAL_STREAM == 0 {
            return stream;
        }
        let frame = stream & !PROVISIONAL_STREAM;
        // `k` entries of the index are before it: so are all the first frames up to the
        // (k − 1)th entry's, and none from the kth entry's on.
        let k = self.index.partition_point(|&f| f < frame);
        let from = k.saturating_sub(1) * NUMBERS_STEP;
        let to = (k * NUMBERS_STEP).min(self.first_frames.len());
        let within = self
            .first_frames
            .get(from..to)
            .map_or(0, |step| step.partition_point(|&f| f < frame));
        (from + within) as u64
    }
}

/// Where a pass keeps its findings until the end: whole, or rendered by the report's
/// [`Render`] on the thread that found them.
enum Store<'r> {
    Whole(SpillSort<Finding>),
    Rendered(SpillSort<Rendered>, &'r dyn Render),
}

impl Store<'_> {
    fn push(&mut self, f: Finding) -> std::io::Result<()> {
        match self {
            Store::Whole(s) => s.push(&f),
            Store::Rendered(s, render) => s.push(&Rendered::new(f, *render)),
        }
    }

    fn seal(self) -> Sealed {
        match self {
            Store::Whole(s) => Sealed::Whole(s.seal()),
            Store::Rendered(s, _) => Sealed::Rendered(s.seal()),
        }
    }
}

/// A [`Store`] sealed.
enum Sealed {
    Whole(Sorted<Finding>),
    Rendered(Sorted<Rendered>),
}

/// Where a thread judging findings at the end of a pass keeps them
/// ([`Analyzer::finish_into`]).
struct EndPart<'r> {
    store: Store<'r>,
    /// The first error writing the store: the pass fails with it.
    error: Option<std::io::Error>,
}

impl EndPart<'_> {
    fn push(&mut self, f: Finding) {
        if self.error.is_none() {
            self.error = self.store.push(f).err();
        }
    }
}

/// Feeds an [`Analyzer`] and keeps what the report needs of each connection.
struct Analyzing<'r> {
    analyzer: Analyzer,
    stats: ConnStats,
    /// First frames of this shard's connections, to number the streams at the end
    /// (sharded passes only: 8 bytes a connection).
    first_frames: Option<Vec<u64>>,
    /// Where each connection's findings go once it is judged ([`analyze`]); without it
    /// they stay in the analyzer ([`Pass`]).
    store: Option<Store<'r>>,
    /// The first error writing the store (a full disk): the pass fails with it.
    store_error: Option<std::io::Error>,
    /// [`Options::on_finding`].
    on_finding: Option<&'r (dyn Fn(&Finding) + Sync)>,
}

impl<'r> Analyzing<'r> {
    fn new(config: Config, first_frames: bool, store: Option<Store<'r>>) -> Self {
        Analyzing {
            analyzer: Analyzer::new(config),
            stats: ConnStats::default(),
            first_frames: first_frames.then(Vec::new),
            store,
            store_error: None,
            on_finding: None,
        }
    }
}

impl Sink for Analyzing<'_> {
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
                if let Some(tell) = self.on_finding {
                    tell(&f);
                }
                if self.store_error.is_none() {
                    self.store_error = store.push(f).err();
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
    analyze_with(path, opts, config, None)
}

/// [`analyze`], each finding rendered by `render` on the thread that judged it: the
/// report reads them with [`Findings::shown`]. Rendering was the largest part of what
/// a sharded pass did on one thread after its workers (JSON: 308 M of the 358 M
/// instructions `analyze -j 2` spent there on the 1 M-packet prefix of the mixed bench
/// capture, callgrind).
pub fn analyze_rendered(
    path: &str,
    opts: &Options<'_>,
    config: &Config,
    render: &dyn Render,
) -> Result<(FileReport, Findings, Exchanges), String> {
    analyze_with(path, opts, config, Some(render))
}

fn analyze_with(
    path: &str,
    opts: &Options<'_>,
    config: &Config,
    render: Option<&dyn Render>,
) -> Result<(FileReport, Findings, Exchanges), String> {
    let budget = opts.spill_budget.unwrap_or(spill::SPILL_BUDGET);
    let store = |budget: usize| match render {
        None => Store::Whole(SpillSort::new(budget)),
        Some(r) => Store::Rendered(SpillSort::new(budget), r),
    };
    let s = sharded(path, opts, |_, shards| {
        let mut a = Analyzing::new(config.clone(), shards > 1, Some(store(budget / shards)));
        a.on_finding = opts.on_finding;
        a
    })?;
    let mut report = s.report;
    let keeping = |e: std::io::Error| format!("{path}: keeping the findings: {e}");
    // Each shard's store, sealed before its analyzer is absorbed into the first one's.
    // slow_start.new_connection's held first exchanges are judged after the pass, below:
    // judging them on the shards' threads before it ended (s6-s1, 2db104f) raised
    // analyze's peak RSS on the bench's 40 M-packet long capture from 248 MB to 298 MB
    // (-j 1, /usr/bin/time), breaking issue 13's long / mixed ≤ 1.2× target.
    let mut stores = Vec::with_capacity(s.sinks.len());
    let mut frames = Vec::with_capacity(s.sinks.len());
    let mut merged: Option<Analyzing> = None;
    for mut a in s.sinks {
        if let Some(e) = a.store_error.take() {
            return Err(keeping(e));
        }
        let store = a.store.take().unwrap_or_else(|| store(budget));
        stores.push(store.seal());
        frames.push(a.first_frames.take().unwrap_or_default());
        match &mut merged {
            None => merged = Some(a),
            Some(m) => {
                m.stats.merge(&a.stats);
                m.analyzer.absorb(a.analyzer);
            }
        }
    }
    let Some(first) = merged else {
        return Ok((report, Findings::default(), Vec::new()));
    };
    let sharded = frames.len() > 1;
    // Findings reported at the end (about patterns across connections, and the first
    // exchanges new_connection held to judge with later connections' warm windows),
    // on as many threads as the pass had, each into a store of its own as it is judged
    // (rendered, then freed, while fresh in that thread's cache): judged on this thread,
    // held, sorted, then rendered in parts, they were the largest serial step after a
    // 2-thread pass, and rendering two parts took as long as one (0.22 s for 61 k
    // findings on the bench's 10 M-packet mixed capture, each thread reading findings
    // made long before), freeing them another 0.1 s.
    let threads = frames.len().max(1);
    let mut parts: Vec<EndPart> = (0..threads)
        .map(|_| EndPart {
            store: store(budget / threads),
            error: None,
        })
        .collect();
    let mut analysis = first.analyzer.finish_into(&mut parts, &|p, f| p.push(f));
    for p in parts {
        if let Some(e) = p.error {
            return Err(keeping(e));
        }
        stores.push(p.store.seal());
    }
    let numbers = StreamNumbers::new(frames);
    analysis.renumber(|s| numbers.get(s));
    let (mut whole, mut shown) = (Vec::new(), Vec::new());
    for s in stores {
        match s {
            Sealed::Whole(s) => whole.push(s),
            Sealed::Rendered(s) => shown.push(s),
        }
    }
    let findings = Findings::new(
        Sorted::join(whole).map_err(keeping)?,
        Sorted::join(shown).map_err(keeping)?,
        sharded.then_some(numbers),
    );
    report.stats = first.stats;
    Ok((report, findings, analysis.exchanges))
}

/// The pass the tests and fuzz targets make on frames they build themselves: each
/// packet through the tracker and the analyzer, as [`analyze`] does on one thread.
pub struct Pass(Stage<Analyzing<'static>>);

impl Pass {
    pub fn new(config: Config) -> Self {
        Pass(Stage::new(Analyzing::new(config, false, None), 1))
    }

    /// One TCP packet seen at `ts` in frame `frame`.
    pub fn packet(&mut self, frame: u64, ts: Timestamp, pkt: &Packet<'_>) -> SegmentEvent {
        self.0.packet(frame, ts, pkt)
    }

    /// Connections the analyzer holds state for right now.
    pub fn open_connections(&self) -> usize {
        self.0.sink.analyzer.open_connections()
    }

    /// What the tracker's bounds on memory did so far ([`Tracker::cuts`]).
    pub fn cuts(&self) -> Cuts {
        self.0.tracker.cuts()
    }

    /// Ends the pass: every open connection finalised, then the findings.
    pub fn finish(self) -> (ConnStats, tcpwhy_detect::Analysis) {
        let sink = self.0.finish(&mut Tally::default());
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

    /// The index gives what one binary search of every first frame gives, for any count
    /// of them around its steps and any frame: before, after, on or between them.
    #[test]
    fn stream_numbers_through_the_index_are_the_count_of_earlier_first_frames() {
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = move |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        for count in [0, 1, 2, 63, 64, 65, 127, 128, 129, 1000, 4097] {
            let mut frames: Vec<u64> = (0..count).map(|i| 3 * i + next(3)).collect();
            let shards = vec![frames.split_off(count as usize / 3), frames];
            let n = StreamNumbers::new(shards);
            let all = &n.first_frames;
            for frame in (0..3 * count + 5).chain([u64::MAX >> 1]) {
                let want = all.partition_point(|&f| f < frame) as u64;
                assert_eq!(n.get(PROVISIONAL_STREAM | frame), want, "{count}: {frame}");
            }
        }
    }

    /// A pcap file of `frames` Ethernet/IPv4/TCP frames of `payload` bytes each, of two
    /// connections taking turns.
    fn two_connections(frames: u32, payload: usize) -> tempfile::NamedTempFile {
        use std::io::Write;
        let mut f = tempfile::NamedTempFile::new().unwrap();
        // Little-endian pcap, microseconds, snaplen 256 KiB, Ethernet.
        let mut out = vec![0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0];
        out.extend_from_slice(&[0; 8]);
        out.extend_from_slice(&(256u32 << 10).to_le_bytes());
        out.extend_from_slice(&1u32.to_le_bytes());
        for i in 0..frames {
            let port = 40000 + (i % 2) as u16;
            let mut frame = vec![2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2, 0x08, 0x00];
            let ip_len = (20 + 20 + payload) as u16;
            frame.extend_from_slice(&[0x45, 0]);
            frame.extend_from_slice(&ip_len.to_be_bytes());
            frame.extend_from_slice(&[0, 0, 0x40, 0, 64, 6, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2]);
            frame.extend_from_slice(&port.to_be_bytes());
            frame.extend_from_slice(&9000u16.to_be_bytes());
            frame.extend_from_slice(&(1 + i / 2 * payload as u32).to_be_bytes());
            frame.extend_from_slice(&[0, 0, 0, 1, 0x50, 0x18, 0xff, 0xff, 0, 0, 0, 0]);
            frame.resize(frame.len() + payload, 0);
            for field in [1000 + i / 1000, i % 1000 * 1000] {
                out.extend_from_slice(&field.to_le_bytes());
            }
            out.extend_from_slice(&(frame.len() as u32).to_le_bytes());
            out.extend_from_slice(&(frame.len() as u32).to_le_bytes());
            out.extend_from_slice(&frame);
        }
        f.write_all(&out).unwrap();
        f
    }

    /// Keeps nothing.
    struct Nothing;

    impl Sink for Nothing {
        fn connection(&mut self, _: ConnSummary) {}
    }

    /// A batch of a memory-mapped file handed to a worker spans at most [`BATCH_BYTES`]
    /// of the file up to its last frame, whatever its frames' sizes (the pages it spans
    /// stay mapped until its worker is done with it): 16 KiB frames, every second one
    /// the worker's, go in batches of at most 9, not 1,024.
    #[test]
    fn a_batch_of_a_mapped_file_spans_a_bounded_part_of_it() {
        let file = two_connections(600, 16 << 10);
        let (mut cap, maps) = Capture::open_handing_out(file.path(), 1).unwrap();
        let span = maps[0].span();
        let (to, batches) = sync_channel(1000);
        let (_spent_to, spent) = channel();
        let outstanding = [AtomicUsize::new(0)];
        let mut own = Stage::new(Nothing, 2);
        let mut own_tally = Tally::default();
        let read = hand_out(
            &mut cap,
            Some(&span),
            &mut own,
            &mut own_tally,
            Workers {
                senders: std::slice::from_ref(&to),
                outstanding: &outstanding,
                spent: &spent,
            },
            None,
        );
        drop(to);
        let batches: Vec<Batch> = batches.iter().collect();
        let handed: usize = batches.iter().map(|b| b.frames.len()).sum();
        assert_eq!(read.frames, 600);
        assert_eq!(handed as u64 + own_tally.tcp_frames, 600);
        assert!(handed >= 200, "{handed} frames handed to the worker");
        for b in &batches {
            let n = b.frames.len();
            assert!((1..=9).contains(&n), "a batch of {n} frames");
            if n > 1 {
                let before_last = b.frames[n - 2].start - b.frames[0].start;
                assert!(before_last < BATCH_BYTES, "{before_last} bytes spanned");
            }
        }
    }
}
