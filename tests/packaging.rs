//! What an install is made of (issue 18): `--version` names the commit, and the man
//! pages and completions that `tcpwhy assets` generates from the CLI definition cover
//! every visible subcommand and complete as a shell would. `.ci/run` builds, installs
//! and checks the Debian package itself.

mod common;

use common::tcpwhy;

use std::path::PathBuf;
use std::process::Command;

#[test]
fn version_names_the_commit_it_was_built_from() {
    let out = String::from_utf8(tcpwhy(&["--version"]).stdout).unwrap();
    let head = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8(o.stdout).unwrap().trim().to_string());
    let commit = head.map_or("commit unknown".to_string(), |h| format!("commit {h}"));
    assert_eq!(
        out.trim(),
        format!("tcpwhy {} ({commit})", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn assets_are_a_man_page_per_subcommand_and_three_completions() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("assets");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(tcpwhy(&["assets", dir.to_str().unwrap()]).status.success());
    let mut pages: Vec<String> = std::fs::read_dir(dir.join("man"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    pages.sort();
    // The hidden `assets` has no page.
    assert_eq!(
        pages,
        [
            "tcpwhy-analyze.1",
            "tcpwhy-annotate.1",
            "tcpwhy-collect.1",
            "tcpwhy-fleet.1",
            "tcpwhy-flows.1",
            "tcpwhy-host.1",
            "tcpwhy-report.1",
            "tcpwhy-segments.1",
            "tcpwhy-watch.1",
            "tcpwhy.1"
        ]
    );
    let man = std::fs::read_to_string(dir.join("man/tcpwhy-annotate.1")).unwrap();
    assert!(man.contains("evidence\\-only"), "{man}");
    let man = std::fs::read_to_string(dir.join("man/tcpwhy-report.1")).unwrap();
    assert!(man.contains("max\\-plots"), "{man}");
    for f in ["tcpwhy.bash", "_tcpwhy", "tcpwhy.fish"] {
        let text = std::fs::read_to_string(dir.join("completions").join(f)).unwrap();
        assert!(text.contains("annotate") && !text.contains("assets"), "{f}");
    }
    // What bash offers after `tcpwhy a<Tab>`.
    let script = format!(
        "source {}; COMP_WORDS=(tcpwhy a); COMP_CWORD=1; _tcpwhy tcpwhy a tcpwhy; echo \"${{COMPREPLY[*]}}\"",
        dir.join("completions/tcpwhy.bash").display()
    );
    let out = Command::new("bash").args(["-c", &script]).output().unwrap();
    assert_eq!(
        String::from_utf8(out.stdout).unwrap().trim(),
        "analyze annotate"
    );
}
