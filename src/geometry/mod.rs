//! Exact geometry: import (DXF, JSON contours, parametric shapes), units and scale,
//! conservative curve flattening, transforms, and exact distance / containment predicates.

pub mod boolean;
pub mod colour;
pub mod compression;
pub mod curve;
pub mod dxf_import;
pub mod error;
pub mod exact;
pub mod import;
pub mod loops;
pub mod primitives;
pub mod shape;
pub mod units;

pub use compression::Compression;
pub use curve::Side;
pub use error::ImportError;
pub use import::{
    import_contour_json, import_contour_json_sheet, import_dxf, import_dxf_sheet, parametric_part,
    ImportOptions, Imported, ImportedPart, LayerRule, Parametric, PartGeometry,
};
pub use primitives::{Affine, BBox, Point};
pub use shape::Shape;
pub use units::Units;
