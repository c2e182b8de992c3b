//! The store test matrix: one test body, run on a real SQLite file and on a throwaway
//! PostgreSQL database. A body is `async fn case(db: String)`, where `db` is what
//! `Store::open` (and `kerf serve --database`) takes: a file path or a `postgres://` URL.
//! Needs `mod postgres;` (support/postgres.rs) beside it.
#![allow(dead_code)]

use std::path::Path;

/// A fresh SQLite file for case `name`.
pub fn sqlite_db(name: &str) -> String {
    let dir = std::env::temp_dir().join(format!("kerf-store-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir.join("kerf.db").display().to_string()
}

/// A fresh database for case `name` in the process's shared PostgreSQL cluster; None (the
/// case is skipped) when PostgreSQL is not installed and not required.
pub fn postgres_db(name: &str) -> Option<String> {
    Some(super::postgres::shared()?.create_database(name))
}

/// Everything the database holds, as text: the SQLite file and its WAL, or a dump of the
/// PostgreSQL database (to check what is never stored).
pub fn database_text(db: &str) -> String {
    if db.starts_with("postgres://") {
        let name = db.rsplit('/').next().unwrap();
        super::postgres::shared().unwrap().dump(name)
    } else {
        let path = Path::new(db);
        let mut bytes = std::fs::read(path).unwrap();
        bytes.extend(std::fs::read(path.with_extension("db-wal")).unwrap_or_default());
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

/// Runs each listed `async fn case(db: String)` as two tests, `sqlite::case` and
/// `postgres::case`.
macro_rules! on_both_stores {
    ($($case:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test]
                async fn $case() {
                    super::$case(super::stores::sqlite_db(stringify!($case))).await
                }
            )*
        }
        mod postgres_store {
            $(
                #[tokio::test]
                async fn $case() {
                    if let Some(db) = super::stores::postgres_db(stringify!($case)) {
                        super::$case(db).await
                    }
                }
            )*
        }
    };
}
pub(crate) use on_both_stores;
