//! The host bundle directory (layout in the crate doc and docs/host-bundle.md) and
//! [`HostState::read_bundle`], which parses every file present. A missing or unreadable
//! file is a diagnostic, never an error: a bundle from a container without `ss` or a
//! non-root user still gives the rest.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;

use crate::counters::{parse_nstat, parse_proc_net, CounterDeltas, Counters};
use crate::diag::{Diagnostic, Parsed};
use crate::link::{parse_ip_link, parse_rps_cpus, Links, RpsQueue};
use crate::sockstat::{parse_sockstat, Sockstat};
use crate::ss::{parse_ss, SsOutput};
use crate::sysctl::{parse_proc_sys, parse_sysctl_a, Sysctl};
use crate::tcp_metrics::{parse_tcp_metrics, TcpMetrics};

/// The layout version this crate reads (manifest `bundle_version`).
pub const BUNDLE_VERSION: u64 = 1;

/// What was collected, when, on which host.
pub const MANIFEST: &str = "manifest.json";
/// `sysctl -a` output.
pub const SYSCTL: &str = "sysctl.txt";
/// Copy of /proc/sys/net (`proc-sys-net/ipv4/tcp_mem`), written when sysctl is missing.
pub const PROC_SYS_NET: &str = "proc-sys-net";
/// /proc/net/sockstat.
pub const SOCKSTAT: &str = "sockstat.txt";
/// /proc/net/sockstat6.
pub const SOCKSTAT6: &str = "sockstat6.txt";
/// /proc/net/netstat (TcpExt, IpExt, MPTcpExt counters).
pub const NETSTAT: &str = "netstat.txt";
/// /proc/net/snmp (Ip, Icmp, Tcp, Udp counters).
pub const SNMP: &str = "snmp.txt";
/// `nstat -asz` output (optional; adds Ip6/Udp6 counters from snmp6).
pub const NSTAT: &str = "nstat.txt";
/// `ss -tinmO` output.
pub const SS: &str = "ss.txt";
/// `ip tcp_metrics show` output.
pub const TCP_METRICS: &str = "tcp_metrics.txt";
/// `ip -d link show` output.
pub const IP_LINK: &str = "ip-link.txt";
/// `rps/IFACE/rx-N`: contents of /sys/class/net/IFACE/queues/rx-N/rps_cpus.
pub const RPS_DIR: &str = "rps";
/// The second snapshot (`tcpwhy collect --interval` / `--after`).
pub const AFTER_DIR: &str = "after";
/// Files the second snapshot repeats, under [`AFTER_DIR`] with the same names.
pub const AFTER_FILES: &[&str] = &[SOCKSTAT, SOCKSTAT6, NETSTAT, SNMP, NSTAT, SS];

/// Largest bundle file read (bytes); the rest is ignored with a diagnostic. Matches the
/// collector's cap (`ss` with 100,000 sockets is ~40 MB).
pub const MAX_BUNDLE_FILE_BYTES: u64 = 64 << 20;

/// Most files read under proc-sys-net/ and rps/ (the collector copies at most 20,000
/// and 4,096).
pub const MAX_PROC_SYS_FILES: usize = 20_000;
pub const MAX_RPS_FILES: usize = 4_096;

/// Deepest directory level walked under proc-sys-net/ (net/ipv4/conf/IF/… is 4).
const MAX_PROC_SYS_DEPTH: usize = 8;

/// Largest /proc/sys file read (bytes); real ones are under 200.
const MAX_PROC_SYS_FILE_BYTES: u64 = 8192;

/// One input as the manifest records it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ManifestInput {
    /// `sysctl -a`, `/proc/net/sockstat` …
    pub source: Option<String>,
    /// `ok` or `missing`.
    pub status: Option<String>,
    pub bytes: Option<u64>,
    /// Why the input is missing.
    pub reason: Option<String>,
    /// A caveat on a written file.
    pub note: Option<String>,
}

/// manifest.json.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Manifest {
    pub bundle_version: Option<u64>,
    pub tool: Option<String>,
    /// RFC 3339 UTC time of the (first) snapshot.
    pub time: Option<String>,
    pub time_unix: Option<f64>,
    pub hostname: Option<String>,
    pub kernel: Option<String>,
    pub root: Option<bool>,
    /// Per bundle path (`sysctl.txt`, `rps/`, `proc-sys-net/`).
    pub inputs: BTreeMap<String, ManifestInput>,
    pub after_time: Option<String>,
    pub after_time_unix: Option<f64>,
    pub after_inputs: BTreeMap<String, ManifestInput>,
}

impl Manifest {
    /// Time between the two snapshots, when both are recorded.
    pub fn interval_ms(&self) -> Option<u64> {
        let d = (self.after_time_unix? - self.time_unix?) * 1000.0;
        (0.0..1e15).contains(&d).then(|| d.round() as u64)
    }
}

/// Reads manifest.json (unknown keys ignored).
pub fn parse_manifest(text: &str, source: &str) -> Parsed<Manifest> {
    let mut diags = crate::diag::Diags::new(source);
    let mut m = Manifest::default();
    let Some(json) = diags.json(text) else {
        return diags.wrap(m);
    };
    let st = |v: &serde_json::Value, k: &str| {
        v.get(k)
            .and_then(|x| x.as_str())
            .map(|s| crate::diag::truncate_to(s, 512).to_string())
    };
    let inputs = |v: Option<&serde_json::Value>| {
        let mut out = BTreeMap::new();
        if let Some(o) = v.and_then(|x| x.as_object()) {
            for (k, x) in o.iter().take(1024) {
                out.insert(
                    crate::diag::truncate_to(k, 256).to_string(),
                    ManifestInput {
                        source: st(x, "source"),
                        status: st(x, "status"),
                        bytes: x.get("bytes").and_then(|b| b.as_u64()),
                        reason: st(x, "reason"),
                        note: st(x, "note"),
                    },
                );
            }
        }
        out
    };
    m.bundle_version = json.get("bundle_version").and_then(|v| v.as_u64());
    if let Some(v) = m.bundle_version {
        if v != BUNDLE_VERSION {
            diags.whole(format!(
                "bundle_version {v}; this reader knows {BUNDLE_VERSION}"
            ));
        }
    }
    m.tool = st(&json, "tool");
    m.time = st(&json, "time");
    m.time_unix = json.get("time_unix").and_then(|v| v.as_f64());
    m.hostname = st(&json, "hostname");
    m.kernel = st(&json, "kernel");
    m.root = json.get("root").and_then(|v| v.as_bool());
    m.inputs = inputs(json.get("inputs"));
    if let Some(a) = json.get("after") {
        m.after_time = st(a, "time");
        m.after_time_unix = a.get("time_unix").and_then(|v| v.as_f64());
        m.after_inputs = inputs(a.get("inputs"));
    }
    diags.wrap(m)
}

/// The counters of one snapshot.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Snapshot {
    pub sockstat: Option<Sockstat>,
    pub sockstat6: Option<Sockstat>,
    /// netstat + snmp + nstat under nstat's names (the /proc files win on a name in
    /// both: they are exact, nstat adds snmp6).
    pub counters: Option<Counters>,
    pub ss: Option<SsOutput>,
}

/// Everything a bundle held.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HostState {
    pub manifest: Option<Manifest>,
    pub sysctl: Option<Sysctl>,
    pub tcp_metrics: Option<TcpMetrics>,
    pub links: Option<Links>,
    pub rps: Vec<RpsQueue>,
    /// The first (or only) snapshot of the counters.
    pub before: Snapshot,
    /// The second snapshot, when the bundle has `after/`.
    pub after: Option<Snapshot>,
}

impl HostState {
    /// Deltas of the counters between the two snapshots (`None` without `after/`).
    pub fn counter_deltas(&self) -> Option<CounterDeltas> {
        let before = self.before.counters.as_ref()?;
        let after = self.after.as_ref()?.counters.as_ref()?;
        let interval = self.manifest.as_ref().and_then(Manifest::interval_ms);
        Some(CounterDeltas::between(before, after, interval))
    }

    /// [`HostState::read_bundle`] for a user who named `dir` as a bundle: refused with
    /// the reason when it is not a directory or holds none of a bundle's files
    /// (manifest.json, sysctl.txt, counters), else the state and its diagnostics as text.
    /// The CLI's `--host`/`--bundle` and the Python package's `host=` say the same.
    pub fn read_bundle_checked(dir: &Path) -> Result<(HostState, Vec<String>), String> {
        if !dir.is_dir() {
            return Err(format!(
                "{}: not a directory (write one with `tcpwhy collect -o {}`)",
                dir.display(),
                dir.display()
            ));
        }
        let (hs, diags) = HostState::read_bundle(dir);
        if hs.manifest.is_none() && hs.sysctl.is_none() && hs.before.counters.is_none() {
            return Err(format!(
                "{}: no manifest.json, sysctl.txt or counters: not a tcpwhy host bundle",
                dir.display()
            ));
        }
        Ok((hs, diags.iter().map(|d| d.to_string()).collect()))
    }

    /// Reads every bundle file present in `dir`. Missing files give a diagnostic (with
    /// the manifest's reason when it has one).
    pub fn read_bundle(dir: &Path) -> (HostState, Vec<Diagnostic>) {
        let mut diags = Vec::new();
        let mut hs = HostState::default();
        if !dir.is_dir() {
            diags.push(Diagnostic::whole(
                &dir.display().to_string(),
                "not a directory: no bundle read",
            ));
            return (hs, diags);
        }
        let mut reader = Reader {
            dir,
            diags: &mut diags,
            manifest: None,
        };
        if let Some(t) = reader.text(MANIFEST, true) {
            let p = parse_manifest(&t, MANIFEST);
            reader.diags.extend(p.diagnostics);
            reader.manifest = Some(p.value);
        }
        if let Some(t) = reader.text(SYSCTL, false) {
            hs.sysctl = Some(reader.keep(parse_sysctl_a(&t, SYSCTL)));
        } else if dir.join(PROC_SYS_NET).is_dir() {
            let files = read_proc_sys(&dir.join(PROC_SYS_NET), reader.diags);
            let refs = files.iter().map(|(p, c)| (p.as_str(), c.as_str()));
            hs.sysctl = Some(reader.keep(parse_proc_sys(refs, PROC_SYS_NET)));
        } else {
            reader.missing(SYSCTL);
        }
        if let Some(t) = reader.text(TCP_METRICS, true) {
            hs.tcp_metrics = Some(reader.keep(parse_tcp_metrics(&t, TCP_METRICS)));
        }
        if let Some(t) = reader.text(IP_LINK, true) {
            hs.links = Some(reader.keep(parse_ip_link(&t, IP_LINK)));
        }
        if dir.join(RPS_DIR).is_dir() {
            hs.rps = read_rps(&dir.join(RPS_DIR), reader.diags);
        } else {
            reader.missing(RPS_DIR);
        }
        hs.before = reader.snapshot("");
        if dir.join(AFTER_DIR).is_dir() {
            hs.after = Some(reader.snapshot(AFTER_DIR));
        }
        hs.manifest = reader.manifest;
        (hs, diags)
    }
}

struct Reader<'a> {
    dir: &'a Path,
    diags: &'a mut Vec<Diagnostic>,
    manifest: Option<Manifest>,
}

impl Reader<'_> {
    fn keep<T>(&mut self, p: Parsed<T>) -> T {
        self.diags.extend(p.diagnostics);
        p.value
    }

    /// A missing file's diagnostic, with the manifest's reason when it gives one.
    fn missing(&mut self, name: &str) {
        let why = self.manifest.as_ref().and_then(|m| {
            let (inputs, key) = match name.strip_prefix("after/") {
                Some(k) => (&m.after_inputs, k),
                None => (&m.inputs, name),
            };
            // Directories are recorded as `rps/`, `proc-sys-net/`.
            inputs
                .get(key)
                .or_else(|| inputs.get(&format!("{key}/")))
                .and_then(|i| i.reason.clone())
        });
        let msg = match why {
            Some(r) => format!("missing ({r})"),
            None => "missing".to_string(),
        };
        self.diags.push(Diagnostic::whole(name, msg));
    }

    /// The text of `name` (relative to the bundle), or `None` (with a diagnostic when
    /// `required`).
    fn text(&mut self, name: &str, required: bool) -> Option<String> {
        let path = self.dir.join(name);
        if !path.is_file() {
            if required {
                self.missing(name);
            }
            return None;
        }
        match read_capped(&path, MAX_BUNDLE_FILE_BYTES) {
            Ok((t, truncated)) => {
                if truncated {
                    self.diags.push(Diagnostic::whole(
                        name,
                        format!("larger than MAX_BUNDLE_FILE_BYTES ({MAX_BUNDLE_FILE_BYTES}); the rest is ignored"),
                    ));
                }
                Some(t)
            }
            Err(e) => {
                self.diags
                    .push(Diagnostic::whole(name, format!("unreadable: {e}")));
                None
            }
        }
    }

    fn snapshot(&mut self, sub: &str) -> Snapshot {
        let name = |f: &str| {
            if sub.is_empty() {
                f.to_string()
            } else {
                format!("{sub}/{f}")
            }
        };
        let mut s = Snapshot::default();
        if let Some(t) = self.text(&name(SOCKSTAT), true) {
            s.sockstat = Some(self.keep(parse_sockstat(&t, &name(SOCKSTAT))));
        }
        if let Some(t) = self.text(&name(SOCKSTAT6), true) {
            s.sockstat6 = Some(self.keep(parse_sockstat(&t, &name(SOCKSTAT6))));
        }
        let mut counters: Option<Counters> = None;
        // nstat first, the exact /proc files over it.
        let nstat_required = !self.dir.join(name(NETSTAT)).is_file();
        for (f, nstat) in [(NSTAT, true), (NETSTAT, false), (SNMP, false)] {
            let n = name(f);
            if let Some(t) = self.text(&n, !nstat || nstat_required) {
                let p = if nstat {
                    parse_nstat(&t, &n)
                } else {
                    parse_proc_net(&t, &n)
                };
                let c = self.keep(p);
                counters.get_or_insert_with(Counters::default).merge(&c);
            }
        }
        s.counters = counters;
        if let Some(t) = self.text(&name(SS), true) {
            s.ss = Some(self.keep(parse_ss(&t, &name(SS))));
        }
        s
    }
}

/// Reads at most `max` bytes; returns the text (invalid UTF-8 replaced) and whether the
/// file was longer.
fn read_capped(path: &Path, max: u64) -> std::io::Result<(String, bool)> {
    let f = std::fs::File::open(path)?;
    let mut buf = Vec::new();
    f.take(max.saturating_add(1)).read_to_end(&mut buf)?;
    let truncated = buf.len() as u64 > max;
    if truncated {
        buf.truncate(max as usize);
    }
    Ok((String::from_utf8_lossy(&buf).into_owned(), truncated))
}

/// (path like `net/ipv4/tcp_mem`, content) for every file under proc-sys-net/, walked
/// without following symlinks, at most [`MAX_PROC_SYS_FILES`].
fn read_proc_sys(root: &Path, diags: &mut Vec<Diagnostic>) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut stack = vec![(root.to_path_buf(), "net".to_string(), 0usize)];
    while let Some((dir, rel, depth)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            diags.push(Diagnostic::whole(
                PROC_SYS_NET,
                format!("{rel}: unreadable directory"),
            ));
            continue;
        };
        let mut entries: Vec<_> = entries.flatten().collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let name = e.file_name().to_string_lossy().into_owned();
            let path = e.path();
            let rel = format!("{rel}/{name}");
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            if meta.is_dir() {
                if depth < MAX_PROC_SYS_DEPTH {
                    stack.push((path, rel, depth + 1));
                }
            } else if meta.is_file() {
                if out.len() >= MAX_PROC_SYS_FILES {
                    diags.push(Diagnostic::whole(
                        PROC_SYS_NET,
                        "more than MAX_PROC_SYS_FILES files, rest skipped",
                    ));
                    return out;
                }
                match read_capped(&path, MAX_PROC_SYS_FILE_BYTES) {
                    Ok((t, _)) => out.push((rel, t)),
                    Err(e) => diags.push(Diagnostic::whole(PROC_SYS_NET, format!("{rel}: {e}"))),
                }
            }
        }
    }
    out
}

/// Every `rps/IFACE/rx-N` file.
fn read_rps(root: &Path, diags: &mut Vec<Diagnostic>) -> Vec<RpsQueue> {
    let mut out = Vec::new();
    let Ok(ifaces) = std::fs::read_dir(root) else {
        diags.push(Diagnostic::whole(RPS_DIR, "unreadable directory"));
        return out;
    };
    let mut ifaces: Vec<_> = ifaces.flatten().collect();
    ifaces.sort_by_key(|e| e.file_name());
    for i in ifaces {
        let iface = i.file_name().to_string_lossy().into_owned();
        let Ok(queues) = std::fs::read_dir(i.path()) else {
            continue;
        };
        let mut queues: Vec<_> = queues.flatten().collect();
        queues.sort_by_key(|e| e.file_name());
        for q in queues {
            if out.len() >= MAX_RPS_FILES {
                diags.push(Diagnostic::whole(
                    RPS_DIR,
                    "more than MAX_RPS_FILES queues, rest skipped",
                ));
                return out;
            }
            let queue = q.file_name().to_string_lossy().into_owned();
            let src = format!("{RPS_DIR}/{iface}/{queue}");
            match read_capped(&q.path(), 4096) {
                Ok((t, _)) => {
                    let p = parse_rps_cpus(&t, &src);
                    diags.extend(p.diagnostics);
                    if let Some(mask) = p.value {
                        out.push(RpsQueue {
                            iface: iface.clone(),
                            queue,
                            mask,
                        });
                    }
                }
                Err(e) => diags.push(Diagnostic::whole(&src, format!("unreadable: {e}"))),
            }
        }
    }
    out
}
