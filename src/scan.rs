//! One pass over a capture: frames → decoded segments → tracker, with skip accounting
//! and a progress bar on a terminal.

use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::path::Path;
use tcpwhy_capture::{decode, Capture, FileFormat, Packet, SkipCounts, Timestamp};
use tcpwhy_report::flows::{FileReport, ReadError};
use tcpwhy_track::{merge_by_stream, merge_shards, SegmentEvent, Tracker};

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
        let frame = match cap.next_frame() {
            Ok(Some(f)) => f,
            Ok(None) => break None,
            Err(e) => {
                break Some(ReadError {
                    message: e.to_string(),
                    frame: e.frame,
                    offset: e.offset,
                })
            }
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

/// Like [`scan`] without per-segment output, on `threads` threads: each maps the file,
/// reads and decodes every frame, and tracks only the connections of its shard
/// ([`Tracker::shard_of`]), so no packet is handed between threads. Thread 0 also
/// counts frames and skips and drives the progress bar.
pub fn scan_parallel(path: &str, threads: usize) -> Result<FileReport, String> {
    if threads <= 1 || path == "-" {
        return scan(path, |_, _, _, _| {});
    }
    let caps = (0..threads)
        .map(|_| open(path))
        .collect::<Result<Vec<_>, _>>()?;
    let format = format_name(caps[0].format());
    type ShardResult = (
        Vec<tcpwhy_track::ConnSummary>,
        u64,
        u64,
        SkipCounts,
        Option<ReadError>,
    );
    let results: Vec<ShardResult> = std::thread::scope(|scope| {
        let handles: Vec<_> = caps
            .into_iter()
            .enumerate()
            .map(|(shard, mut cap)| {
                scope.spawn(move || {
                    let first = shard == 0;
                    let pb = if first { progress_bar(&cap) } else { None };
                    let mut tracker = Tracker::new();
                    let mut skipped = SkipCounts::default();
                    let mut summaries = Vec::new();
                    let (mut frames, mut tcp_frames) = (0u64, 0u64);
                    let error = loop {
                        let frame = match cap.next_frame() {
                            Ok(Some(f)) => f,
                            Ok(None) => break None,
                            Err(e) => {
                                break Some(ReadError {
                                    message: e.to_string(),
                                    frame: e.frame,
                                    offset: e.offset,
                                })
                            }
                        };
                        frames += 1;
                        let decoded = decode(&frame);
                        match &decoded {
                            Ok(pkt) => {
                                tcp_frames += 1;
                                if Tracker::shard_of(pkt, threads) == shard {
                                    tracker.process(frame.number, frame.ts, pkt);
                                }
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
                    (summaries, frames, tcp_frames, skipped, error)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join())
            .collect::<Result<Vec<_>, _>>()
    })
    .map_err(|_| format!("{path}: a worker thread failed"))?;
    let mut shards = Vec::with_capacity(results.len());
    let mut head = None;
    for (summaries, frames, tcp_frames, skipped, error) in results {
        shards.push(summaries);
        head.get_or_insert((frames, tcp_frames, skipped, error));
    }
    let (frames, tcp_frames, skipped, error) = head.unwrap_or_default();
    Ok(FileReport {
        path: path.to_string(),
        format,
        frames,
        tcp_frames,
        skipped,
        error,
        connections: merge_shards(shards),
    })
}
