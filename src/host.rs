//! `tcpwhy collect` and the I/O half of `tcpwhy host`: reads the host's TCP state (files
//! under /proc and /sys, and the commands sysctl, ss, ip and nstat) into a bundle
//! directory, in the layout `tcpwhy-hoststate` reads back. Every input is recorded in the
//! bundle's manifest with what was read, or why not; nothing here interprets the values.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tcpwhy_hoststate as bundle;
use tcpwhy_hoststate::{AFTER_DIR, BUNDLE_VERSION};
/// Largest output kept from one command or file: `ss` on a proxy with 100 000 sockets is
/// ~40 MB; a bundle should stay small enough to attach to a ticket.
const MAX_INPUT_BYTES: usize = 64 << 20;
use tcpwhy_hoststate::bundle::{MAX_PROC_SYS_FILES, MAX_RPS_FILES};

/// Where one input comes from.
#[derive(Clone, Copy)]
enum Source {
    /// A command and its arguments; its standard output is the file.
    Command(&'static [&'static str]),
    /// A file copied as it is.
    File(&'static str),
}

/// One input of the bundle: the file it is saved as, and where it comes from.
struct Input {
    file: &'static str,
    source: Source,
    /// Part of the second snapshot (`--interval` / `--after`): bundle::AFTER_FILES.
    counter: bool,
}

/// Every input, in the order they are read (and listed in the manifest).
const INPUTS: &[Input] = &[
    Input {
        file: bundle::SYSCTL,
        source: Source::Command(&["sysctl", "-a"]),
        counter: false,
    },
    Input {
        file: bundle::SOCKSTAT,
        source: Source::File("/proc/net/sockstat"),
        counter: true,
    },
    Input {
        file: bundle::SOCKSTAT6,
        source: Source::File("/proc/net/sockstat6"),
        counter: true,
    },
    Input {
        file: bundle::NETSTAT,
        source: Source::File("/proc/net/netstat"),
        counter: true,
    },
    Input {
        file: bundle::SNMP,
        source: Source::File("/proc/net/snmp"),
        counter: true,
    },
    // -a absolute values, -s do not update nstat's history file (another user's deltas),
    // -z zero counters too (a counter absent from one snapshot is not a zero).
    Input {
        file: bundle::NSTAT,
        source: Source::Command(&["nstat", "-asz"]),
        counter: true,
    },
    Input {
        file: bundle::SS,
        source: Source::Command(&["ss", "-tinmO"]),
        counter: true,
    },
    Input {
        file: bundle::TCP_METRICS,
        source: Source::Command(&["ip", "tcp_metrics", "show"]),
        counter: false,
    },
    Input {
        file: bundle::IP_LINK,
        source: Source::Command(&["ip", "-d", "link", "show"]),
        counter: false,
    },
];

/// What happened to one input.
#[derive(Clone, Debug)]
pub struct Collected {
    /// Path inside the bundle (`sysctl.txt`, `rps/`, `after/nstat.txt` …).
    pub file: String,
    /// `sysctl -a`, `/proc/net/sockstat` …
    pub source: String,
    /// Bytes written, or why nothing (or only part) was.
    pub outcome: Result<u64, String>,
    /// A caveat on a written file (e.g. "not root: 12 keys unreadable").
    pub note: Option<String>,
}

impl Collected {
    fn to_json(&self) -> serde_json::Value {
        let mut v = serde_json::json!({ "source": self.source });
        match &self.outcome {
            Ok(bytes) => {
                v["status"] = "ok".into();
                v["bytes"] = (*bytes).into();
            }
            Err(why) => {
                v["status"] = "missing".into();
                v["reason"] = why.clone().into();
            }
        }
        if let Some(n) = &self.note {
            v["note"] = n.clone().into();
        }
        v
    }
}

/// True when running as root (some sysctls and other users' sockets need it).
fn is_root() -> bool {
    // /proc/self/status "Uid: real effective saved fs".
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .and_then(|l| l.split_whitespace().nth(2).map(|u| u == "0"))
        })
        .unwrap_or(false)
}

/// Runs `argv` and returns its standard output, or why it could not.
fn run_command(argv: &[&str]) -> Result<(Vec<u8>, String), String> {
    let out = Command::new(argv[0])
        .args(&argv[1..])
        .stdin(Stdio::null())
        .env("LC_ALL", "C")
        .output()
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => format!("command not found: {}", argv[0]),
            std::io::ErrorKind::PermissionDenied => format!("not allowed to run {}", argv[0]),
            _ => format!("{}: {e}", argv[0]),
        })?;
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    if !out.status.success() && out.stdout.is_empty() {
        let first = stderr.lines().next().unwrap_or("").trim();
        return Err(format!(
            "{} failed ({}): {first}",
            argv.join(" "),
            out.status
        ));
    }
    Ok((out.stdout, stderr))
}

fn read_limited(path: &Path) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let f = std::fs::File::open(path).map_err(|e| describe_io(path, &e))?;
    let mut buf = Vec::new();
    f.take(MAX_INPUT_BYTES as u64 + 1)
        .read_to_end(&mut buf)
        .map_err(|e| describe_io(path, &e))?;
    Ok(buf)
}

fn describe_io(path: &Path, e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => format!("{} does not exist", path.display()),
        std::io::ErrorKind::PermissionDenied => {
            format!("{}: permission denied (not root?)", path.display())
        }
        _ => format!("{}: {e}", path.display()),
    }
}

/// Writes `bytes` (cut at [`MAX_INPUT_BYTES`]) to `dir/file`.
fn save(dir: &Path, file: &str, mut bytes: Vec<u8>) -> Result<(u64, Option<String>), String> {
    let mut note = None;
    if bytes.len() > MAX_INPUT_BYTES {
        bytes.truncate(MAX_INPUT_BYTES);
        note = Some(format!("cut at {} MiB", MAX_INPUT_BYTES >> 20));
    }
    let path = dir.join(file);
    std::fs::write(&path, &bytes).map_err(|e| format!("writing {}: {e}", path.display()))?;
    Ok((bytes.len() as u64, note))
}

fn collect_one(dir: &Path, input: &Input, root: bool) -> Collected {
    let (source, got) = match input.source {
        Source::Command(argv) => (
            argv.join(" "),
            run_command(argv).map(|(out, err)| (out, Some(err))),
        ),
        Source::File(p) => (p.to_string(), read_limited(Path::new(p)).map(|b| (b, None))),
    };
    let (outcome, mut note) = match got {
        Ok((bytes, stderr)) => {
            let mut note = None;
            // sysctl -a as a user: keys it may not read are printed on stderr.
            if let Some(err) = stderr.filter(|e| !e.trim().is_empty()) {
                let n = err.lines().count();
                let first = err.lines().next().unwrap_or("").trim().to_string();
                note = Some(if root {
                    format!("{n} line(s) on stderr, first: {first}")
                } else {
                    format!("not root: {n} line(s) on stderr, first: {first}")
                });
            }
            match save(dir, input.file, bytes) {
                Ok((n, cut)) => (Ok(n), cut.or(note)),
                Err(e) => (Err(e), None),
            }
        }
        Err(e) => (Err(e), None),
    };
    if input.file == bundle::SS && !root && outcome.is_ok() {
        note.get_or_insert_with(|| "not root: ss shows only this user's sockets' memory".into());
    }
    Collected {
        file: input.file.to_string(),
        source,
        outcome,
        note,
    }
}

/// Copies /proc/sys/net into `dir/proc-sys-net/` (when `sysctl` is missing).
fn copy_proc_sys_net(dir: &Path) -> Collected {
    let root = Path::new("/proc/sys/net");
    let dest = dir.join(bundle::PROC_SYS_NET);
    let mut stack = vec![PathBuf::new()];
    let (mut files, mut bytes, mut unreadable) = (0usize, 0u64, 0usize);
    while let Some(rel) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(root.join(&rel)) else {
            unreadable += 1;
            continue;
        };
        if std::fs::create_dir_all(dest.join(&rel)).is_err() {
            break;
        }
        for e in entries.flatten() {
            let rel = rel.join(e.file_name());
            match e.file_type() {
                Ok(t) if t.is_dir() => stack.push(rel),
                Ok(t) if t.is_file() && files < MAX_PROC_SYS_FILES => {
                    match std::fs::read(root.join(&rel)) {
                        Ok(b) if std::fs::write(dest.join(&rel), &b).is_ok() => {
                            files += 1;
                            bytes += b.len() as u64;
                        }
                        _ => unreadable += 1,
                    }
                }
                _ => {}
            }
        }
    }
    let mut note = format!("{files} files");
    if unreadable > 0 {
        note += &format!(", {unreadable} unreadable (write-only or not root)");
    }
    if files >= MAX_PROC_SYS_FILES {
        note += &format!(", stopped at {MAX_PROC_SYS_FILES}");
    }
    Collected {
        file: format!("{}/", bundle::PROC_SYS_NET),
        source: root.display().to_string(),
        outcome: if files == 0 {
            Err(format!("nothing readable under {}", root.display()))
        } else {
            Ok(bytes)
        },
        note: Some(note),
    }
}

/// Copies every interface's `queues/rx-N/rps_cpus` into `dir/rps/IFACE/rx-N`.
fn copy_rps(dir: &Path) -> Collected {
    let net = Path::new("/sys/class/net");
    let mut copied = 0usize;
    let mut bytes = 0u64;
    let ifaces = match std::fs::read_dir(net) {
        Ok(d) => d,
        Err(e) => {
            return Collected {
                file: format!("{}/", bundle::RPS_DIR),
                source: "/sys/class/net/*/queues/rx-*/rps_cpus".into(),
                outcome: Err(describe_io(net, &e)),
                note: None,
            }
        }
    };
    let mut names: Vec<_> = ifaces.flatten().map(|e| e.file_name()).collect();
    names.sort();
    'outer: for iface in names {
        let queues = net.join(&iface).join("queues");
        let Ok(qs) = std::fs::read_dir(&queues) else {
            continue;
        };
        for q in qs.flatten() {
            let qname = q.file_name();
            if !qname.to_string_lossy().starts_with("rx-") {
                continue;
            }
            if copied >= MAX_RPS_FILES {
                break 'outer;
            }
            if let Ok(b) = std::fs::read(queues.join(&qname).join("rps_cpus")) {
                let d = dir.join(bundle::RPS_DIR).join(&iface);
                if std::fs::create_dir_all(&d).is_ok() && std::fs::write(d.join(&qname), &b).is_ok()
                {
                    copied += 1;
                    bytes += b.len() as u64;
                }
            }
        }
    }
    Collected {
        file: format!("{}/", bundle::RPS_DIR),
        source: "/sys/class/net/*/queues/rx-*/rps_cpus".into(),
        outcome: if copied == 0 {
            Err("no receive queue has an rps_cpus file (kernel without CONFIG_RPS?)".into())
        } else {
            Ok(bytes)
        },
        note: Some(format!("{copied} receive queues")),
    }
}

fn first_line(path: &str) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.lines().next().unwrap_or("").trim().to_string())
}

/// Seconds since the epoch, and the same instant as `YYYY-MM-DDTHH:MM:SSZ`.
fn now() -> (f64, String) {
    let d = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    (d.as_secs_f64(), rfc3339(d.as_secs()))
}

/// UTC calendar time of `secs` since the epoch, `YYYY-MM-DDTHH:MM:SSZ`.
fn rfc3339(secs: u64) -> String {
    humantime::format_rfc3339_seconds(UNIX_EPOCH + std::time::Duration::from_secs(secs)).to_string()
}

fn inputs_json(c: &[Collected]) -> serde_json::Value {
    let mut m = serde_json::Map::new();
    for x in c {
        m.insert(x.file.clone(), x.to_json());
    }
    serde_json::Value::Object(m)
}

fn write_manifest(dir: &Path, m: &serde_json::Value) -> Result<(), String> {
    let path = dir.join(bundle::MANIFEST);
    let text = serde_json::to_string_pretty(m).map_err(|e| e.to_string())?;
    std::fs::write(&path, text + "\n").map_err(|e| format!("writing {}: {e}", path.display()))
}

/// Reads every input into `dir` (created if needed) and writes its manifest.
pub fn collect(dir: &Path) -> Result<Vec<Collected>, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    // A second snapshot left from an earlier collect into the same directory would give
    // deltas against the wrong first one: remove its files (only those).
    let after = dir.join(AFTER_DIR);
    for f in bundle::AFTER_FILES {
        let _ = std::fs::remove_file(after.join(f));
    }
    let _ = std::fs::remove_dir(&after);
    let root = is_root();
    let (unix, time) = now();
    let mut done = Vec::new();
    for input in INPUTS {
        let c = collect_one(dir, input, root);
        if input.file == bundle::SYSCTL && c.outcome.is_err() {
            let copy = copy_proc_sys_net(dir);
            let mut c = c;
            if copy.outcome.is_ok() {
                if let Err(why) = &mut c.outcome {
                    *why += &format!(
                        " (read /proc/sys/net into {}/ instead)",
                        bundle::PROC_SYS_NET
                    );
                }
            }
            done.push(c);
            done.push(copy);
        } else {
            done.push(c);
        }
    }
    done.push(copy_rps(dir));
    let manifest = serde_json::json!({
        "bundle_version": BUNDLE_VERSION,
        "tool": format!("tcpwhy {}", env!("CARGO_PKG_VERSION")),
        "time": time,
        "time_unix": unix,
        "hostname": first_line("/proc/sys/kernel/hostname"),
        "kernel": first_line("/proc/sys/kernel/osrelease"),
        "root": root,
        "inputs": inputs_json(&done),
    });
    write_manifest(dir, &manifest)?;
    Ok(done)
}

/// Reads the counter inputs again into `dir/after/` and records the second time in the
/// manifest (which must exist: the first snapshot comes first).
pub fn collect_after(dir: &Path) -> Result<Vec<Collected>, String> {
    let mpath = dir.join(bundle::MANIFEST);
    let text = std::fs::read_to_string(&mpath).map_err(|e| {
        format!(
            "{}: {e} (run `tcpwhy collect -o {}` first; --after adds the second snapshot)",
            mpath.display(),
            dir.display()
        )
    })?;
    let mut manifest: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", mpath.display()))?;
    let after = dir.join(AFTER_DIR);
    std::fs::create_dir_all(&after).map_err(|e| format!("{}: {e}", after.display()))?;
    let root = is_root();
    let (unix, time) = now();
    let done: Vec<Collected> = INPUTS
        .iter()
        .filter(|i| i.counter)
        .map(|i| collect_one(&after, i, root))
        .collect();
    manifest["after"] = serde_json::json!({
        "time": time,
        "time_unix": unix,
        "inputs": inputs_json(&done),
    });
    write_manifest(dir, &manifest)?;
    Ok(done)
}

/// A first snapshot, `interval` of sleep, a second one.
pub fn collect_twice(dir: &Path, interval: Option<Duration>) -> Result<Vec<Collected>, String> {
    let mut done = collect(dir)?;
    if let Some(d) = interval {
        std::thread::sleep(d);
        done.extend(collect_after(dir)?.into_iter().map(|mut c| {
            c.file = format!("{AFTER_DIR}/{}", c.file);
            c
        }));
    }
    Ok(done)
}

/// A private scratch directory for `tcpwhy host` (removed by [`Scratch`]'s drop).
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new() -> Result<Scratch, String> {
        let base = std::env::temp_dir();
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .subsec_nanos();
        let dir = base.join(format!("tcpwhy-host-{}-{nanos}", std::process::id()));
        // create_dir (not _all) fails if it exists: never write into someone else's dir.
        std::fs::create_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        Ok(Scratch(dir))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// One line per input for the terminal: what was read, or why not.
pub fn summary(done: &[Collected]) -> String {
    let mut out = String::new();
    for c in done {
        let line = match &c.outcome {
            Ok(n) => format!("  {:<18} {:>9} B  {}", c.file, n, c.source),
            Err(why) => format!("  {:<18} {:>9}    {why}", c.file, "-"),
        };
        out.push_str(&line);
        if let Some(n) = &c.note {
            out.push_str(&format!("  ({n})"));
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The inputs read twice are exactly the files the reader expects under after/.
    #[test]
    fn counter_inputs_are_the_after_files() {
        let mine: Vec<&str> = INPUTS
            .iter()
            .filter(|i| i.counter)
            .map(|i| i.file)
            .collect();
        assert_eq!(mine, bundle::AFTER_FILES);
    }

    #[test]
    fn rfc3339_known_instants() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        // date -u -d @1795390548
        assert_eq!(rfc3339(1_795_390_548), "2026-11-22T23:35:48Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
    }
}
