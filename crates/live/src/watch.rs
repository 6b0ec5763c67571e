//! The state `tcpwhy watch` keeps between samples: the previous sample of every socket,
//! keyed by 4-tuple and socket cookie, and the running summary per finding id. Each
//! [`Watcher::step`] takes a [`Snapshot`] (with its time), pairs every socket with its
//! previous sample, runs the rules and returns one [`SocketReport`] per socket seen in
//! both samples.
//!
//! A socket first seen in a snapshot has no interval yet (its counters cover its whole
//! life, not the interval); one that opened and closed between two samples is never seen.

use crate::rules::{evaluate, Finding, Interval};
use crate::sample::{HostMemory, Snapshot, SockMem, SocketKey, TcpSample};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// One socket over one interval.
#[derive(Debug, Clone)]
pub struct SocketReport {
    pub key: SocketKey,
    pub inode: u32,
    pub elapsed_us: u64,
    /// The socket's `tcp_info` at the end of the interval (what `ss -tin` would show).
    pub tcp: TcpSample,
    pub mem: Option<SockMem>,
    pub congestion: Option<String>,
    /// Δ`tcpi_busy_time`: µs the socket had data in flight or queued.
    pub busy_us: u64,
    /// Bytes sent and received in the interval.
    pub sent_bytes: u64,
    pub received_bytes: u64,
    /// Costliest first.
    pub findings: Vec<Finding>,
}

/// What one step saw.
#[derive(Debug, Clone, Default)]
pub struct Step {
    pub time_us: u64,
    /// Time since the previous snapshot (0 for the first).
    pub elapsed_us: u64,
    pub reports: Vec<SocketReport>,
    /// Sockets (kept by the filter) seen for the first time / gone since the previous
    /// snapshot.
    pub opened: usize,
    pub closed: usize,
    pub host: HostMemory,
    pub skipped: Vec<String>,
}

/// The running total of one finding id.
#[derive(Debug, Clone, Default)]
pub struct SummaryRow {
    pub sockets: BTreeSet<SocketKey>,
    pub cost_us: u64,
    pub intervals: u64,
}

/// Per finding id (catalogue string), over the whole watch.
#[derive(Debug, Clone, Default)]
pub struct Summary {
    pub rows: BTreeMap<&'static str, SummaryRow>,
    pub samples: u64,
    pub sockets_seen: usize,
    /// The most socket keys a row keeps; beyond it only the count of intervals grows.
    pub capped: bool,
}

/// Most socket keys kept per summary row, so a long watch on a busy host stays bounded.
pub const MAX_SUMMARY_SOCKETS: usize = 100_000;

#[derive(Debug, Default)]
pub struct Watcher {
    /// Each socket's last sample: its time, its tcp_info, whether the filter keeps it.
    prev: HashMap<SocketKey, (u64, TcpSample, bool)>,
    prev_time_us: Option<u64>,
    seen: BTreeSet<SocketKey>,
    summary: Summary,
}

impl Watcher {
    pub fn new() -> Watcher {
        Watcher::default()
    }

    /// Pairs `snap` with the previous snapshot. `keep` selects the sockets to report
    /// (`--filter`); the others are still remembered, so a filter never changes deltas.
    pub fn step(&mut self, snap: &Snapshot, keep: impl Fn(&SocketKey) -> bool) -> Step {
        let elapsed_us = self
            .prev_time_us
            .map_or(0, |t| snap.time_us.saturating_sub(t));
        self.prev_time_us = Some(snap.time_us);
        self.summary.samples += 1;
        let mut next = HashMap::with_capacity(snap.sockets.len());
        let mut step = Step {
            time_us: snap.time_us,
            elapsed_us,
            host: snap.host.clone(),
            skipped: snap.skipped.clone(),
            ..Step::default()
        };
        for s in &snap.sockets {
            let Some(tcp) = &s.tcp else { continue };
            let wanted = keep(&s.key);
            match self.prev.get(&s.key) {
                Some((t, prev, _)) if wanted => {
                    let elapsed = snap.time_us.saturating_sub(*t);
                    let findings = evaluate(&Interval {
                        prev,
                        cur: tcp,
                        elapsed_us: elapsed,
                        host: &snap.host,
                        congestion: s.congestion.as_deref(),
                    });
                    for f in &findings {
                        let row = self.summary.rows.entry(f.id.as_str()).or_default();
                        row.cost_us += f.cost_us;
                        row.intervals += 1;
                        if row.sockets.len() < MAX_SUMMARY_SOCKETS {
                            row.sockets.insert(s.key);
                        } else {
                            self.summary.capped = true;
                        }
                    }
                    step.reports.push(SocketReport {
                        key: s.key,
                        inode: s.inode,
                        elapsed_us: elapsed,
                        tcp: tcp.clone(),
                        mem: s.mem,
                        congestion: s.congestion.clone(),
                        busy_us: tcp.busy_us.saturating_sub(prev.busy_us),
                        sent_bytes: tcp.bytes_sent.saturating_sub(prev.bytes_sent),
                        received_bytes: tcp.bytes_received.saturating_sub(prev.bytes_received),
                        findings,
                    });
                }
                Some(_) => {}
                None if wanted => step.opened += 1,
                None => {}
            }
            if wanted && self.seen.len() < MAX_SUMMARY_SOCKETS {
                self.seen.insert(s.key);
            }
            next.insert(s.key, (snap.time_us, tcp.clone(), wanted));
        }
        step.closed = self
            .prev
            .iter()
            .filter(|(k, (_, _, wanted))| *wanted && !next.contains_key(*k))
            .count();
        self.prev = next;
        self.summary.sockets_seen = self.seen.len();
        step.reports.sort_by(|a, b| {
            let cost = |r: &SocketReport| r.findings.iter().map(|f| f.cost_us).sum::<u64>();
            cost(b).cmp(&cost(a)).then(a.key.cmp(&b.key))
        });
        step
    }

    pub fn summary(&self) -> &Summary {
        &self.summary
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample::SocketSample;

    fn sock(port: u16, cookie: u64, tcp: TcpSample) -> SocketSample {
        SocketSample {
            key: SocketKey {
                local: format!("10.9.0.1:{port}").parse().unwrap(),
                remote: "10.9.0.2:5000".parse().unwrap(),
                cookie,
            },
            inode: 1,
            tcp: Some(tcp),
            mem: None,
            congestion: None,
        }
    }

    #[test]
    fn deltas_pair_sockets_by_tuple_and_cookie_and_the_summary_adds_them_up() {
        let mut w = Watcher::new();
        let t0 = TcpSample::default();
        let limited = |us| TcpSample {
            busy_us: us,
            rwnd_limited_us: us,
            ..TcpSample::default()
        };
        let snap = |t, socks| Snapshot {
            time_us: t,
            sockets: socks,
            ..Snapshot::default()
        };
        let s = w.step(&snap(0, vec![sock(1, 7, t0.clone())]), |_| true);
        assert_eq!((s.reports.len(), s.opened), (0, 1));
        let s = w.step(
            &snap(
                1_000_000,
                vec![sock(1, 7, limited(400_000)), sock(2, 8, t0.clone())],
            ),
            |_| true,
        );
        assert_eq!(s.reports.len(), 1);
        assert_eq!(s.reports[0].findings[0].cost_us, 400_000);
        // The same 4-tuple with a new cookie is a new connection: no delta across it.
        let s = w.step(
            &snap(
                2_000_000,
                vec![sock(1, 9, limited(900_000)), sock(2, 8, t0)],
            ),
            |_| true,
        );
        assert_eq!((s.opened, s.closed), (1, 1));
        assert!(s.reports.iter().all(|r| r.findings.is_empty()));
        let row = &w.summary().rows["rwnd.limited"];
        assert_eq!((row.sockets.len(), row.cost_us), (1, 400_000));
        assert_eq!(w.summary().samples, 3);
        // Sockets the filter leaves out are neither reported nor counted as new or gone.
        let only_port_1 = |k: &SocketKey| k.local.port() == 1;
        let s = w.step(
            &snap(
                3_000_000,
                vec![
                    sock(1, 9, TcpSample::default()),
                    sock(2, 8, TcpSample::default()),
                    sock(3, 10, TcpSample::default()),
                ],
            ),
            only_port_1,
        );
        assert_eq!((s.opened, s.closed, s.reports.len()), (0, 0, 1));
        let s = w.step(&snap(4_000_000, vec![]), only_port_1);
        assert_eq!((s.opened, s.closed, s.reports.len()), (0, 1, 0));
    }
}
