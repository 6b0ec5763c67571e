//! Kernel SNMP/MIB counters under nstat's names (`TcpExtTCPLossProbes`,
//! `TcpRetransSegs`), from `nstat -az` text, `nstat -az --json`, or the raw
//! /proc/net/netstat and /proc/net/snmp files (a header line of names and a line of values
//! per group: `TcpExt: SyncookiesSent …` / `TcpExt: 0 …` → `TcpExtSyncookiesSent`), and
//! the deltas between two snapshots (counters are cumulative since boot, so only a delta
//! says what happened during a capture; mechanisms.md).

use std::collections::BTreeMap;

use crate::diag::{Diags, Parsed};

/// Most counters kept. Linux 6.x `nstat -az` prints about 400; /proc/net/snmp6 and
/// per-interface files could add some hundreds more.
pub const MAX_COUNTERS: usize = 8192;

/// Longest counter name kept (bytes). Real names are under 40 bytes.
pub const MAX_COUNTER_NAME_LEN: usize = 128;

/// nstat names of the counters mechanisms.md lists as confirming a diagnosis.
pub mod names {
    pub const TCP_LOSS_PROBES: &str = "TcpExtTCPLossProbes";
    pub const TCP_LOSS_PROBE_RECOVERY: &str = "TcpExtTCPLossProbeRecovery";
    pub const TCP_SPURIOUS_RTOS: &str = "TcpExtTCPSpuriousRTOs";
    pub const TCP_DSACK_RECV: &str = "TcpExtTCPDSACKRecv";
    pub const TCP_SACK_REORDER: &str = "TcpExtTCPSACKReorder";
    pub const TCP_FAST_RETRANS: &str = "TcpExtTCPFastRetrans";
    pub const TCP_TIMEOUTS: &str = "TcpExtTCPTimeouts";
    pub const TCP_MEMORY_PRESSURES: &str = "TcpExtTCPMemoryPressures";
    pub const TCP_ABORT_ON_MEMORY: &str = "TcpExtTCPAbortOnMemory";
    pub const LISTEN_OVERFLOWS: &str = "TcpExtListenOverflows";
    pub const LISTEN_DROPS: &str = "TcpExtListenDrops";
    pub const TCP_SYN_RETRANS: &str = "TcpExtTCPSynRetrans";
    pub const TCP_RETRANS_SEGS: &str = "TcpRetransSegs";
    pub const TCP_OUT_SEGS: &str = "TcpOutSegs";
    pub const TCP_IN_SEGS: &str = "TcpInSegs";
    pub const TCP_OFO_QUEUE: &str = "TcpExtTCPOFOQueue";
    pub const TCP_RCV_Q_DROP: &str = "TcpExtTCPRcvQDrop";
    pub const TCP_ZERO_WINDOW_DROP: &str = "TcpExtTCPZeroWindowDrop";
    pub const TCP_TS_REORDER: &str = "TcpExtTCPTSReorder";
    pub const TCP_RENO_REORDER: &str = "TcpExtTCPRenoReorder";
    pub const TCP_DELIVERED: &str = "TcpExtTCPDelivered";
}

/// One snapshot of counters by nstat name. Values are unsigned as nstat prints them: a
/// negative value in /proc/net/snmp (`Tcp: MaxConn -1`) wraps as nstat's `%llu` does.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    pub values: BTreeMap<String, u64>,
}

impl Counters {
    /// A counter by nstat name.
    pub fn get(&self, name: &str) -> Option<u64> {
        self.values.get(name).copied()
    }

    /// Adds `other`'s counters (its values win on a name in both).
    pub fn merge(&mut self, other: &Counters) {
        for (k, v) in &other.values {
            if self.values.len() < MAX_COUNTERS || self.values.contains_key(k) {
                self.values.insert(k.clone(), *v);
            }
        }
    }

    fn put(&mut self, diags: &mut Diags, line: usize, text: &str, name: String, v: u64) {
        if name.len() > MAX_COUNTER_NAME_LEN {
            diags.line(line, text, "counter name longer than MAX_COUNTER_NAME_LEN");
        } else if self.values.len() >= MAX_COUNTERS && !self.values.contains_key(&name) {
            diags.line(line, text, "more than MAX_COUNTERS counters, skipped");
        } else {
            self.values.insert(name, v);
        }
    }
}

/// A counter value as nstat reads it: unsigned, a negative number wrapping.
fn parse_value(s: &str) -> Option<u64> {
    if let Ok(v) = s.parse::<u64>() {
        return Some(v);
    }
    s.parse::<i64>().ok().map(|v| v as u64)
}

/// Reads `nstat -az` (or `nstat -a`, `nstat`) text: `#kernel` then `Name value rate`
/// lines. Also reads /proc/net/snmp6-style `Name value` lines.
pub fn parse_nstat(text: &str, source: &str) -> Parsed<Counters> {
    let mut diags = Diags::new(source);
    let mut out = Counters::default();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim_end_matches('\r');
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let mut words = line.split_whitespace();
        let (Some(name), Some(value)) = (words.next(), words.next()) else {
            diags.line(i + 1, line, "not a `Name value [rate]` line");
            continue;
        };
        let Some(v) = parse_value(value) else {
            diags.line(i + 1, line, format!("{value:?} is not a counter value"));
            continue;
        };
        out.put(&mut diags, i + 1, line, name.to_string(), v);
    }
    diags.wrap(out)
}

/// Reads `nstat -az --json` output: `{"kernel":{"Name":value,…}}` (a top-level object
/// of counters is accepted too).
pub fn parse_nstat_json(text: &str, source: &str) -> Parsed<Counters> {
    let mut diags = Diags::new(source);
    let mut out = Counters::default();
    let Some(json) = diags.json(text) else {
        return diags.wrap(out);
    };
    let obj = match json.get("kernel").and_then(|k| k.as_object()) {
        Some(o) => o,
        None => match json.as_object() {
            Some(o) => o,
            None => {
                diags.whole("not a JSON object of counters");
                return diags.wrap(out);
            }
        },
    };
    for (name, v) in obj {
        let value = v
            .as_u64()
            .or_else(|| v.as_i64().map(|x| x as u64))
            .or_else(|| v.as_str().and_then(parse_value));
        match value {
            Some(x) => out.put(&mut diags, 0, name, name.clone(), x),
            None => diags.whole(format!("counter {name:?}: not a number")),
        }
    }
    diags.wrap(out)
}

/// Reads /proc/net/netstat or /proc/net/snmp: pairs of `Group: names…` and
/// `Group: values…` lines, named `GroupName` as nstat does. A pair whose counts differ
/// keeps the common prefix and says so; a value line without its header is skipped.
pub fn parse_proc_net(text: &str, source: &str) -> Parsed<Counters> {
    let mut diags = Diags::new(source);
    let mut out = Counters::default();
    // The pending header: (line number, group, names).
    let mut header: Option<(usize, &str, Vec<&str>)> = None;
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim_end_matches('\r');
        if line.trim().is_empty() {
            continue;
        }
        let Some((group, rest)) = line.split_once(':') else {
            diags.line(i + 1, line, "no `Group:` prefix");
            continue;
        };
        let group = group.trim();
        let mut words = rest.split_whitespace().peekable();
        let is_values = words
            .peek()
            .is_some_and(|w| w.starts_with(|c: char| c.is_ascii_digit() || c == '-'));
        if !is_values {
            if let Some((l, g, _)) = header.take() {
                diags.line(l, g, "header line without a value line");
            }
            let names: Vec<&str> = words.take(MAX_COUNTERS).collect();
            header = Some((i + 1, group, names));
            continue;
        }
        let Some((_, hgroup, names)) = header.take() else {
            diags.line(i + 1, line, "value line without a header line");
            continue;
        };
        if hgroup != group {
            diags.line(
                i + 1,
                line,
                format!("value line of {group:?} after the header of {hgroup:?}"),
            );
            continue;
        }
        let mut n = 0usize;
        for (name, value) in names.iter().zip(words.by_ref()) {
            n += 1;
            match parse_value(value) {
                Some(v) => out.put(&mut diags, i + 1, line, format!("{group}{name}"), v),
                None => diags.line(
                    i + 1,
                    line,
                    format!("{group}{name}: {value:?} is not a number"),
                ),
            }
        }
        if n != names.len() || words.next().is_some() {
            diags.line(
                i + 1,
                line,
                format!(
                    "{group}: {} names but a different number of values",
                    names.len()
                ),
            );
        }
    }
    if let Some((l, g, _)) = header {
        diags.line(l, g, "header line without a value line");
    }
    diags.wrap(out)
}

/// Change of every counter present in both snapshots, and the time between them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CounterDeltas {
    /// after − before, signed: most counters only grow, but gauges (TcpCurrEstab) and a
    /// counter reset (reboot between snapshots) can go down.
    pub deltas: BTreeMap<String, i64>,
    /// Time between the snapshots, when known (bundle manifest).
    pub interval_ms: Option<u64>,
}

impl CounterDeltas {
    /// Deltas from `before` to `after`; counters in only one snapshot are left out.
    pub fn between(before: &Counters, after: &Counters, interval_ms: Option<u64>) -> Self {
        let deltas = after
            .values
            .iter()
            .filter_map(|(k, a)| {
                let b = before.values.get(k)?;
                // Wrapping then reinterpreting gives the right signed delta for any
                // change smaller than 2^63, including a gauge going down.
                Some((k.clone(), a.wrapping_sub(*b) as i64))
            })
            .collect();
        CounterDeltas {
            deltas,
            interval_ms,
        }
    }

    /// The change of one counter.
    pub fn get(&self, name: &str) -> Option<i64> {
        self.deltas.get(name).copied()
    }

    /// The change per second, when the interval is known and not zero.
    pub fn per_second(&self, name: &str) -> Option<f64> {
        let ms = self.interval_ms.filter(|&ms| ms > 0)?;
        Some(self.get(name)? as f64 * 1000.0 / ms as f64)
    }

    /// Counters that changed, largest change first (ties by name).
    pub fn changed(&self) -> Vec<(&str, i64)> {
        let mut v: Vec<(&str, i64)> = self
            .deltas
            .iter()
            .filter(|(_, d)| **d != 0)
            .map(|(k, d)| (k.as_str(), *d))
            .collect();
        v.sort_by(|a, b| {
            b.1.unsigned_abs()
                .cmp(&a.1.unsigned_abs())
                .then(a.0.cmp(b.0))
        });
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A value line with fewer values than names keeps the common prefix and says so;
    /// a value line without its header is skipped with its line number.
    #[test]
    fn mismatched_proc_lines() {
        let p = parse_proc_net("Tcp: A B C\nTcp: 1 2\nUdp: 5 6\n", "snmp.txt");
        assert_eq!(p.value.get("TcpA"), Some(1));
        assert_eq!(p.value.get("TcpB"), Some(2));
        assert_eq!(p.value.get("TcpC"), None);
        let lines: Vec<Option<usize>> = p.diagnostics.iter().map(|d| d.line).collect();
        assert_eq!(lines, vec![Some(2), Some(3)]);
    }

    /// A gauge going down gives a negative delta; a counter only in one snapshot is left
    /// out; no interval, no rate.
    #[test]
    fn deltas() {
        let a = parse_nstat(
            "TcpCurrEstab 10 0.0\nTcpOutSegs 100 0.0\nOnlyBefore 1 0.0\n",
            "a",
        )
        .value;
        let b = parse_nstat("TcpCurrEstab 4 0.0\nTcpOutSegs 350 0.0\n", "b").value;
        let d = CounterDeltas::between(&a, &b, Some(500));
        assert_eq!(d.get("TcpCurrEstab"), Some(-6));
        assert_eq!(d.get("OnlyBefore"), None);
        assert_eq!(d.per_second("TcpOutSegs"), Some(500.0));
        assert_eq!(d.changed(), vec![("TcpOutSegs", 250), ("TcpCurrEstab", -6)]);
        assert_eq!(
            CounterDeltas::between(&a, &b, None).per_second("TcpOutSegs"),
            None
        );
    }
}
