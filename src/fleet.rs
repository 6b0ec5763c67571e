//! `tcpwhy fleet`: many captures on Dask, written as Parquet. The driver is Python, in the
//! package built from python/ (docs/fleet.md); this subcommand only runs it,
//! `python3 -m tcpwhy.fleet ARGS…`, with a clear error when the package is not installed.

use clap::Args;
use std::ffi::OsString;
use std::process::{Command, ExitCode};

pub const HELP: &str = "The driver is the Python package's (pip install ./python from a clone \
of the repository; docs/fleet.md): this runs `python3 -m tcpwhy.fleet ARGS…` (TCPWHY_PYTHON \
names another interpreter), the same as the `tcpwhy-fleet` script. `tcpwhy fleet --help` \
shows its options.\n\n\
Writes OUT/flows/capture=NAME/ and OUT/findings/capture=NAME/ (Parquet, one partition per \
capture), OUT/captures.parquet, OUT/verdict.parquet and OUT/errors.json; prints the fleet \
verdict: the mechanisms that cost the most across all captures, on which servers and \
ports, then the captures that failed and why.\n\n\
Examples:\n  tcpwhy fleet captures/ -o out/\n  \
tcpwhy fleet /shared/captures -o /shared/out --address tcp://scheduler:8786\n\n\
Exit status: 0 no finding, 1 findings, 2 a capture failed (the others are written) or \
the package is missing.";

#[derive(Args)]
pub struct FleetArgs {
    /// The driver's arguments: PATH… -o OUT [--address ADDR] [--workers N] [--min-cost
    /// DURATION] [-j N] [--top N] [--servers N] [-q].
    #[arg(
        value_name = "ARGS",
        trailing_var_arg = true,
        allow_hyphen_values = true,
        required = true
    )]
    pub args: Vec<OsString>,
}

/// What `python3 -m` prints when the package is not installed.
const NOT_INSTALLED: &str = "No module named 'tcpwhy'";

pub fn run(a: FleetArgs) -> Result<ExitCode, String> {
    let python = std::env::var_os("TCPWHY_PYTHON").unwrap_or_else(|| "python3".into());
    let shown = python.to_string_lossy().into_owned();
    let missing = || {
        format!(
            "fleet needs the Python package: pip install ./python (from a clone of \
             the repository, for {shown}; docs/fleet.md)"
        )
    };
    // Asked first, so that a missing package gets this message rather than a traceback.
    let probe = Command::new(&python)
        .args(["-c", "import tcpwhy.fleet"])
        .output()
        .map_err(|e| format!("fleet: cannot run {shown}: {e}; {}", missing()))?;
    if !probe.status.success() {
        let err = String::from_utf8_lossy(&probe.stderr);
        if err.contains(NOT_INSTALLED) {
            return Err(missing());
        }
        let last = err.lines().last().unwrap_or("").to_owned();
        return Err(format!("fleet: {shown} cannot import tcpwhy.fleet: {last}"));
    }
    let mut cmd = Command::new(&python);
    cmd.args(["-m", "tcpwhy.fleet"]).args(&a.args);
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        let e = cmd.exec();
        Err(format!("fleet: cannot run {shown}: {e}"))
    }
    #[cfg(not(unix))]
    {
        let status = cmd
            .status()
            .map_err(|e| format!("fleet: cannot run {shown}: {e}"))?;
        Ok(ExitCode::from(status.code().map_or(2, |c| c as u8)))
    }
}
