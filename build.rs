//! Build script: the commit the binary is built from, for `tcpwhy --version`. Read from
//! the git work tree with `git` (no network); a build outside one (a source tarball, a
//! crate) says "commit unknown" rather than failing.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let s = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (!s.is_empty()).then_some(s)
}

fn main() {
    let commit = git(&["rev-parse", "--short=12", "HEAD"]);
    // No "modified" flag: this script reruns only when HEAD moves (below), so a flag for
    // uncommitted changes would go stale as files are edited.
    let what = commit.map_or("commit unknown".to_string(), |c| format!("commit {c}"));
    println!(
        "cargo:rustc-env=TCPWHY_VERSION={} ({what})",
        env!("CARGO_PKG_VERSION")
    );
    // Run again when HEAD moves (a commit, a checkout); the paths work in a linked
    // worktree too, where .git is a file.
    for path in ["HEAD", "packed-refs"] {
        if let Some(p) = git(&["rev-parse", "--git-path", path]) {
            println!("cargo:rerun-if-changed={p}");
        }
    }
    if let Some(r) = git(&["symbolic-ref", "-q", "HEAD"]) {
        if let Some(p) = git(&["rev-parse", "--git-path", &r]) {
            println!("cargo:rerun-if-changed={p}");
        }
    }
}
