//! The interface's wire format: serde types named exactly as the spec names them (`types`) and
//! their one-time conversion into engine types with field-level errors (`convert`).

pub mod convert;
pub mod types;

pub use convert::{
    parse_json, to_problem, to_submission, Converted, FieldError, GeometryKind, Submission,
};
pub use types::*;
