//! Import errors: each names the file or part and says what is wrong and where.

use super::primitives::Point;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ImportError {
    #[error("{source_name}: {reason}")]
    Unreadable { source_name: String, reason: String },
    #[error(
        "{source_name}: no closed outline found (the file holds no usable cut geometry{detail})"
    )]
    Empty { source_name: String, detail: String },
    #[error("{source_name}: open outline: the contour does not close; a gap of {gap:.4} mm lies between ({}, {}) and ({}, {}) (ends closer than the chaining tolerance of {tolerance} mm are joined)", fmt(from.x), fmt(from.y), fmt(to.x), fmt(to.y))]
    OpenOutline {
        source_name: String,
        from: Point,
        to: Point,
        gap: f64,
        tolerance: f64,
    },
    #[error("{source_name}: open outline: the end at ({}, {}) meets the middle of another edge (a T-junction); split that edge there so that the contour closes", fmt(at.x), fmt(at.y))]
    TJunction { source_name: String, at: Point },
    #[error("{source_name}: self-crossing outline: boundary edges cross near ({}, {})", fmt(at.x), fmt(at.y))]
    SelfCrossing { source_name: String, at: Point },
    #[error("{source_name}: outline has zero area")]
    ZeroArea { source_name: String },
    #[error("{source_name}: {field}: {reason}")]
    BadSetting {
        source_name: String,
        field: String,
        reason: String,
    },
}

fn fmt(v: f64) -> String {
    let s = format!("{v:.4}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".into()
    } else {
        s.to_string()
    }
}
