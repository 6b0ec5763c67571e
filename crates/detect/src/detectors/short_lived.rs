//! `connection.short_lived` (to be written: see mechanisms.md).

use crate::detector::Detector;

#[derive(Default)]
pub struct ShortLived {}

impl Detector for ShortLived {}
