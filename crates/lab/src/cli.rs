//! Command line of tcpwhy-lab. `list` and `run` are for people; `emulate` and `workload`
//! are what `run` starts inside the namespaces it creates (hidden from --help).

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

#[derive(Parser)]
#[command(
    name = "tcpwhy-lab",
    version,
    about = "Reproduce TCP performance problems with the real Linux kernel, and capture them"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// List the scenarios with what each reproduces.
    List,
    /// Run one scenario (or all) and write capture, kernel evidence and manifest.
    Run(RunArgs),
    /// Random scenarios from a seed, labelled from the kernel's records, scored against
    /// `tcpwhy analyze` (precision, recall, cost error per finding id).
    Sweep(crate::sweep::SweepArgs),
    /// (internal) The path emulator: runs in the router namespace on an NFQUEUE.
    #[command(hide = true)]
    Emulate(EmulateArgs),
    /// (internal) A workload end: runs in the client or server namespace.
    #[command(hide = true)]
    Workload(WorkloadArgs),
}

#[derive(Copy, Clone, ValueEnum, PartialEq, Eq, Debug)]
pub enum VantageArg {
    Client,
    Server,
    Both,
    /// The router's client-facing interface (after the emulator on the way to the client).
    Router,
    /// Client, server and router.
    All,
}

#[derive(Args)]
pub struct RunArgs {
    /// Scenario name (see `list`).
    #[arg(required_unless_present = "all")]
    pub scenario: Option<String>,
    /// Run every scenario.
    #[arg(long)]
    pub all: bool,
    /// Output directory (one sub-directory per scenario).
    #[arg(short, long, default_value = "lab-out")]
    pub out: PathBuf,
    /// Where to capture.
    #[arg(long, value_enum, default_value = "both")]
    pub vantage: VantageArg,
    /// Keep the namespaces after the run, for poking around (remove with `ip netns del`).
    #[arg(long)]
    pub keep: bool,
    /// tcpdump's snaplen in bytes for every capture (0: whole packets). Default: 128
    /// (headers), or whole packets for the small scenarios.
    #[arg(short = 's', long)]
    pub snaplen: Option<u32>,
    /// http scenarios: make at most this many requests (smaller captures, e.g. for
    /// examples); the manifest's notes say so.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub requests: Option<u32>,
    /// Debugging: no path emulator (no delay, loss or reordering): checks the topology
    /// and the workloads alone. The scenarios' checks will mostly fail.
    #[arg(long, hide = true)]
    pub no_emulator: bool,
}

#[derive(Args, Debug)]
pub struct EmulateArgs {
    /// NFQUEUE number the router's FORWARD chain sends packets to.
    #[arg(long)]
    pub queue: u16,
    /// Path description (JSON, `emulator::PathConfig`).
    #[arg(long)]
    pub config: PathBuf,
    /// Where to log every decision (JSON lines: time, direction, packet, verdict).
    #[arg(long)]
    pub log: PathBuf,
}

#[derive(Args, Debug)]
pub struct WorkloadArgs {
    /// Workload description (JSON, `workload::WorkloadConfig`).
    #[arg(long)]
    pub config: PathBuf,
    /// Which end to run.
    #[arg(long, value_enum)]
    pub role: Role,
    /// Where to write the workload's own timings (JSON).
    #[arg(long)]
    pub out: PathBuf,
}

#[derive(Copy, Clone, ValueEnum, PartialEq, Eq, Debug)]
pub enum Role {
    Client,
    Server,
}
