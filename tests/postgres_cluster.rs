//! The throwaway PostgreSQL cluster the PostgreSQL store's tests will run on (issue 19): it
//! starts as a non-root user on a free port, answers SQL, and is gone when dropped.

mod support;

#[path = "support/postgres.rs"]
mod postgres;

#[test]
fn a_throwaway_cluster_starts_answers_and_stops() {
    let dir = support::temp_dir("pg");
    let Some(pg) = postgres::PgCluster::start(&dir) else {
        return;
    };
    assert_eq!(pg.psql("SELECT 6 * 7").trim(), "42");
    let version = pg.psql("SHOW server_version_num");
    assert!(
        version.trim().parse::<u32>().unwrap() >= 130000,
        "{version}"
    );
    // SKIP LOCKED, which the store's claims will use, is there
    pg.psql("CREATE TABLE t (id int); INSERT INTO t VALUES (1)");
    assert_eq!(
        pg.psql("SELECT id FROM t FOR UPDATE SKIP LOCKED").trim(),
        "1"
    );
    let port = pg.port;
    drop(pg);
    assert!(
        std::net::TcpStream::connect(("127.0.0.1", port)).is_err(),
        "the cluster still listens after drop"
    );
}
