//! Workloads (to be written).
use crate::cli::WorkloadArgs;

pub fn run(_a: WorkloadArgs) -> Result<(), String> {
    Err("workloads not written yet".into())
}
