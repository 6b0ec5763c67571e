//! `tcpwhy assets DIR` (hidden): the man pages and the bash, zsh and fish completions,
//! generated from the CLI definition in cli.rs (clap_mangen, clap_complete), for the
//! Debian package (scripts/deb) or any other install. None of them is written by hand,
//! so they cannot drift from `--help`.

use clap::{Args, CommandFactory};
use clap_complete::Shell;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Args)]
pub struct AssetsArgs {
    /// Where to write man/ (tcpwhy.1 and one page per subcommand) and completions/
    /// (tcpwhy.bash, _tcpwhy for zsh, tcpwhy.fish); created if missing.
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
}

pub fn run(a: AssetsArgs) -> Result<ExitCode, String> {
    let at = |p: &Path, e: std::io::Error| format!("{}: {e}", p.display());
    let man = a.dir.join("man");
    let completions = a.dir.join("completions");
    for d in [&man, &completions] {
        std::fs::create_dir_all(d).map_err(|e| at(d, e))?;
    }
    let cmd = crate::cli::Cli::command();
    // One page for tcpwhy and one per subcommand (tcpwhy-analyze.1 …), as git does.
    clap_mangen::generate_to(cmd.clone(), &man).map_err(|e| at(&man, e))?;
    // clap_complete offers hidden subcommands too: complete a copy without them (this
    // one), so that Tab after `tcpwhy a` offers analyze and annotate only.
    let visible = clap::Command::new("tcpwhy")
        .version(env!("TCPWHY_VERSION"))
        .subcommand_required(true)
        .subcommands(cmd.get_subcommands().filter(|s| !s.is_hide_set()).cloned());
    for shell in [Shell::Bash, Shell::Zsh, Shell::Fish] {
        let mut cmd = visible.clone();
        clap_complete::generate_to(shell, &mut cmd, "tcpwhy", &completions)
            .map_err(|e| at(&completions, e))?;
    }
    Ok(ExitCode::SUCCESS)
}
