//! Lenient parsing of enumeration names (DESIGN 5.1): case-insensitive, ignoring `_`, `-` and
//! spaces. Every parser of a string-typed setting goes through `enum_key`.

/// The comparison key of an enumeration name: lower case without `_`, `-` or spaces.
pub fn enum_key(s: &str) -> String {
    s.chars()
        .filter(|c| !matches!(c, '_' | '-' | ' '))
        .collect::<String>()
        .to_ascii_lowercase()
}

/// A scale factor where 0 (an unset non-nullable double) means 1.
pub fn scale_or_one(v: f64) -> f64 {
    if v == 0.0 {
        1.0
    } else {
        v
    }
}
