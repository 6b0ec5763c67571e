//! tcpwhy-lab: reproduces each TCP mechanism of ../shared/mechanisms.md with the real Linux
//! kernel — network namespaces, a user-space path emulator on NFQUEUE, workloads with the
//! socket options of each case — captures it at the client and the server, and records
//! the kernel's own evidence (ss, nstat, tcp_metrics, sockstat) next to the capture.
//!
//! Linux only, as root. Everything it creates (namespaces, iptables rules, processes,
//! changed root sysctls) is removed on success, failure and Ctrl-C.

mod cli;
mod emulator;
mod workload;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args = cli::Cli::parse();
    let r = match args.command {
        cli::Command::List => Err("not yet".to_string()),
        cli::Command::Run(_) => Err("not yet".to_string()),
        cli::Command::Emulate(a) => emulator::run(a),
        cli::Command::Workload(a) => workload::run(a),
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("tcpwhy-lab: {e}");
            ExitCode::from(2)
        }
    }
}
