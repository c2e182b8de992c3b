//! Scale-out (DESIGN 4): several processes on one PostgreSQL database. Each is a node with a
//! role (`kerf serve`: front end and worker; `kerf serve --no-workers`: front end only;
//! `kerf worker`: claims and runs jobs, delivers webhooks). The database is the only thing
//! they share: jobs, leases and results live in it, and its NOTIFY carries what must reach
//! other nodes at once (`bus`): a job queued (wakes idle workers), a job's events (to the
//! node that holds a hub subscriber's socket), a stop (to the node running the job). Each
//! node announces itself and heartbeats (`node`).

pub mod bus;
pub mod node;
mod wake;

pub use bus::{Link, Message};
pub use node::{Role, NODE_SEEN_WITHIN_MS};
pub use wake::{Topic, Wake};
