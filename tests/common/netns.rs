//! Two network namespaces joined by a veth pair, for the tests that run the real kernel
//! as root (tests/tunnels_netns.rs, tests/analyze_live.rs): deleted with everything in
//! them on every exit, a panic included.

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};

/// Whether the tests that need them can run here: root and `ip netns` (why not, if not).
pub fn root_and_netns() -> Result<(), String> {
    let root = run("id", &["-u"]);
    if String::from_utf8_lossy(&root.stdout).trim() != "0" {
        return Err("not root".into());
    }
    if !run("ip", &["netns", "list"]).status.success() {
        return Err("no `ip netns`".into());
    }
    Ok(())
}

pub fn run(cmd: &str, args: &[&str]) -> Output {
    Command::new(cmd)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{cmd}: {e}"))
}

pub fn have(cmd: &str, arg: &str) -> bool {
    Command::new(cmd)
        .arg(arg)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok()
}

/// The two namespaces of one case, deleted (with everything in them) on every exit,
/// a panic included; processes started in them are killed by their PIDs first.
pub struct Lab {
    pub ns: [String; 2],
    pub children: Vec<Child>,
}

impl Lab {
    /// Namespaces `{prefix}a-{case}-PID` and `{prefix}b-…` joined by veth `u0`, with
    /// `{v4}.1/24` and `{v4}.2/24` (e.g. v4 "10.203.0") and `fd03::1`, `fd03::2`.
    pub fn new(prefix: &str, case: &str, v4: &str) -> Lab {
        let pid = std::process::id();
        let lab = Lab {
            ns: [
                format!("{prefix}a-{case}-{pid}"),
                format!("{prefix}b-{case}-{pid}"),
            ],
            children: Vec::new(),
        };
        for ns in &lab.ns {
            lab.must("ip", &["netns", "add", ns]);
        }
        let [a, b] = &lab.ns;
        lab.must(
            "ip",
            &[
                "link", "add", "u0", "netns", a, "type", "veth", "peer", "name", "u0", "netns", b,
            ],
        );
        for (i, ns) in lab.ns.iter().enumerate() {
            let addr = format!("{v4}.{}/24", i + 1);
            lab.exec(ns, &["ip", "addr", "add", &addr, "dev", "u0"]);
            lab.exec(
                ns,
                &[
                    "ip",
                    "-6",
                    "addr",
                    "add",
                    &format!("fd03::{}/64", i + 1),
                    "dev",
                    "u0",
                    "nodad",
                ],
            );
            lab.exec(ns, &["ip", "link", "set", "u0", "up"]);
            lab.exec(ns, &["ip", "link", "set", "lo", "up"]);
        }
        lab
    }

    pub fn must(&self, cmd: &str, args: &[&str]) {
        let out = run(cmd, args);
        assert!(
            out.status.success(),
            "{cmd} {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    pub fn exec(&self, ns: &str, args: &[&str]) {
        let mut a = vec!["netns", "exec", ns];
        a.extend_from_slice(args);
        self.must("ip", &a);
    }

    /// `ip link add` in namespace `i`; `false` when this kernel has no such device type.
    pub fn try_link(&self, i: usize, args: &[&str]) -> bool {
        let mut a = vec!["netns", "exec", &self.ns[i], "ip", "link", "add"];
        a.extend_from_slice(args);
        let out = run("ip", &a);
        if out.status.success() {
            return true;
        }
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("Unknown device type") || err.contains("not supported"),
            "ip {a:?}: {err}"
        );
        false
    }

    pub fn spawn(&mut self, ns: usize, args: &[&str], stderr: Option<&Path>) {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.ns[ns]]).args(args);
        c.stdout(Stdio::null());
        match stderr {
            Some(p) => c.stderr(std::fs::File::create(p).unwrap()),
            None => c.stderr(Stdio::null()),
        };
        self.children.push(c.spawn().expect("spawn"));
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        for c in &mut self.children {
            let _ = c.kill();
            let _ = c.wait();
        }
        for ns in &self.ns {
            let _ = Command::new("ip").args(["netns", "del", ns]).status();
        }
    }
}
