//! Where the daemon parses specs and plans them: off the async runtime.
//!
//! A spec file of a megabyte, or a plan over thousands of hosts, keeps a
//! core busy for a while. On a runtime thread it would stall every request
//! scheduled on that thread; two such posts froze even `/healthz` for 9 s.
//! So this work runs on tokio's blocking pool, and at most one job per core
//! at a time: further jobs wait asynchronously for a slot, which bounds the
//! CPU and memory that concurrent large posts can take to what one job per
//! core takes.

use tokio::sync::Semaphore;

use super::DaemonError;

pub struct Planning {
    slots: Semaphore,
    #[cfg(test)]
    hold: std::sync::Mutex<Option<std::sync::Arc<tests::Gate>>>,
}

impl Default for Planning {
    fn default() -> Self {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        Planning {
            slots: Semaphore::new(cores),
            #[cfg(test)]
            hold: Default::default(),
        }
    }
}

impl Planning {
    /// Runs `job` on the blocking pool once a slot is free. A panic in it
    /// becomes an internal error of this request instead of taking the
    /// connection down with it.
    pub async fn run<T: Send + 'static>(&self, job: impl FnOnce() -> T + Send + 'static) -> Result<T, DaemonError> {
        let _slot = self.slots.acquire().await.map_err(|_| DaemonError::Internal("planning is closed".into()))?;
        #[cfg(test)]
        let gate = self.hold.lock().expect("hold lock").clone();
        let work = move || {
            #[cfg(test)]
            if let Some(gate) = gate {
                gate.wait();
            }
            job()
        };
        tokio::task::spawn_blocking(work).await.map_err(|e| DaemonError::Internal(format!("planning failed: {e}")))
    }
}

#[cfg(test)]
pub mod tests {
    use std::sync::{Arc, Condvar, Mutex};
    use std::time::Duration;

    /// Holds planning jobs in the blocking pool until released, so that a
    /// test can look at the daemon while a plan is under way.
    #[derive(Default)]
    pub struct Gate {
        started: tokio::sync::Notify,
        open: Mutex<Option<bool>>,
        opened: Condvar,
    }

    /// Failsafe only: a job not released in this time goes on, and the
    /// test sees that it was not released (`Hold::released`).
    const FAILSAFE: Duration = Duration::from_secs(60);

    impl Gate {
        pub(super) fn wait(&self) {
            self.started.notify_one();
            let open = self.open.lock().expect("gate lock");
            let (mut open, _) = self.opened.wait_timeout_while(open, FAILSAFE, |o| o.is_none()).expect("gate lock");
            open.get_or_insert(false);
        }
    }

    pub struct Hold(Arc<Gate>);

    impl Hold {
        /// Waits until a job has reached the gate.
        pub async fn started(&self) {
            self.0.started.notified().await;
        }

        /// Lets held jobs go on; true when they were still waiting, false
        /// when the failsafe had let them go first.
        pub fn release(&self) -> bool {
            let mut open = self.0.open.lock().expect("gate lock");
            let released = open.is_none();
            open.get_or_insert(true);
            self.0.opened.notify_all();
            released
        }
    }

    impl super::Planning {
        /// Every job from now on waits at a gate until the hold is released.
        pub fn hold(&self) -> Hold {
            let gate = Arc::new(Gate::default());
            *self.hold.lock().expect("hold lock") = Some(gate.clone());
            Hold(gate)
        }
    }
}
