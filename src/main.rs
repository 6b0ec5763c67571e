//! tcpwhy: names the TCP mechanism that made a connection slow, proves it with frame
//! numbers, says what it cost and how to fix it. This binary is the CLI: argument
//! parsing, files, terminal and exit status; the work is in the library crates.

mod annotate;
mod assets;
mod cli;
mod filter;
mod fleet;
mod host;
mod live;
mod outputs;
mod report;
mod scan;
mod watch;

use clap::Parser;
use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args = cli::Cli::parse();
    match run(args) {
        Ok(code) => code,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "tcpwhy: {e}");
            ExitCode::from(2)
        }
    }
}

fn run(args: cli::Cli) -> Result<ExitCode, String> {
    match args.command {
        cli::Command::Analyze(a) => cli::analyze(a),
        cli::Command::Annotate(a) => annotate::run(a),
        cli::Command::Report(a) => report::run(a),
        cli::Command::Flows(a) => cli::flows(a),
        cli::Command::Segments(a) => cli::segments(a),
        cli::Command::Fleet(a) => fleet::run(a),
        cli::Command::Host(a) => cli::host(a),
        cli::Command::Collect(a) => cli::collect(a),
        cli::Command::Assets(a) => assets::run(a),
        cli::Command::Watch(a) => watch::run(a),
    }
}
