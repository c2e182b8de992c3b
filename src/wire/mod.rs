//! The interface's wire format: serde types named exactly as the spec names them (`types` for
//! requests, `responses` for answers and webhook bodies), their one-time conversion into engine
//! types with field-level errors (`convert`), and engine results turned into bodies (`results`).

pub mod convert;
pub mod cut1d;
pub mod exports;
pub mod keys;
pub mod legacy;
pub mod quote;
pub mod responses;
pub mod results;
pub mod types;

pub use convert::{
    describe, parse_json, to_problem, to_submission, Converted, FieldError, GeometryKind,
    Submission,
};
pub use exports::render_options;
pub use keys::*;
pub use responses::*;
pub use types::*;

/// A wire type as JSON text (they always serialize).
pub fn to_json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).expect("wire types serialize")
}
