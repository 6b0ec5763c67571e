//! Kernel settings: `sysctl -a` output or /proc/sys files, as one key → value map with
//! typed accessors for the keys tcpwhy's findings rest on (mechanisms.md "Host state that
//! confirms or refutes a capture diagnosis"). Every other key is kept as its string.

use std::collections::BTreeMap;

use crate::diag::{Diags, Parsed};

/// Most keys kept. `sysctl -a` prints about 1,500 keys on a plain host plus about 60 per
/// interface (net.ipv4.conf.IF.*, net.ipv6.conf.IF.*, neigh): 200,000 covers ~3,000
/// interfaces; past that, keys are dropped with a diagnostic.
pub const MAX_SYSCTL_KEYS: usize = 200_000;

/// Longest key kept (bytes). Real keys are under 100 bytes.
pub const MAX_SYSCTL_KEY_LEN: usize = 256;

/// Longest value kept (bytes). The longest net values (lists of congestion controls,
/// port ranges) are under 200 bytes; a longer value is truncated with a diagnostic.
pub const MAX_SYSCTL_VALUE_LEN: usize = 4096;

/// A `min default max` triple in bytes (net.ipv4.tcp_rmem, tcp_wmem).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BufferTriple {
    pub min_bytes: u64,
    pub default_bytes: u64,
    pub max_bytes: u64,
}

/// net.ipv4.tcp_mem: thresholds in pages (not bytes) for all TCP sockets together
/// (Documentation/networking/ip-sysctl.rst "tcp_mem").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcpMem {
    /// Below this, no regulation of memory use.
    pub low_pages: u64,
    /// Above this, TCP moderates memory use (memory pressure).
    pub pressure_pages: u64,
    /// Hard limit: new allocations fail, sockets can be aborted (TCPAbortOnMemory).
    pub high_pages: u64,
}

/// Kernel settings by dotted key (`net.ipv4.tcp_rmem`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Sysctl {
    /// Every key read, with its value trimmed (multi-value settings keep their
    /// whitespace-separated fields, tabs turned into single spaces).
    pub values: BTreeMap<String, String>,
}

/// Reads `sysctl -a` (or `sysctl net`, `sysctl -a -N`-less) output: `key = value` lines.
/// Lines that are not `key = value` (error lines that went to the same file, blank
/// lines) become diagnostics.
pub fn parse_sysctl_a(text: &str, source: &str) -> Parsed<Sysctl> {
    let mut diags = Diags::new(source);
    let mut out = Sysctl::default();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim_end_matches('\r');
        if line.trim().is_empty() {
            continue;
        }
        // sysctl prints `key = value`; a value may itself contain '=' (rare), so split
        // at the first " = ", falling back to the first '=' (`sysctl -e -N`-style).
        let split = line.split_once(" = ").or_else(|| line.split_once('='));
        let Some((k, v)) = split else {
            diags.line(i + 1, line, "not a `key = value` line");
            continue;
        };
        let key = k.trim();
        if key.is_empty() || key.contains(char::is_whitespace) {
            diags.line(i + 1, line, "not a `key = value` line");
            continue;
        }
        insert(&mut out, &mut diags, i + 1, line, key.to_string(), v);
    }
    diags.wrap(out)
}

/// Reads /proc/sys files given as (path, content) pairs. The path is relative to
/// /proc/sys (`net/ipv4/tcp_mem`; a leading `/proc/sys/` is accepted). As sysctl does,
/// the key swaps '/' and '.' (`net/ipv4/conf/eth0.100/rp_filter` →
/// `net.ipv4.conf.eth0/100.rp_filter`).
pub fn parse_proc_sys<'a, I>(files: I, source: &str) -> Parsed<Sysctl>
where
    I: IntoIterator<Item = (&'a str, &'a str)>,
{
    let mut diags = Diags::new(source);
    let mut out = Sysctl::default();
    for (path, content) in files {
        let rel = path
            .trim_start_matches("/proc/sys/")
            .trim_start_matches('/');
        if rel.is_empty() {
            diags.whole(format!("empty /proc/sys path {path:?}"));
            continue;
        }
        let key: String = rel
            .chars()
            .map(|c| match c {
                '/' => '.',
                '.' => '/',
                c => c,
            })
            .collect();
        insert(&mut out, &mut diags, 1, path, key, content);
    }
    diags.wrap(out)
}

fn insert(out: &mut Sysctl, diags: &mut Diags, line: usize, text: &str, key: String, v: &str) {
    if key.len() > MAX_SYSCTL_KEY_LEN {
        diags.line(line, text, "key longer than MAX_SYSCTL_KEY_LEN, skipped");
        return;
    }
    if out.values.len() >= MAX_SYSCTL_KEYS && !out.values.contains_key(&key) {
        diags.line(line, text, "more than MAX_SYSCTL_KEYS keys, skipped");
        return;
    }
    let mut value = normalize(v);
    if value.len() > MAX_SYSCTL_VALUE_LEN {
        let mut end = MAX_SYSCTL_VALUE_LEN;
        while !value.is_char_boundary(end) {
            end -= 1;
        }
        value.truncate(end);
        diags.line(
            line,
            text,
            "value longer than MAX_SYSCTL_VALUE_LEN, truncated",
        );
    }
    out.values.insert(key, value);
}

/// A value as `values` keeps it: trimmed, fields separated by single spaces.
fn normalize(v: &str) -> String {
    v.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Builds settings in memory (tests, callers that already hold key → value pairs); the
/// values are normalized as the parsers do, without their caps.
impl FromIterator<(String, String)> for Sysctl {
    fn from_iter<I: IntoIterator<Item = (String, String)>>(pairs: I) -> Sysctl {
        let mut out = Sysctl::default();
        for (k, v) in pairs {
            out.insert(k, v);
        }
        out
    }
}

impl Sysctl {
    /// Sets one key (in memory; the value is normalized as the parsers do).
    pub fn insert(&mut self, key: String, value: String) {
        self.values.insert(key, normalize(&value));
    }

    /// The raw value of a dotted key (`net.ipv4.tcp_sack`).
    pub fn get(&self, key: &str) -> Option<&str> {
        self.values.get(key).map(String::as_str)
    }

    /// A single integer value (`None` if absent or not an integer).
    pub fn get_u64(&self, key: &str) -> Option<u64> {
        self.get(key)?.trim().parse().ok()
    }

    /// A 0/1 switch (`None` if absent or another value).
    pub fn get_bool(&self, key: &str) -> Option<bool> {
        match self.get(key)?.trim() {
            "0" => Some(false),
            "1" => Some(true),
            _ => None,
        }
    }

    /// Whitespace-separated integers (`None` if absent or any field is not one).
    pub fn get_u64s(&self, key: &str) -> Option<Vec<u64>> {
        self.get(key)?
            .split_whitespace()
            .map(|f| f.parse().ok())
            .collect()
    }

    fn triple(&self, key: &str) -> Option<[u64; 3]> {
        let v = self.get_u64s(key)?;
        match v[..] {
            [a, b, c] => Some([a, b, c]),
            _ => None,
        }
    }

    /// net.ipv4.tcp_slow_start_after_idle: 1 (default) collapses cwnd to the restart
    /// window after an idle RTO (RFC 5681 §4.1, tcp_cwnd_restart()).
    pub fn tcp_slow_start_after_idle(&self) -> Option<bool> {
        self.get_bool("net.ipv4.tcp_slow_start_after_idle")
    }

    /// net.ipv4.tcp_congestion_control (`cubic`, `bbr`, …).
    pub fn tcp_congestion_control(&self) -> Option<&str> {
        self.get("net.ipv4.tcp_congestion_control")
    }

    /// net.ipv4.tcp_available_congestion_control, split.
    pub fn tcp_available_congestion_control(&self) -> Option<Vec<&str>> {
        Some(
            self.get("net.ipv4.tcp_available_congestion_control")?
                .split_whitespace()
                .collect(),
        )
    }

    /// net.ipv4.tcp_no_metrics_save: 1 = do not cache ssthresh/RTT per destination.
    pub fn tcp_no_metrics_save(&self) -> Option<bool> {
        self.get_bool("net.ipv4.tcp_no_metrics_save")
    }

    /// net.ipv4.tcp_no_ssthresh_metrics_save (newer kernels, from 2020; default 1 =
    /// ssthresh not cached). Absent on older kernels, where ssthresh was cached unless
    /// tcp_no_metrics_save. See [`Sysctl::ssthresh_cached`].
    pub fn tcp_no_ssthresh_metrics_save(&self) -> Option<bool> {
        self.get_bool("net.ipv4.tcp_no_ssthresh_metrics_save")
    }

    /// Whether the kernel caches ssthresh per destination in tcp_metrics (the cause of
    /// slow_start.early_exit on the next connection, seed 01): not when
    /// tcp_no_metrics_save=1; otherwise not when tcp_no_ssthresh_metrics_save=1; a
    /// kernel without the second key caches it. `None` when tcp_no_metrics_save is
    /// unknown.
    pub fn ssthresh_cached(&self) -> Option<bool> {
        if self.tcp_no_metrics_save()? {
            return Some(false);
        }
        Some(!self.tcp_no_ssthresh_metrics_save().unwrap_or(false))
    }

    /// net.ipv4.tcp_window_scaling: 0 caps every window at 65,535 bytes (RFC 7323 §2).
    pub fn tcp_window_scaling(&self) -> Option<bool> {
        self.get_bool("net.ipv4.tcp_window_scaling")
    }

    /// net.ipv4.tcp_rmem (bytes): receive buffer min, default, autotuning max.
    pub fn tcp_rmem(&self) -> Option<BufferTriple> {
        let [a, b, c] = self.triple("net.ipv4.tcp_rmem")?;
        Some(BufferTriple {
            min_bytes: a,
            default_bytes: b,
            max_bytes: c,
        })
    }

    /// net.ipv4.tcp_wmem (bytes): send buffer min, default, autotuning max.
    pub fn tcp_wmem(&self) -> Option<BufferTriple> {
        let [a, b, c] = self.triple("net.ipv4.tcp_wmem")?;
        Some(BufferTriple {
            min_bytes: a,
            default_bytes: b,
            max_bytes: c,
        })
    }

    /// net.core.rmem_max (bytes): the cap on SO_RCVBUF set by an application.
    pub fn core_rmem_max_bytes(&self) -> Option<u64> {
        self.get_u64("net.core.rmem_max")
    }

    /// net.core.wmem_max (bytes): the cap on SO_SNDBUF set by an application.
    pub fn core_wmem_max_bytes(&self) -> Option<u64> {
        self.get_u64("net.core.wmem_max")
    }

    /// net.ipv4.tcp_mem (pages).
    pub fn tcp_mem(&self) -> Option<TcpMem> {
        let [a, b, c] = self.triple("net.ipv4.tcp_mem")?;
        Some(TcpMem {
            low_pages: a,
            pressure_pages: b,
            high_pages: c,
        })
    }

    /// net.ipv4.tcp_early_retrans (default 3). Documentation/networking/ip-sysctl.rst:
    /// 3 or 4 enable tail loss probes; any other value disables them (older kernels used
    /// 1 and 2 for early retransmit without TLP; mechanisms.md: `=2` disables TLP).
    pub fn tcp_early_retrans(&self) -> Option<u64> {
        self.get_u64("net.ipv4.tcp_early_retrans")
    }

    /// Whether tail loss probes are on (tcp_early_retrans 3 or 4, the values
    /// tcp_schedule_loss_probe() accepts).
    pub fn tail_loss_probe_enabled(&self) -> Option<bool> {
        self.tcp_early_retrans().map(|v| v == 3 || v == 4)
    }

    /// net.ipv4.tcp_reordering: initial reordering degree (default 3).
    pub fn tcp_reordering(&self) -> Option<u64> {
        self.get_u64("net.ipv4.tcp_reordering")
    }

    /// net.ipv4.tcp_max_reordering (default 300).
    pub fn tcp_max_reordering(&self) -> Option<u64> {
        self.get_u64("net.ipv4.tcp_max_reordering")
    }

    /// net.ipv4.tcp_recovery: bit mask, 0x1 = RACK loss detection (default 1).
    pub fn tcp_recovery(&self) -> Option<u64> {
        self.get_u64("net.ipv4.tcp_recovery")
    }

    /// net.ipv4.tcp_sack.
    pub fn tcp_sack(&self) -> Option<bool> {
        self.get_bool("net.ipv4.tcp_sack")
    }

    /// net.ipv4.tcp_timestamps: 0 off, 1 on with random offsets (default), 2 on without.
    pub fn tcp_timestamps(&self) -> Option<u64> {
        self.get_u64("net.ipv4.tcp_timestamps")
    }

    /// net.ipv4.tcp_moderate_rcvbuf: 1 (default) lets receive autotuning grow the buffer.
    pub fn tcp_moderate_rcvbuf(&self) -> Option<bool> {
        self.get_bool("net.ipv4.tcp_moderate_rcvbuf")
    }

    /// net.ipv4.tcp_adv_win_scale (default 1 = half the buffer is window; Linux ≥ 6.6
    /// ignores it in favour of a per-socket scaling ratio).
    pub fn tcp_adv_win_scale(&self) -> Option<i64> {
        self.get("net.ipv4.tcp_adv_win_scale")?.trim().parse().ok()
    }

    /// net.ipv4.tcp_notsent_lowat (bytes; 4294967295 = off).
    pub fn tcp_notsent_lowat_bytes(&self) -> Option<u64> {
        self.get_u64("net.ipv4.tcp_notsent_lowat")
    }

    /// net.core.somaxconn: the cap on listen() backlogs (accept queue).
    pub fn core_somaxconn(&self) -> Option<u64> {
        self.get_u64("net.core.somaxconn")
    }

    /// net.ipv4.tcp_max_syn_backlog.
    pub fn tcp_max_syn_backlog(&self) -> Option<u64> {
        self.get_u64("net.ipv4.tcp_max_syn_backlog")
    }

    /// net.core.default_qdisc (`fq_codel`, `fq`, `pfifo_fast`).
    pub fn core_default_qdisc(&self) -> Option<&str> {
        self.get("net.core.default_qdisc")
    }

    /// net.core.rps_sock_flow_entries (0 = RFS off).
    pub fn core_rps_sock_flow_entries(&self) -> Option<u64> {
        self.get_u64("net.core.rps_sock_flow_entries")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_in_memory_like_parsed() {
        let mut s: Sysctl = [(
            "net.ipv4.tcp_mem".to_string(),
            " 42492\t56658  84984 ".to_string(),
        )]
        .into_iter()
        .collect();
        assert_eq!(s.get("net.ipv4.tcp_mem"), Some("42492 56658 84984"));
        let parsed = parse_sysctl_a("net.ipv4.tcp_mem = 42492\t56658\t84984\n", "t").value;
        assert_eq!(s, parsed);
        s.insert("net.ipv4.tcp_window_scaling".into(), "0".into());
        assert_eq!(s.tcp_window_scaling(), Some(false));
        assert_eq!(s.tcp_mem().map(|m| m.pressure_pages), Some(56658));
    }
}
