//! `slow_start.early_exit` (to be written: see mechanisms.md).

use crate::detector::Detector;

#[derive(Default)]
pub struct EarlyExit {}

impl Detector for EarlyExit {}
