//! tcpwhy-lab: reproduces each TCP mechanism of ../shared/mechanisms.md with the real Linux
//! kernel — network namespaces, a user-space path emulator on NFQUEUE, workloads with the
//! socket options of each case — captures it at the client and the server, and records
//! the kernel's own evidence (ss, nstat, tcp_metrics, sockstat) next to the capture.
//!
//! Linux only, as root. Everything it creates (namespaces, iptables rules, processes,
//! changed root sysctls) is removed on success, failure and Ctrl-C.

mod bundle;
mod cli;
mod emulator;
mod holder;
mod labels;
mod manifest;
mod run;
mod scenario;
mod sweep;
mod topology;
mod truth;
mod workload;

use clap::Parser;
use std::process::ExitCode;

fn list() {
    for s in scenario::all() {
        let mark = match s.status {
            scenario::Status::Ready => " ",
            scenario::Status::Caveat(_) => "*",
        };
        let must = if s.must.is_empty() {
            "(control: nothing)".to_string()
        } else {
            s.must.join(", ")
        };
        println!("{mark}{:<28} {}", s.name, s.summary);
        println!("{:<29} must: {must}", "");
        if let scenario::Status::Caveat(why) = s.status {
            println!("{:<29} * {why}", "");
        }
    }
}

fn main() -> ExitCode {
    let args = cli::Cli::parse();
    let r = match args.command {
        cli::Command::List => {
            list();
            Ok(())
        }
        cli::Command::Run(a) => {
            let r = run::run(a);
            // Normally a no-op; waits for the signal handler if it is cleaning up.
            topology::cleanup_all();
            match r {
                Ok(true) => Ok(()),
                Ok(false) => return ExitCode::from(1),
                Err(e) => Err(e),
            }
        }
        cli::Command::Sweep(a) => {
            let r = sweep::run(a);
            topology::cleanup_all();
            r
        }
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
