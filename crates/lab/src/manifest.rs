//! `manifest.json`, one per scenario run: what was run (every parameter), on what kernel,
//! which files hold the evidence, which finding ids the capture must and must not
//! produce, the key numbers measured by the kernel, and notes wherever the kernel did not
//! do what the scenario intended. A machine-readable contract for the analyzer's tests.

use crate::cli::VantageArg;
use crate::scenario::{self, Check, Evidence, Outcome, Scenario, Status};
use crate::topology::TopologySpec;
use crate::truth::{self, KEY_COUNTERS};
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;

/// Version of this file's layout; bumped when a field changes meaning or goes away.
pub const MANIFEST_VERSION: u32 = 1;

#[derive(Serialize)]
pub struct Manifest {
    pub manifest_version: u32,
    pub scenario: String,
    pub summary: String,
    pub description: String,
    pub status: Status,
    /// True when every check of the kernel's evidence passed.
    pub passed: bool,
    pub must: Vec<String>,
    pub must_not: Vec<String>,
    pub parameters: Parameters,
    pub kernel: String,
    /// UTC, ISO 8601.
    pub date: String,
    pub duration_s: f64,
    pub vantage: String,
    /// Paths relative to this manifest.
    pub files: Vec<String>,
    pub key_numbers: KeyNumbers,
    /// nstat counter deltas over the run, per end: the key counters (zero included) and
    /// every other counter that moved.
    pub nstat_delta: BTreeMap<String, BTreeMap<String, u64>>,
    pub checks: Vec<Check>,
    pub notes: Vec<String>,
}

#[derive(Serialize)]
pub struct Parameters {
    /// `emulator::PathConfig` as given to the emulator.
    pub path: Value,
    /// `workload::WorkloadConfig` as given to both ends.
    pub workload: Value,
    pub topology: TopologySpec,
    /// Namespace sysctls as the kernel reported them after setup.
    pub sysctls: BTreeMap<String, BTreeMap<String, String>>,
    pub snaplen: u32,
}

#[derive(Serialize)]
pub struct KeyNumbers {
    pub rtt_configured_ms: f64,
    /// Per handshake without SYN retransmission, from the capture(s).
    pub rtt_handshake_ms: Vec<f64>,
    pub rtt_handshake_median_ms: Option<f64>,
    pub initial_window_expected_segments: u64,
    pub connections: usize,
    pub syn_retransmissions: u64,
    pub request_latency_ms: Vec<f64>,
    pub response_ms: Vec<f64>,
    pub connect_ms: Vec<f64>,
    pub echo_max_recv_wait_ms: Vec<f64>,
    pub throughput_bytes_per_s: Option<f64>,
    /// TcpRetransSegs per end.
    pub retransmissions: BTreeMap<String, u64>,
    /// Retransmissions the kernel learned were spurious: D-SACKs received and spurious
    /// RTOs detected, at each end.
    pub spurious: BTreeMap<String, BTreeMap<String, u64>>,
    pub tcpdump_dropped: BTreeMap<String, Option<u64>>,
    /// Largest TCP payload in each capture (above the MSS: offload super-segments).
    pub max_payload_bytes: BTreeMap<String, u32>,
    /// Numbers particular to this scenario (what its checks measured).
    pub scenario: BTreeMap<String, Value>,
}

pub struct Inputs<'a> {
    pub s: &'a Scenario,
    pub date_unix: f64,
    pub vantage: VantageArg,
    pub files: Vec<String>,
    pub sysctls: BTreeMap<String, BTreeMap<String, String>>,
    pub ev: &'a Evidence,
    pub outcome: &'a Outcome,
    pub tcpdump_dropped: BTreeMap<String, Option<u64>>,
    pub notes: Vec<String>,
    pub duration_s: f64,
    /// tcpdump's snaplen (262,144 for whole packets).
    pub snaplen: u32,
}

impl Manifest {
    pub fn build(i: Inputs) -> Manifest {
        let ev = i.ev;
        let mut nstat_delta = BTreeMap::new();
        for (label, d) in [("client", &ev.nstat_client), ("server", &ev.nstat_server)] {
            let mut m: BTreeMap<String, u64> = KEY_COUNTERS
                .iter()
                .map(|k| (k.to_string(), truth::counter(d, k)))
                .collect();
            m.extend(d.iter().map(|(k, v)| (k.clone(), *v)));
            nstat_delta.insert(label.to_string(), m);
        }
        let per_end = |name: &str| -> BTreeMap<String, u64> {
            ["client", "server"]
                .iter()
                .map(|s| (s.to_string(), ev.counter(s, name)))
                .collect()
        };
        let mut spurious = BTreeMap::new();
        for side in ["client", "server"] {
            spurious.insert(
                side.to_string(),
                ["TCPDSACKRecv", "TCPSpuriousRTOs"]
                    .iter()
                    .map(|k| (k.to_string(), ev.counter(side, k)))
                    .collect(),
            );
        }
        let rtts = ev.handshake_rtts_ms();
        let mut max_payload = BTreeMap::new();
        if let Some(c) = &ev.capture_client {
            max_payload.insert("client".to_string(), c.max_payload);
        }
        if let Some(c) = &ev.capture_server {
            max_payload.insert("server".to_string(), c.max_payload);
        }
        let hs = ev.handshakes();
        Manifest {
            manifest_version: MANIFEST_VERSION,
            scenario: i.s.name.to_string(),
            summary: i.s.summary.to_string(),
            description: i
                .s
                .description
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" "),
            status: i.s.status,
            passed: i.outcome.passed(),
            must: i.s.must.iter().map(|s| s.to_string()).collect(),
            must_not: i.s.must_not.iter().map(|s| s.to_string()).collect(),
            parameters: Parameters {
                path: i.s.path.clone(),
                workload: i.s.workload.clone(),
                topology: i.s.topology.clone(),
                sysctls: i.sysctls,
                snaplen: i.snaplen,
            },
            kernel: std::fs::read_to_string("/proc/sys/kernel/osrelease")
                .map(|s| s.trim().to_string())
                .unwrap_or_default(),
            date: iso_utc(i.date_unix),
            duration_s: (i.duration_s * 10.0).round() / 10.0,
            vantage: format!("{:?}", i.vantage).to_lowercase(),
            files: i.files,
            key_numbers: KeyNumbers {
                rtt_configured_ms: ev.rtt_configured_ms,
                rtt_handshake_median_ms: scenario::median_of(&rtts),
                rtt_handshake_ms: rtts,
                initial_window_expected_segments: scenario::IW_SEGMENTS,
                connections: hs.len(),
                syn_retransmissions: hs.iter().map(|h| u64::from(h.syns - 1)).sum(),
                request_latency_ms: ev.latencies_ms(),
                response_ms: ev.response_ms(),
                connect_ms: ev.connect_ms(),
                echo_max_recv_wait_ms: ev.echo_max_wait_ms(),
                throughput_bytes_per_s: ev.throughput_bytes_per_s(),
                retransmissions: per_end("TcpRetransSegs"),
                spurious,
                tcpdump_dropped: i.tcpdump_dropped,
                max_payload_bytes: max_payload,
                scenario: i.outcome.key.clone(),
            },
            nstat_delta,
            checks: i.outcome.checks.clone(),
            notes: i.notes,
        }
    }
}

/// Unix seconds → "YYYY-MM-DDTHH:MM:SSZ" (UTC, whole seconds).
pub fn iso_utc(unix: f64) -> String {
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(unix.max(0.0) as u64);
    humantime::format_rfc3339_seconds(t).to_string()
}

#[cfg(test)]
mod tests {
    #[test]
    fn iso_dates() {
        assert_eq!(super::iso_utc(0.0), "1970-01-01T00:00:00Z");
        assert_eq!(super::iso_utc(1_700_000_000.0), "2023-11-14T22:13:20Z");
        assert_eq!(super::iso_utc(951_782_400.0), "2000-02-29T00:00:00Z");
    }
}
