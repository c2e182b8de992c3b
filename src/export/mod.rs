//! Exports of a finished nest. For now: an SVG picture of each sheet layout.

pub mod svg;
