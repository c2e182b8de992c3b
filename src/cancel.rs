//! Stopping long work from outside: a nest or a 1D plan polls its handle and ends with the
//! best answer so far once it is cancelled (shutdown, a lost lease, a watchdog).

use std::sync::atomic::{AtomicBool, Ordering};

#[derive(Default, Debug)]
pub struct CancelHandle(AtomicBool);

impl CancelHandle {
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// The flag itself, for loops that poll it as an `AtomicBool`.
    pub(crate) fn flag(&self) -> &AtomicBool {
        &self.0
    }
}
