//! `ip tcp_metrics show` text and `ip -j tcp_metrics show` JSON: the per-destination
//! cache (net/ipv4/tcp_metrics.c) that seeds a new connection's ssthresh, RTT and
//! reordering from the last one to the same peer. A cached small ssthresh makes the next
//! connection leave slow start early (slow_start.early_exit; seed 01).
//!
//! Text: `10.0.0.2 age 0.528sec ssthresh 7 cwnd 10 rtt 25414us rttvar 20825us source
//! 10.0.0.1` (iproute2 ≥ 3.x prints rtt in µs with a `us` suffix; a value without a
//! suffix is read as ms, as the oldest releases printed it). A metric the kernel locked
//! (set by `ip route … lock`) is preceded by `lock`. JSON (iproute2 6.x): `age`, `rtt`,
//! `rttvar` in seconds as floats, the others as numbers.

use std::collections::BTreeMap;

use crate::diag::{truncate_to, Diags, Parsed};

/// Most entries kept (the kernel's cache holds at most a few thousand per namespace:
/// tcp_metrics_hash is sized from memory, 16 K buckets × a few entries on large hosts).
pub const MAX_TCP_METRICS: usize = 100_000;

/// Most unknown fields kept per entry.
pub const MAX_TCP_METRICS_UNKNOWN: usize = 16;

/// One cached destination.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TcpMetric {
    /// 1-based line (text) or array index + 1 (JSON).
    pub line: usize,
    pub peer: String,
    pub source: Option<String>,
    /// Time since the entry was last updated (ms).
    pub age_ms: Option<f64>,
    pub rtt_us: Option<u64>,
    pub rttvar_us: Option<u64>,
    /// Cached slow start threshold (segments); absent when not cached.
    pub ssthresh: Option<u32>,
    pub cwnd: Option<u32>,
    pub reordering: Option<u32>,
    pub rto_min_us: Option<u64>,
    /// Names of metrics shown as `lock`ed.
    pub locked: Vec<String>,
    /// Fields not understood: (name, value).
    pub unknown: Vec<(String, String)>,
}

/// Every entry, in order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TcpMetrics {
    pub entries: Vec<TcpMetric>,
}

impl TcpMetrics {
    /// The entry for a peer address (first match).
    pub fn for_peer(&self, peer: &str) -> Option<&TcpMetric> {
        self.entries.iter().find(|e| e.peer == peer)
    }
}

/// `25414us` → 25414; `25ms` / `25` → 25000; `1.5s`/`1.5sec` → 1,500,000.
fn duration_us(s: &str) -> Option<u64> {
    let (num, mult) = if let Some(n) = s.strip_suffix("us") {
        (n, 1.0)
    } else if let Some(n) = s.strip_suffix("ms") {
        (n, 1e3)
    } else if let Some(n) = s.strip_suffix("sec") {
        (n, 1e6)
    } else if let Some(n) = s.strip_suffix('s') {
        (n, 1e6)
    } else {
        (s, 1e3)
    };
    let v: f64 = num.parse().ok()?;
    let us = v * mult;
    (0.0..1.8e19).contains(&us).then(|| us.round() as u64)
}

fn age_ms(s: &str) -> Option<f64> {
    let v: f64 = s
        .strip_suffix("sec")
        .or_else(|| s.strip_suffix('s'))
        .unwrap_or(s)
        .parse()
        .ok()?;
    (v.is_finite() && v >= 0.0).then_some(v * 1000.0)
}

/// Reads `ip tcp_metrics show` text.
pub fn parse_tcp_metrics(text: &str, source: &str) -> Parsed<TcpMetrics> {
    let mut diags = Diags::new(source);
    let mut out = TcpMetrics::default();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim_end_matches('\r');
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        if out.entries.len() >= MAX_TCP_METRICS {
            diags.line(
                i + 1,
                line,
                "more than MAX_TCP_METRICS entries, rest skipped",
            );
            break;
        }
        let mut words = line.split_whitespace();
        let Some(peer) = words.next() else { continue };
        if !peer.contains(['.', ':']) {
            diags.line(i + 1, line, "does not start with a peer address");
            continue;
        }
        let mut m = TcpMetric {
            line: i + 1,
            peer: truncate_to(peer, 64).to_string(),
            ..TcpMetric::default()
        };
        let mut lock_next = false;
        while let Some(key) = words.next() {
            if key == "lock" {
                lock_next = true;
                continue;
            }
            if lock_next && m.locked.len() < MAX_TCP_METRICS_UNKNOWN {
                m.locked.push(truncate_to(key, 32).to_string());
            }
            lock_next = false;
            let Some(val) = words.next() else {
                diags.line(i + 1, line, format!("{key} without a value"));
                break;
            };
            let ok = match key {
                "age" => put(&mut m.age_ms, age_ms(val)),
                "rtt" => put(&mut m.rtt_us, duration_us(val)),
                "rttvar" => put(&mut m.rttvar_us, duration_us(val)),
                "rto_min" => put(&mut m.rto_min_us, duration_us(val)),
                "ssthresh" => put(&mut m.ssthresh, val.parse().ok()),
                "cwnd" => put(&mut m.cwnd, val.parse().ok()),
                "reordering" => put(&mut m.reordering, val.parse().ok()),
                "source" => {
                    m.source = Some(truncate_to(val, 64).to_string());
                    true
                }
                // `fo_syn_drops 1/0.5sec ago`: a trailing `ago` belongs to the field.
                "fo_syn_drops" => {
                    if words.clone().next() == Some("ago") {
                        words.next();
                    }
                    unknown(&mut m, key, val);
                    true
                }
                _ => {
                    unknown(&mut m, key, val);
                    true
                }
            };
            if !ok {
                unknown(&mut m, key, val);
                diags.line(i + 1, line, format!("{key}: {val:?} not understood"));
            }
        }
        out.entries.push(m);
    }
    diags.wrap(out)
}

fn put<T>(slot: &mut Option<T>, v: Option<T>) -> bool {
    match v {
        Some(v) => {
            *slot = Some(v);
            true
        }
        None => false,
    }
}

fn unknown(m: &mut TcpMetric, k: &str, v: &str) {
    if m.unknown.len() < MAX_TCP_METRICS_UNKNOWN {
        m.unknown.push((
            truncate_to(k, 32).to_string(),
            truncate_to(v, 128).to_string(),
        ));
    }
}

/// Reads `ip -j tcp_metrics show` JSON: an array of objects with `dst`, `age`
/// (seconds), `rtt`/`rttvar`/`rto_min` (seconds), `ssthresh`, `cwnd`, `reordering`,
/// `source`.
pub fn parse_tcp_metrics_json(text: &str, source: &str) -> Parsed<TcpMetrics> {
    let mut diags = Diags::new(source);
    let mut out = TcpMetrics::default();
    let Some(arr) = diags.json_array(text) else {
        return diags.wrap(out);
    };
    for (i, e) in arr.iter().enumerate().take(MAX_TCP_METRICS) {
        let Some(obj) = e.as_object() else {
            diags.whole(format!("entry {i}: not an object"));
            continue;
        };
        let Some(peer) = obj.get("dst").and_then(|v| v.as_str()) else {
            diags.whole(format!("entry {i}: no \"dst\""));
            continue;
        };
        let mut m = TcpMetric {
            line: i + 1,
            peer: truncate_to(peer, 64).to_string(),
            ..TcpMetric::default()
        };
        let secs_to_us = |v: &serde_json::Value| {
            v.as_f64()
                .map(|s| s * 1e6)
                .filter(|us| us.is_finite() && *us >= 0.0 && *us < 1.8e19)
                .map(|us| us.round() as u64)
        };
        let small = |v: &serde_json::Value| v.as_u64().and_then(|x| u32::try_from(x).ok());
        let mut fields: BTreeMap<&str, &serde_json::Value> = BTreeMap::new();
        for (k, v) in obj {
            fields.insert(k.as_str(), v);
        }
        for (k, v) in fields {
            match k {
                "dst" => {}
                "age" => m.age_ms = v.as_f64().filter(|x| x.is_finite()).map(|s| s * 1000.0),
                "rtt" => m.rtt_us = secs_to_us(v),
                "rttvar" => m.rttvar_us = secs_to_us(v),
                "rto_min" => m.rto_min_us = secs_to_us(v),
                "ssthresh" => m.ssthresh = small(v),
                "cwnd" => m.cwnd = small(v),
                "reordering" => m.reordering = small(v),
                "source" => m.source = v.as_str().map(|s| truncate_to(s, 64).to_string()),
                _ => {
                    let s = v.to_string();
                    unknown(&mut m, k, &s);
                }
            }
        }
        out.entries.push(m);
    }
    if arr.len() > MAX_TCP_METRICS {
        diags.whole("more than MAX_TCP_METRICS entries, rest skipped");
    }
    diags.wrap(out)
}
