//! The path emulator (to be written).
use crate::cli::EmulateArgs;

pub fn run(_a: EmulateArgs) -> Result<(), String> {
    Err("emulator not written yet".into())
}
