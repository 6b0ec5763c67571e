//! The lab's network for one run: client, router and server namespaces joined by veth
//! pairs, the router's NFQUEUE rule for the path emulator, offloads, rate limits and
//! sysctls — and the guarantee that all of it, and every process started in it, is gone
//! afterwards (on success, on error, on Ctrl-C/SIGTERM, and after a crashed run).
//!
//! ```text
//!  twl<k>-cli            twl<k>-rtr                      twl<k>-srv
//!  10.81.1.2 ─ veth ─ 10.81.1.1 | 10.81.2.1 ─ veth ─ 10.81.2.2
//!                      FORWARD -p tcp → NFQUEUE (emulator)
//! ```
//! `k` is the pid of the tcpwhy-lab process that owns the run, so a later run can tell a
//! leftover of a crashed run (pid gone) from a run in progress.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

pub const CLIENT_IP: &str = "10.81.1.2";
pub const ROUTER_CLIENT_SIDE_IP: &str = "10.81.1.1";
pub const ROUTER_SERVER_SIDE_IP: &str = "10.81.2.1";
pub const SERVER_IP: &str = "10.81.2.2";
/// NFQUEUE queues are per network namespace, so every run can use the same number.
pub const QUEUE_NUM: u16 = 0;
/// Prefix of every namespace the lab creates (`twl<pid>-cli` …).
const NS_PREFIX: &str = "twl";
/// CPU mask of the veths' receive packet steering: every packet on CPU 0.
const RPS_CPUS: &str = "1";
/// How long a stopped process gets to exit after its signal before SIGKILL.
const STOP_GRACE: Duration = Duration::from_secs(3);

/// Sysctls the lab may set inside a namespace. A scenario asking for another name is a
/// bug in the table (caught by the table's unit test), not something to run.
pub const NAMESPACE_SYSCTLS: &[&str] = &[
    "net.ipv4.tcp_slow_start_after_idle",
    "net.ipv4.tcp_congestion_control",
    "net.ipv4.tcp_window_scaling",
    "net.ipv4.tcp_no_metrics_save",
    "net.ipv4.tcp_no_ssthresh_metrics_save",
    "net.ipv4.tcp_early_retrans",
    "net.ipv4.tcp_reordering",
    "net.ipv4.tcp_sack",
    "net.ipv4.tcp_rmem",
    "net.ipv4.tcp_wmem",
    "net.ipv4.tcp_timestamps",
];

#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    Client,
    Router,
    Server,
}

impl Side {
    fn suffix(self) -> &'static str {
        match self {
            Side::Client => "cli",
            Side::Router => "rtr",
            Side::Server => "srv",
        }
    }
}

/// What a scenario asks of the network itself (the path's delays and losses are the
/// emulator's, not the topology's).
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct TopologySpec {
    /// Bottleneck rate on the router's egress veths (both directions), Mbit/s.
    pub rate_mbit: Option<u32>,
    /// FIFO length behind the rate limit, in packets.
    pub queue_packets: Option<u32>,
    /// Leave TSO/GSO on at the server's veth so its capture shows super-segments.
    pub tso_at_server: bool,
    /// GRO on at the client's veth, so its capture shows coalesced segments.
    pub gro_at_client: bool,
    pub client_sysctls: Vec<(&'static str, String)>,
    pub server_sysctls: Vec<(&'static str, String)>,
    /// `initcwnd` of the client's default route (segments): the initial and the restart
    /// window (after idle) of its connections (`tcp_init_cwnd` reads the route first).
    pub client_initcwnd: Option<u32>,
    /// tcpdump's snaplen for this scenario's captures, when the cut is what the scenario
    /// is about (`--snaplen` still wins); `None`: the scenario's `full_snaplen`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snaplen: Option<u32>,
    /// Root-namespace sysctls set for the workload only: global to the machine (every
    /// namespace's sockets share `net.ipv4.tcp_mem`), so they are set once the server
    /// listens, restored as soon as the client ends (and on every other exit path by the
    /// cleanup), and the run checks that they read back as before.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub workload_root_sysctls: Vec<(&'static str, String)>,
    /// How long after the server accepted the client's connection they are set (0:
    /// before the client starts).
    #[serde(skip_serializing_if = "is_zero")]
    pub workload_root_sysctls_after_ms: u64,
    /// Other sockets of the host hold TCP memory above this `tcp_mem[1]` (pages) while
    /// the workload runs (the lab's loopback holder, see holder.rs), so that the lowered
    /// value is crossed in every run, not only when the CPUs' batches fall right.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hold_tcp_memory_above_pages: Option<u64>,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// Everything that must be undone, shared with the Ctrl-C handler.
#[derive(Default)]
struct Cleanup {
    namespaces: Vec<String>,
    pids: Vec<i32>,
    /// Root-namespace sysctls changed, with the value to restore.
    root_sysctls: Vec<(String, String)>,
    keep_namespaces: bool,
}

static CLEANUP: Mutex<Cleanup> = Mutex::new(Cleanup {
    namespaces: Vec::new(),
    pids: Vec::new(),
    root_sysctls: Vec::new(),
    keep_namespaces: false,
});

fn registry() -> std::sync::MutexGuard<'static, Cleanup> {
    // A panic while holding the lock must not stop the cleanup.
    CLEANUP.lock().unwrap_or_else(|e| e.into_inner())
}

/// Undoes everything registered: processes (by pid), root sysctls, namespaces. Safe to
/// call more than once and from the signal-handler thread.
pub fn cleanup_all() {
    // The lock is held for the whole cleanup: a second caller (the main thread ending
    // while the signal handler cleans up) waits for it instead of exiting the process
    // half-way through.
    let mut r = registry();
    let pids = std::mem::take(&mut r.pids);
    let sysctls = std::mem::take(&mut r.root_sysctls);
    let namespaces = std::mem::take(&mut r.namespaces);
    kill_pids(&pids);
    for (name, value) in sysctls.iter().rev() {
        let _ = write_sysctl_root(name, value);
    }
    if r.keep_namespaces {
        if !namespaces.is_empty() {
            eprintln!("tcpwhy-lab: kept namespaces {}", namespaces.join(" "));
        }
    } else {
        for ns in &namespaces {
            delete_namespace(ns);
        }
    }
}

/// SIGTERM, a grace period, then SIGKILL for whatever is left. Only the pids given.
fn kill_pids(pids: &[i32]) {
    for &pid in pids {
        // SAFETY: kill(2) with a pid we started and have not reaped.
        unsafe { libc::kill(pid, libc::SIGTERM) };
    }
    let deadline = Instant::now() + STOP_GRACE;
    for &pid in pids {
        while pid_alive(pid) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        if pid_alive(pid) {
            // SAFETY: as above.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }
}

/// True while the process exists and is not a zombie.
fn pid_alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(s) => !s
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

fn delete_namespace(ns: &str) {
    // Processes still inside (a crashed run's emulator…) would keep the veths alive.
    if let Ok(out) = Command::new("ip").args(["netns", "pids", ns]).output() {
        let pids: Vec<i32> = String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .filter_map(|p| p.parse().ok())
            .collect();
        kill_pids(&pids);
    }
    let _ = Command::new("ip")
        .args(["netns", "del", ns])
        .stderr(Stdio::null())
        .status();
}

/// Installs the Ctrl-C/SIGTERM handler that runs the same cleanup as a normal end.
pub fn install_signal_cleanup() -> Result<(), String> {
    ctrlc::set_handler(|| {
        eprintln!("tcpwhy-lab: interrupted, cleaning up");
        cleanup_all();
        std::process::exit(130);
    })
    .map_err(|e| format!("cannot install the Ctrl-C handler: {e}"))
}

/// Removes `twl<pid>-*` namespaces whose owning tcpwhy-lab process is gone.
pub fn remove_leftovers() -> Vec<String> {
    let Ok(out) = Command::new("ip").args(["netns", "list"]).output() else {
        return Vec::new();
    };
    let mut removed = Vec::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let name = line.split_whitespace().next().unwrap_or("");
        let Some(rest) = name.strip_prefix(NS_PREFIX) else {
            continue;
        };
        let Some((pid, suffix)) = rest.split_once('-') else {
            continue;
        };
        let Ok(pid) = pid.parse::<i32>() else {
            continue;
        };
        if !["cli", "rtr", "srv"].contains(&suffix) {
            continue;
        }
        let owner_alive = std::fs::read_to_string(format!("/proc/{pid}/comm"))
            .is_ok_and(|c| c.trim() == "tcpwhy-lab" && pid_alive(pid));
        if !owner_alive {
            delete_namespace(name);
            removed.push(name.to_string());
        }
    }
    removed
}

/// A root-namespace sysctl as the kernel prints it, whitespace normalised (tcp_mem's
/// three values are tab-separated).
pub fn read_sysctl_root(name: &str) -> Result<String, String> {
    let path = format!("/proc/sys/{}", name.replace('.', "/"));
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
    Ok(text.split_whitespace().collect::<Vec<_>>().join(" "))
}

fn write_sysctl_root(name: &str, value: &str) -> Result<(), String> {
    let path = format!("/proc/sys/{}", name.replace('.', "/"));
    std::fs::write(&path, value).map_err(|e| format!("{path}: {e}"))
}

/// Runs a command and returns its stdout, or an error with its stderr.
pub fn run_cmd(prog: &str, args: &[&str]) -> Result<String, String> {
    let out = Command::new(prog)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("{prog}: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(format!(
            "{prog} {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// One run's network. Dropping it removes everything (see `cleanup_all`).
pub struct Lab {
    k: String,
    pub veth: BTreeMap<&'static str, String>,
    /// Settings that did not apply as asked (recorded in the manifest's notes).
    pub warnings: Vec<String>,
}

/// A process started by the lab; stopped and reaped by `stop` or on drop.
pub struct Proc {
    pub name: String,
    child: Option<Child>,
}

impl Proc {
    /// True if it has already exited (reaps it then).
    pub fn exited(&mut self) -> Option<std::process::ExitStatus> {
        let st = self.child.as_mut()?.try_wait().ok().flatten()?;
        self.forget();
        Some(st)
    }

    /// Waits up to `timeout` for it to exit by itself.
    pub fn wait_timeout(&mut self, timeout: Duration) -> Option<std::process::ExitStatus> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(st) = self.exited() {
                return Some(st);
            }
            if self.child.is_none() || Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Sends `sig`, waits for the exit (SIGKILL after a grace period) and reaps it.
    pub fn stop(&mut self, sig: i32) -> Option<std::process::ExitStatus> {
        let child = self.child.as_mut()?;
        if let Ok(Some(st)) = child.try_wait() {
            self.forget();
            return Some(st);
        }
        // SAFETY: kill(2) on our own unreaped child.
        unsafe { libc::kill(child.id() as i32, sig) };
        if let Some(st) = self.wait_timeout(STOP_GRACE) {
            return Some(st);
        }
        let child = self.child.as_mut()?;
        let _ = child.kill();
        let st = child.wait().ok();
        self.forget();
        st
    }

    fn forget(&mut self) {
        if let Some(c) = self.child.take() {
            let pid = c.id() as i32;
            registry().pids.retain(|&p| p != pid);
        }
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.stop(libc::SIGTERM);
    }
}

impl Lab {
    /// Builds the topology; on error everything created so far is removed.
    pub fn create(spec: &TopologySpec, keep: bool) -> Result<Lab, String> {
        let k = std::process::id().to_string();
        registry().keep_namespaces = keep;
        let mut lab = Lab {
            k,
            veth: BTreeMap::new(),
            warnings: Vec::new(),
        };
        // A previous run of this same process (run --all) is gone by now; a namespace
        // with our name is a leftover of a failed teardown.
        for side in [Side::Client, Side::Router, Side::Server] {
            let ns = lab.ns(side);
            let _ = Command::new("ip")
                .args(["netns", "del", &ns])
                .stderr(Stdio::null())
                .status();
        }
        lab.build(spec)?;
        Ok(lab)
    }

    pub fn ns(&self, side: Side) -> String {
        format!("{NS_PREFIX}{}-{}", self.k, side.suffix())
    }

    /// Interface names; unique per run (interface names are limited to 15 bytes).
    fn dev(&self, which: &str) -> String {
        format!("{NS_PREFIX}{}-{which}", self.k)
    }

    pub fn client_dev(&self) -> String {
        self.dev("c")
    }

    pub fn server_dev(&self) -> String {
        self.dev("s")
    }

    /// The router's interface towards the client: packets to the client leave it after
    /// the emulator (delayed, dropped, reordered), the client's arrive on it before.
    pub fn router_client_side_dev(&self) -> String {
        self.dev("rc")
    }

    fn build(&mut self, spec: &TopologySpec) -> Result<(), String> {
        let (cli, rtr, srv) = (
            self.ns(Side::Client),
            self.ns(Side::Router),
            self.ns(Side::Server),
        );
        for ns in [&cli, &rtr, &srv] {
            run_cmd("ip", &["netns", "add", ns])?;
            registry().namespaces.push(ns.clone());
            self.exec(ns, &["ip", "link", "set", "lo", "up"])?;
            // No IPv6 chatter (router solicitations, MLD) in the captures.
            self.exec(
                ns,
                &[
                    "sysctl",
                    "-qw",
                    "net.ipv6.conf.all.disable_ipv6=1",
                    "net.ipv6.conf.default.disable_ipv6=1",
                ],
            )?;
        }
        let (c, rc, rs, s) = (self.dev("c"), self.dev("rc"), self.dev("rs"), self.dev("s"));
        run_cmd(
            "ip",
            &[
                "link", "add", &c, "netns", &cli, "type", "veth", "peer", "name", &rc, "netns",
                &rtr,
            ],
        )?;
        run_cmd(
            "ip",
            &[
                "link", "add", &s, "netns", &srv, "type", "veth", "peer", "name", &rs, "netns",
                &rtr,
            ],
        )?;
        let cidr = |ip: &str| format!("{ip}/24");
        self.exec(&cli, &["ip", "addr", "add", &cidr(CLIENT_IP), "dev", &c])?;
        self.exec(
            &rtr,
            &[
                "ip",
                "addr",
                "add",
                &cidr(ROUTER_CLIENT_SIDE_IP),
                "dev",
                &rc,
            ],
        )?;
        self.exec(
            &rtr,
            &[
                "ip",
                "addr",
                "add",
                &cidr(ROUTER_SERVER_SIDE_IP),
                "dev",
                &rs,
            ],
        )?;
        self.exec(&srv, &["ip", "addr", "add", &cidr(SERVER_IP), "dev", &s])?;
        for (ns, dev) in [(&cli, &c), (&rtr, &rc), (&rtr, &rs), (&srv, &s)] {
            self.exec(ns, &["ip", "link", "set", dev, "up"])?;
            // One wire-sized packet per segment, so the emulator decides per packet and
            // the captures look like a NIC's without offloads.
            let tso = if spec.tso_at_server && dev == &s {
                "on"
            } else {
                "off"
            };
            let gro = if spec.gro_at_client && dev == &c {
                "on"
            } else {
                "off"
            };
            if let Err(e) = self.exec(
                ns,
                &["ethtool", "-K", dev, "tso", tso, "gso", tso, "gro", gro],
            ) {
                self.warnings
                    .push(format!("offloads not set on {dev}: {e}"));
            }
            // Receive processing of every veth on one CPU (RPS, issue 12 class 10). A
            // veth's xmit hands the packet to netif_rx, which queues it on the *sending*
            // CPU's backlog; when consecutive packets of a flow are sent from two CPUs
            // (the server's process context and its ACK-clocked softirq, or the emulator's
            // verdicts before and after the scheduler moves it) the two backlogs drain in
            // parallel and the flow arrives interleaved: examples/lab/clean-bulk's client
            // capture has 14 packets overtaken one by one by the 15 sent after them (IP
            // IDs 27516–27529 alternating with 27530–27544). With rps_cpus set,
            // get_rps_cpu sends every packet to CPU 0's backlog in the order sent.
            if let Err(e) = self.exec(
                ns,
                &[
                    "sh",
                    "-c",
                    &format!("echo {RPS_CPUS} > /sys/class/net/{dev}/queues/rx-0/rps_cpus"),
                ],
            ) {
                self.warnings
                    .push(format!("RPS not set on {dev} (the lab may reorder): {e}"));
            }
        }
        let iw = spec.client_initcwnd.map(|n| n.to_string());
        let mut route = vec![
            "ip",
            "route",
            "add",
            "default",
            "via",
            ROUTER_CLIENT_SIDE_IP,
        ];
        if let Some(n) = &iw {
            route.extend(["initcwnd", n.as_str()]);
        }
        self.exec(&cli, &route)?;
        self.exec(
            &srv,
            &[
                "ip",
                "route",
                "add",
                "default",
                "via",
                ROUTER_SERVER_SIDE_IP,
            ],
        )?;
        self.exec(&rtr, &["sysctl", "-qw", "net.ipv4.ip_forward=1"])?;
        let q = QUEUE_NUM.to_string();
        self.exec(
            &rtr,
            &[
                "iptables",
                "-A",
                "FORWARD",
                "-p",
                "tcp",
                "-j",
                "NFQUEUE",
                "--queue-num",
                &q,
            ],
        )?;
        if let Some(rate) = spec.rate_mbit {
            for dev in [&rc, &rs] {
                self.shape(&rtr, dev, rate, spec.queue_packets.unwrap_or(1000))?;
            }
        }
        self.set_sysctls(&cli, &spec.client_sysctls)?;
        self.set_sysctls(&srv, &spec.server_sysctls)?;
        self.veth.insert("client", c);
        self.veth.insert("router_client_side", rc);
        self.veth.insert("router_server_side", rs);
        self.veth.insert("server", s);
        Ok(())
    }

    /// htb at `rate` with a FIFO of `queue` packets behind it on `dev`'s egress.
    fn shape(&self, ns: &str, dev: &str, rate_mbit: u32, queue: u32) -> Result<(), String> {
        let rate = format!("{rate_mbit}mbit");
        let limit = queue.to_string();
        self.exec(
            ns,
            &[
                "tc", "qdisc", "add", "dev", dev, "root", "handle", "1:", "htb", "default", "10",
            ],
        )?;
        self.exec(
            ns,
            &[
                "tc", "class", "add", "dev", dev, "parent", "1:", "classid", "1:10", "htb", "rate",
                &rate, "burst", "15k",
            ],
        )?;
        self.exec(
            ns,
            &[
                "tc", "qdisc", "add", "dev", dev, "parent", "1:10", "handle", "10:", "pfifo",
                "limit", &limit,
            ],
        )
        .map(|_| ())
    }

    fn set_sysctls(&self, ns: &str, sysctls: &[(&'static str, String)]) -> Result<(), String> {
        for (name, value) in sysctls {
            if !NAMESPACE_SYSCTLS.contains(name) {
                return Err(format!(
                    "sysctl {name} is not one the lab sets per namespace"
                ));
            }
            if *name == "net.ipv4.tcp_congestion_control"
                && !["reno", "bbr"].contains(&value.as_str())
            {
                return Err(format!(
                    "{name}={value}: a namespace default may only be reno or bbr here; set CUBIC per socket"
                ));
            }
            self.exec(ns, &["sysctl", "-qw", &format!("{name}={value}")])?;
        }
        Ok(())
    }

    /// Runs a command inside a namespace and returns its stdout.
    pub fn exec(&self, ns: &str, cmd: &[&str]) -> Result<String, String> {
        let mut args = vec!["netns", "exec", ns];
        args.extend_from_slice(cmd);
        run_cmd("ip", &args)
    }

    pub fn exec_in(&self, side: Side, cmd: &[&str]) -> Result<String, String> {
        self.exec(&self.ns(side), cmd)
    }

    /// Starts a long-running process inside a namespace, stdout and stderr to files.
    /// It is registered for cleanup at once.
    pub fn spawn(
        &self,
        side: Side,
        name: &str,
        cmd: &[&str],
        stdout: &Path,
        stderr: &Path,
    ) -> Result<Proc, String> {
        let out = File::create(stdout).map_err(|e| format!("{}: {e}", stdout.display()))?;
        let err = File::create(stderr).map_err(|e| format!("{}: {e}", stderr.display()))?;
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.ns(side)])
            .args(cmd)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err);
        // Our children die with us even on SIGKILL (`ip netns exec` execs, so the pid
        // is the program's; the death signal survives exec).
        unsafe {
            use std::os::unix::process::CommandExt;
            c.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
                // Ctrl-C in the terminal is ours to handle: we stop children in order
                // (tcpdump last, so its file is complete).
                libc::setpgid(0, 0);
                Ok(())
            });
        }
        let mut reg = registry();
        let child = c.spawn().map_err(|e| format!("{name}: {e}"))?;
        reg.pids.push(child.id() as i32);
        Ok(Proc {
            name: name.to_string(),
            child: Some(child),
        })
    }

    /// Changes a root-namespace sysctl for the run; restored by the cleanup (or earlier
    /// by [`Self::restore_root_sysctls`]).
    pub fn set_root_sysctl(&self, name: &str, value: &str) -> Result<(), String> {
        let old = read_sysctl_root(name)?;
        registry().root_sysctls.push((name.to_string(), old));
        write_sysctl_root(name, value)
    }

    /// Puts back every root sysctl this run changed, now (the cleanup then has nothing
    /// left to do), and reads each back: `(name, value restored, value read after)`.
    pub fn restore_root_sysctls(&self) -> Vec<(String, String, String)> {
        // The lock is held while writing: a Ctrl-C now waits for it, then finds nothing
        // left to restore, instead of finding the list taken and the values not yet back.
        let mut r = registry();
        let mut out = Vec::new();
        for (name, old) in r.root_sysctls.iter().rev() {
            let _ = write_sysctl_root(name, old);
            let now = read_sysctl_root(name).unwrap_or_else(|e| e);
            out.push((name.clone(), old.clone(), now));
        }
        r.root_sysctls.clear();
        out
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        cleanup_all();
    }
}

/// True if this host can run the lab: root, and `ip netns` works.
pub fn can_run() -> Result<(), String> {
    // SAFETY: getuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err("the lab needs root (network namespaces)".into());
    }
    run_cmd("ip", &["netns", "list"]).map(|_| ())
}
