//! Host bundles for each namespace (`truth/bundle-client/`, `truth/bundle-server/`),
//! written by the real `tcpwhy collect` run inside the namespace, so `tcpwhy host
//! --bundle` and `tcpwhy analyze --host` have matched inputs with the captures: the first
//! snapshot before the workload, the counters again after it (`--after`), and, since the
//! workload's sockets are gone by then, `ss.txt` replaced by the last sampler output taken
//! while they were established (said in the bundle's manifest).

use crate::topology::{Lab, Side};
use std::path::{Path, PathBuf};

/// The `tcpwhy` binary next to this one (`cargo build --release` builds both into the
/// same directory); `None` when it was not built.
pub fn tcpwhy_exe() -> Option<PathBuf> {
    let me = std::env::current_exe().ok()?;
    let t = me.parent()?.join("tcpwhy");
    t.is_file().then_some(t)
}

/// The bundle directory of one side.
pub fn dir(truth: &Path, label: &str) -> PathBuf {
    truth.join(format!("bundle-{label}"))
}

/// `tcpwhy collect -o DIR [--after]` inside the side's namespace.
pub fn collect(lab: &Lab, side: Side, exe: &Path, dir: &Path, after: bool) -> Result<(), String> {
    let (exe, dir) = (exe.to_string_lossy(), dir.to_string_lossy());
    let mut cmd = vec![exe.as_ref(), "collect", "-o", dir.as_ref()];
    if after {
        cmd.push("--after");
    }
    lab.exec_in(side, &cmd).map(|_| ())
}

/// The last sample of the sampler's raw file (`# t_ms=…` headers, then `ss -tinmHO`
/// lines) that shows an established connection to or from `port`: (header, lines).
pub fn last_sample_with(raw: &Path, port: u16) -> Option<(String, String)> {
    let text = std::fs::read_to_string(raw).ok()?;
    let needle = format!(":{port} ");
    let mut samples: Vec<(&str, String)> = Vec::new();
    for line in text.lines() {
        if let Some(h) = line.strip_prefix("# ") {
            samples.push((h, String::new()));
        } else if let Some((_, body)) = samples.last_mut() {
            body.push_str(line);
            body.push('\n');
        }
    }
    samples
        .into_iter()
        .rev()
        .find(|(_, body)| {
            body.lines()
                .any(|l| l.starts_with("ESTAB") && l.contains(&needle))
        })
        .map(|(h, b)| (h.to_string(), b))
}

/// Replaces the bundle file `file` with `text` (state read while or after the workload
/// ran, when the bundle's own reading came before it) and says so in the manifest.
pub fn replace(dir: &Path, file: &str, text: &str, source: &str, note: &str) -> Result<(), String> {
    std::fs::write(dir.join(file), text).map_err(|e| format!("{file}: {e}"))?;
    let mpath = dir.join("manifest.json");
    let mtext = std::fs::read_to_string(&mpath).map_err(|e| format!("{}: {e}", mpath.display()))?;
    let mut m: serde_json::Value =
        serde_json::from_str(&mtext).map_err(|e| format!("{}: {e}", mpath.display()))?;
    m["inputs"][file] = serde_json::json!({
        "source": source,
        "status": "ok",
        "bytes": text.len(),
        "note": format!("tcpwhy-lab: {note}"),
    });
    let out = serde_json::to_string_pretty(&m).map_err(|e| e.to_string())?;
    std::fs::write(&mpath, out + "\n").map_err(|e| format!("{}: {e}", mpath.display()))
}
