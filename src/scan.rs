//! One pass over a capture: frames → decoded segments → tracker, with skip accounting
//! and a progress bar on a terminal.

use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::path::Path;
use tcpwhy_capture::{
    decode, flow_addrs, Capture, FileFormat, FlowAddrs, Packet, SkipCounts, Timestamp,
};
use tcpwhy_report::flows::{FileReport, ReadError};
use tcpwhy_track::{
    merge_by_stream, merge_shards, ConnSummary, SegmentEvent, Sharder, Tracker, PROVISIONAL_STREAM,
};

/// Frames between progress-bar updates (cheap enough to be invisible on the hot path).
const PROGRESS_EVERY: u64 = 1 << 16;
/// Inputs smaller than this finish too fast for a progress bar to help.
const PROGRESS_MIN_BYTES: u64 = 64 << 20;

/// Opens `path` (`-` is standard input).
pub fn open(path: &str) -> Result<Capture, String> {
    let r = if path == "-" {
        Capture::from_reader(Box::new(std::io::stdin()))
    } else {
        Capture::open(Path::new(path))
    };
    r.map_err(|e| format!("{path}: {e}"))
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

fn progress_bar(cap: &Capture) -> Option<ProgressBar> {
    let total = cap.total_bytes()?;
    if total < PROGRESS_MIN_BYTES || !std::io::stderr().is_terminal() {
        return None;
    }
    let pb = ProgressBar::new(total);
    pb.set_style(
        ProgressStyle::with_template("{bar:40} {bytes}/{total_bytes} {bytes_per_sec} eta {eta}")
            .ok()?,
    );
    Some(pb)
}

/// The next frame, or where and why reading stopped (for the report).
fn next_frame(cap: &mut Capture) -> Result<Option<tcpwhy_capture::Frame<'_>>, ReadError> {
    cap.next_frame().map_err(|e| ReadError {
        message: e.to_string(),
        frame: e.frame,
        offset: e.offset,
    })
}

/// Reads every frame of `path`, feeds TCP segments to a tracker and calls `on_segment`
/// for each; returns the file's report (connections sorted by stream).
pub fn scan(
    path: &str,
    mut on_segment: impl FnMut(u64, Timestamp, &Packet<'_>, &SegmentEvent),
) -> Result<FileReport, String> {
    let mut cap = open(path)?;
    let format = format_name(cap.format());
    let pb = progress_bar(&cap);
    let mut tracker = Tracker::new();
    let mut skipped = SkipCounts::default();
    let mut summaries = Vec::new();
    let (mut frames, mut tcp_frames) = (0u64, 0u64);
    let error = loop {
        let frame = match next_frame(&mut cap) {
            Ok(Some(f)) => f,
            Ok(None) => break None,
            Err(e) => break Some(e),
        };
        frames += 1;
        // Borrow the decoded packet in place: moving the 136-byte value out of the
        // Result cost a memcpy per frame (measured: ~10 % of the pass).
        let decoded = decode(&frame);
        match &decoded {
            Ok(pkt) => {
                tcp_frames += 1;
                let ev = tracker.process(frame.number, frame.ts, pkt);
                on_segment(frame.number, frame.ts, pkt, &ev);
            }
            Err(reason) => skipped.add(*reason),
        }
        if frames % PROGRESS_EVERY == 0 {
            summaries.extend(tracker.drain_finished());
            if let Some(pb) = &pb {
                pb.set_position(cap.bytes_read());
            }
        }
    };
    if let Some(pb) = pb {
        pb.finish_and_clear();
    }
    summaries.extend(tracker.finish());
    Ok(FileReport {
        path: path.to_string(),
        format,
        frames,
        tcp_frames,
        skipped,
        error,
        connections: merge_by_stream(summaries),
    })
}

/// Files smaller than this are read by one thread: starting more costs more than it saves.
const PARALLEL_MIN_BYTES: u64 = 64 << 20;

/// How many threads `flows` uses on `path` when the user did not say: one per core for
/// a large file, one for small files and standard input (a stream can be read once).
pub fn auto_threads(path: &str) -> usize {
    let large = path != "-" && std::fs::metadata(path).is_ok_and(|m| m.len() >= PARALLEL_MIN_BYTES);
    if large {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        1
    }
}

/// Like [`scan`] without per-segment output, on `threads` threads (see [`scan_sharded`]).
pub fn scan_parallel(path: &str, threads: usize) -> Result<FileReport, String> {
    scan_sharded(path, threads, || (), |_, _, _, _, _| {}).map(|s| s.report)
}

/// The result of [`scan_sharded`].
pub struct Sharded<S> {
    /// The file's report, connections sorted by their final stream number.
    pub report: FileReport,
    /// Every shard's state.
    pub states: Vec<S>,
    /// For each of `report.connections`: the shard that tracked it and the stream id its
    /// segments carried there.
    pub owners: Vec<(usize, u64)>,
}

/// A pass on `threads` threads, each with its own per-shard state `S` (made by `make`):
/// `on_segment` sees the segments of the shard's connections in capture order. Returns
/// the file's report, every shard's state (one, for one thread or standard input) and
/// which shard tracked each connection under which stream id: the shards' trackers do not
/// know the final `tcp.stream` numbers, so their segments carry provisional ids
/// ([`Tracker::with_provisional_streams`]).
///
/// Each thread reads every frame of one shared map of the file ([`Capture::open_shared`])
/// and tracks only the connections of its shard, so no packet is handed between threads.
/// Each thread runs the same [`Sharder`] (connections to the least-loaded shard) over every
/// frame's endpoints ([`flow_addrs`], a fraction of a full decode) and fully decodes only
/// its own frames, so every frame is decoded and counted (TCP or skipped) by exactly one
/// thread: the owner of its connection, or for a frame without readable endpoints, thread
/// `number % threads`. All frames of a 4-tuple go to one shard, so a connection (and a
/// later one reusing its ports) is seen whole by one thread. Thread 0 drives the progress
/// bar.
pub fn scan_sharded<S: Send>(
    path: &str,
    threads: usize,
    make: impl Fn() -> S + Sync,
    on_segment: impl Fn(&mut S, u64, Timestamp, &Packet<'_>, &SegmentEvent) + Sync,
) -> Result<Sharded<S>, String> {
    if threads <= 1 || path == "-" {
        let mut state = make();
        let report = scan(path, |frame, ts, pkt, ev| {
            on_segment(&mut state, frame, ts, pkt, ev)
        })?;
        let owners = report.connections.iter().map(|c| (0, c.stream)).collect();
        return Ok(Sharded {
            report,
            states: vec![state],
            owners,
        });
    }
    let caps =
        Capture::open_shared(Path::new(path), threads).map_err(|e| format!("{path}: {e}"))?;
    let format = format_name(caps[0].format());
    type ShardResult<S> = (Vec<ConnSummary>, u64, u64, SkipCounts, Option<ReadError>, S);
    let (make, on_segment) = (&make, &on_segment);
    let results: Vec<ShardResult<S>> = std::thread::scope(|scope| {
        let handles: Vec<_> = caps
            .into_iter()
            .enumerate()
            .map(|(shard, mut cap)| {
                scope.spawn(move || {
                    let first = shard == 0;
                    let pb = if first { progress_bar(&cap) } else { None };
                    let mut tracker = Tracker::with_provisional_streams();
                    let mut state = make();
                    let mut sharder = Sharder::new(threads);
                    let mut skipped = SkipCounts::default();
                    let mut summaries = Vec::new();
                    let (mut frames, mut tcp_frames) = (0u64, 0u64);
                    let error = loop {
                        let frame = match next_frame(&mut cap) {
                            Ok(Some(f)) => f,
                            Ok(None) => break None,
                            Err(e) => break Some(e),
                        };
                        frames += 1;
                        let owner = flow_addrs(&frame).map(|a| sharder.shard(&a));
                        if owner.is_none_or(|o| o == shard) {
                            let decoded = decode(&frame);
                            match &decoded {
                                Ok(pkt) => {
                                    let o =
                                        owner.unwrap_or_else(|| sharder.shard(&FlowAddrs::of(pkt)));
                                    if o == shard {
                                        tcp_frames += 1;
                                        let ev = tracker.process(frame.number, frame.ts, pkt);
                                        on_segment(&mut state, frame.number, frame.ts, pkt, &ev);
                                    }
                                }
                                Err(reason) => {
                                    let o =
                                        owner.unwrap_or((frame.number % threads as u64) as usize);
                                    if o == shard {
                                        skipped.add(*reason);
                                    }
                                }
                            }
                        }
                        if frames % PROGRESS_EVERY == 0 {
                            summaries.extend(tracker.drain_finished());
                            if let Some(pb) = &pb {
                                pb.set_position(cap.bytes_read());
                            }
                        }
                    };
                    if let Some(pb) = pb {
                        pb.finish_and_clear();
                    }
                    summaries.extend(tracker.finish());
                    // Sorting a shard's summaries here, in parallel, leaves `merge_shards`
                    // already-sorted runs (merging by stream twice changes nothing).
                    let summaries = merge_by_stream(summaries);
                    (summaries, frames, tcp_frames, skipped, error, state)
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
    let mut shards = Vec::with_capacity(results.len());
    let mut states = Vec::with_capacity(results.len());
    // A connection's first frame is unique to it: it finds the shard and the provisional
    // id (PROVISIONAL_STREAM | first frame) once the streams have their final numbers.
    let mut owner_of: std::collections::HashMap<u64, usize> = std::collections::HashMap::new();
    let (mut frames, mut tcp_frames, mut skipped, mut error) = (0, 0, SkipCounts::default(), None);
    for (i, (summaries, f, t, s, e, state)) in results.into_iter().enumerate() {
        owner_of.extend(summaries.iter().map(|c| (c.first_frame, i)));
        shards.push(summaries);
        states.push(state);
        tcp_frames += t;
        skipped.merge(&s);
        if i == 0 {
            (frames, error) = (f, e);
        }
    }
    let connections = merge_shards(shards);
    let owners = connections
        .iter()
        .map(|c| {
            let shard = owner_of.get(&c.first_frame).copied().unwrap_or(0);
            (shard, PROVISIONAL_STREAM | c.first_frame)
        })
        .collect();
    let report = FileReport {
        path: path.to_string(),
        format,
        frames,
        tcp_frames,
        skipped,
        error,
        connections,
    };
    Ok(Sharded {
        report,
        states,
        owners,
    })
}
