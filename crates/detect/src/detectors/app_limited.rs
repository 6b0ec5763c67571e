//! `app.limited` (to be written: see mechanisms.md).

use crate::detector::Detector;

#[derive(Default)]
pub struct AppLimited {}

impl Detector for AppLimited {}
