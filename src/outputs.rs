//! Where the commands that write a file per input (`annotate`, `report`) put it, and
//! standard input made readable twice (their second pass reads the capture again).

use crate::cli::AnalyzeArgs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use tcpwhy_report::analyze::AnalyzeReport;

/// `analyze` with `a`'s options (the same report on standard output, the same exit
/// status), then, for each input, `write(report, input, path)`, which writes the
/// input's file at `path` and returns what to say of it (`tcpwhy: wrote PATH: …` on
/// standard error). `command` names the command in errors; `ext` is the output files'
/// extension when they go into a directory. Standard input is spooled to a temporary
/// file first (the writers read the capture again) and shown as `-`.
pub fn analyze_then_write(
    mut a: AnalyzeArgs,
    out: &Path,
    command: &str,
    ext: &str,
    mut write: impl FnMut(&AnalyzeReport<'_>, &str, &Path) -> Result<String, String>,
) -> Result<ExitCode, String> {
    if out.as_os_str() == "-" {
        return Err(format!(
            "{command} writes a file (-o FILE): standard output carries the report"
        ));
    }
    let (_spool, spooled) = spool_files(&mut a.files)?;
    let outputs = outputs(&a.files, out, spooled.as_deref(), ext)?;
    let mut each = |r: &mut AnalyzeReport<'_>| {
        let input = r.file.path.clone();
        let Some((_, out)) = outputs.iter().find(|(i, _)| *i == input) else {
            return Err(format!("{input}: no output path chosen for it"));
        };
        if spooled.as_deref() == Some(input.as_str()) {
            r.file.path = "-".into();
        }
        let said = write(r, &input, out)?;
        eprintln!("tcpwhy: wrote {}: {said}", out.display());
        Ok(())
    };
    crate::cli::analyze_each(a, Some(&mut each))
}

/// Copies standard input to a temporary file (removed when dropped), which takes as
/// much disk space as the capture.
fn spool_stdin() -> Result<tempfile::NamedTempFile, String> {
    let mut tmp = tempfile::Builder::new()
        .prefix("tcpwhy-stdin-")
        .tempfile()
        .map_err(|e| format!("creating a temporary file for standard input: {e}"))?;
    std::io::copy(&mut std::io::stdin().lock(), tmp.as_file_mut())
        .map_err(|e| format!("copying standard input to {}: {e}", tmp.path().display()))?;
    Ok(tmp)
}

/// Replaces `-` among `files` with a spooled copy of standard input; returns the copy
/// (kept alive as long as the files are read) and its path.
fn spool_files(
    files: &mut [String],
) -> Result<(Option<tempfile::NamedTempFile>, Option<String>), String> {
    let mut spool = None;
    for f in files.iter_mut() {
        if f == "-" {
            let tmp = spool_stdin()?;
            *f = tmp.path().display().to_string();
            spool = Some(tmp);
        }
    }
    let path = spool.as_ref().map(|t| t.path().display().to_string());
    Ok((spool, path))
}

/// `(input, output)` for each input: `out` itself for one input (or `out/NAME.EXT`
/// when it is a directory), `out/NAME.EXT` for several (the directory is created).
/// Refuses to overwrite an input or to write two inputs to one file.
fn outputs(
    files: &[String],
    out: &Path,
    spooled: Option<&str>,
    ext: &str,
) -> Result<Vec<(String, PathBuf)>, String> {
    let into_dir = files.len() > 1 || out.is_dir();
    if files.len() > 1 {
        std::fs::create_dir_all(out)
            .map_err(|e| format!("{}: creating the output directory: {e}", out.display()))?;
    }
    let mut v: Vec<(String, PathBuf)> = Vec::new();
    for f in files {
        let path = if into_dir {
            let name = if spooled == Some(f.as_str()) {
                "stdin".to_string()
            } else {
                stem(f)
            };
            out.join(format!("{name}.{ext}"))
        } else {
            out.to_path_buf()
        };
        if let Some((other, _)) = v.iter().find(|(_, p)| *p == path) {
            return Err(format!(
                "{other} and {f} would both be written to {}: give them one at a time",
                path.display()
            ));
        }
        let same = |a: &Path, b: &Path| matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y);
        if same(Path::new(f), &path) {
            return Err(format!(
                "{}: is an input; write the output elsewhere",
                path.display()
            ));
        }
        v.push((f.clone(), path));
    }
    Ok(v)
}

/// `dir/name.pcap.gz` → `name`.
fn stem(f: &str) -> String {
    let name = Path::new(f)
        .file_name()
        .map_or_else(|| f.to_string(), |n| n.to_string_lossy().into_owned());
    let name = name.strip_suffix(".gz").unwrap_or(&name);
    [".pcapng", ".pcap", ".cap"]
        .iter()
        .find_map(|x| name.strip_suffix(x))
        .unwrap_or(name)
        .to_string()
}

/// A temporary file beside `out`, to be persisted over it once whole: a failed run
/// leaves no half-written output. Created 0666 less the umask, as any program's output
/// (not tempfile's 0600).
pub fn temp_beside(out: &Path, prefix: &str) -> Result<tempfile::NamedTempFile, String> {
    let dir = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut builder = tempfile::Builder::new();
    builder.prefix(prefix);
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
    builder
        .tempfile_in(dir)
        .map_err(|e| format!("{}: creating a temporary file: {e}", dir.display()))
}
