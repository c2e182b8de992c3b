//! Exports of a finished nest: `render`
//! (RenderSettings: SVG or PNG of the requested size, labels, colours).

pub mod render;
