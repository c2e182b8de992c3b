//! Webhooks: where they may go (`guard`) and when failed ones are retried (`schedule`).
//! Delivery itself (the outbox worker) comes with the HTTP service.

pub mod guard;
pub mod schedule;

pub use guard::{parse_target, AddressGuard};
