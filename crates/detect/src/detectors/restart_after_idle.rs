//! `slow_start.restart_after_idle` (to be written: see mechanisms.md).

use crate::detector::Detector;

#[derive(Default)]
pub struct RestartAfterIdle {}

impl Detector for RestartAfterIdle {}
