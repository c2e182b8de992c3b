//! `kerf nodes`: the nodes heard from lately on a store, one per line.

use crate::cluster::NODE_SEEN_WITHIN_MS;
use crate::store::now_ms;
use crate::wire::utc;
use anyhow::Result;

pub fn run(database: &str) -> Result<()> {
    super::block_on(async {
        let store = super::open_store(database).await?;
        let nodes = store.live_nodes(now_ms() - NODE_SEEN_WITHIN_MS).await?;
        println!(
            "{:<48} {:<7} {:<28} {:>5} {:<20} {:<24} {:<24}",
            "node", "role", "compute", "slots", "host", "started", "seen"
        );
        for n in &nodes {
            println!(
                "{:<48} {:<7} {:<28} {:>5} {:<20} {:<24} {:<24}",
                n.node.id,
                n.node.role,
                n.node.compute,
                n.node.slots,
                n.node.host,
                utc(n.node.started_at),
                utc(n.seen_at)
            );
        }
        println!("{} live node(s)", nodes.len());
        Ok(())
    })
}
