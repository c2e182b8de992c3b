//! Webhooks (DESIGN 4): target validation and the address guard (`guard`), the retry schedule
//! (`schedule`) and the outbox sender (`deliver`).

pub mod deliver;
pub mod guard;
pub mod schedule;

pub use deliver::Deliverer;
pub use guard::{parse_target, AddressGuard};
