//! Exports of a finished nest: `render` (pictures) and `dxf` (DXFExportSettings)
//! (RenderSettings: SVG or PNG of the requested size, labels, colours).

pub mod dxf;
pub mod render;
