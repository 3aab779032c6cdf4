//! One shape for every background loop (the inventory poller, the
//! reconciler, the removal worker): one step at a time; after a step, wait
//! for the interval, or less when woken or when the step asks to look again
//! soon (`Pace::Within`), or more after errors (doubled per error in a row,
//! up to a bound); stop between steps when the daemon shuts
//! down. Each step runs in a `tracing` span named for its worker, and what
//! it did last is kept for `/api/v1/workers` and `/metrics`.

use std::future::Future;
use std::sync::Mutex;
use std::time::Duration;

use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::DaemonError;
use crate::clock::now_ms;
use crate::domain::backoff::backoff;
use crate::wire::api::workers::WorkerStatus;

/// How soon a step wants the next one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pace {
    /// After the worker's interval (or its backoff after errors).
    Interval,
    /// Within this time, if it is shorter than the interval: something is
    /// about to change that the next step should act on at once.
    Within(Duration),
}

/// A step that is content with the interval.
pub async fn paced(step: impl Future<Output = Result<(), DaemonError>>) -> Result<Pace, DaemonError> {
    step.await.map(|()| Pace::Interval)
}

pub struct Worker {
    name: &'static str,
    interval: Duration,
    max_backoff: Duration,
    wake: Notify,
    status: Mutex<WorkerStatus>,
}

impl Worker {
    pub fn new(name: &'static str, interval: Duration, max_backoff: Duration) -> Worker {
        let status = WorkerStatus {
            name: name.to_string(),
            steps: 0,
            consecutive_errors: 0,
            last_success_at: None,
            last_error: None,
            last_error_at: None,
            next_step_at: None,
        };
        Worker { name, interval, max_backoff, wake: Notify::new(), status: Mutex::new(status) }
    }

    /// Runs the next step now instead of at the end of the wait.
    pub fn wake(&self) {
        self.wake.notify_one();
    }

    pub fn status(&self) -> WorkerStatus {
        self.status.lock().expect("worker status lock").clone()
    }

    /// Records a step's outcome and returns how long to wait before the next.
    fn record(&self, outcome: &Result<Pace, DaemonError>) -> Duration {
        let mut s = self.status.lock().expect("worker status lock");
        let now = now_ms();
        s.steps += 1;
        match outcome {
            Ok(_) => {
                s.consecutive_errors = 0;
                s.last_success_at = Some(now);
            }
            Err(e) => {
                s.consecutive_errors = s.consecutive_errors.saturating_add(1);
                s.last_error = Some(e.to_string());
                s.last_error_at = Some(now);
            }
        }
        let mut wait = backoff(self.interval, self.max_backoff, s.consecutive_errors);
        if let Ok(Pace::Within(soon)) = outcome {
            wait = wait.min(*soon);
        }
        s.next_step_at = Some(now + wait.as_millis() as i64);
        wait
    }

    /// Steps until `cancel` fires; a step under way finishes first (a
    /// removal step persists its state before it acts, and the act itself
    /// should not be cut off half-way).
    pub async fn run<F, Fut>(&self, cancel: CancellationToken, mut step: F)
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<Pace, DaemonError>>,
    {
        loop {
            let outcome = step().instrument(tracing::info_span!("worker", name = self.name)).await;
            if let Err(e) = &outcome {
                tracing::error!(worker = self.name, "step failed: {e}");
            }
            let wait = self.record(&outcome);
            tokio::select! {
                _ = cancel.cancelled() => return,
                _ = self.wake.notified() => {}
                _ = tokio::time::sleep(wait) => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::sync::Arc;

    use super::*;

    #[tokio::test(start_paused = true)]
    async fn backs_off_after_errors_and_recovers() {
        let worker = Arc::new(Worker::new("test", Duration::from_secs(1), Duration::from_secs(8)));
        let calls = Arc::new(AtomicU32::new(0));
        let cancel = CancellationToken::new();
        let w = worker.clone();
        let c = calls.clone();
        let task = tokio::spawn({
            let cancel = cancel.clone();
            async move {
                w.run(cancel, || {
                    let n = c.fetch_add(1, Ordering::SeqCst);
                    async move {
                        if n < 3 {
                            Err(DaemonError::CannotAct(format!("failure {n}")))
                        } else {
                            Ok(Pace::Interval)
                        }
                    }
                })
                .await
            }
        });
        // Steps at 0 s, then after 2 s, 4 s and 8 s of backoff: the fourth at 14 s.
        tokio::time::sleep(Duration::from_millis(13_900)).await;
        assert_eq!(calls.load(Ordering::SeqCst), 3);
        let s = worker.status();
        assert_eq!((s.consecutive_errors, s.last_error.as_deref()), (3, Some("failure 2")));
        assert_eq!(s.last_success_at, None);
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert_eq!(calls.load(Ordering::SeqCst), 4);
        let s = worker.status();
        assert_eq!(s.consecutive_errors, 0, "a success resets the count");
        assert!(s.last_success_at.is_some() && s.last_error.is_some(), "the last error stays visible");
        // Woken, it steps at once; cancelled, it ends.
        worker.wake();
        tokio::time::sleep(Duration::from_millis(10)).await;
        assert_eq!(calls.load(Ordering::SeqCst), 5);
        cancel.cancel();
        task.await.unwrap();
        assert_eq!(worker.status().steps, 5);
    }

    #[tokio::test(start_paused = true)]
    async fn a_step_may_ask_for_the_next_sooner_but_not_later() {
        let worker = Arc::new(Worker::new("test", Duration::from_secs(10), Duration::from_secs(60)));
        let calls = Arc::new(AtomicU32::new(0));
        let cancel = CancellationToken::new();
        let (w, c, stop) = (worker.clone(), calls.clone(), cancel.clone());
        let task = tokio::spawn(async move {
            w.run(stop, || {
                let n = c.fetch_add(1, Ordering::SeqCst);
                // Three quick looks (a gate about to open), then content with the interval;
                // a request for later than the interval does not stretch it.
                let pace = match n {
                    0..=2 => Pace::Within(Duration::from_millis(500)),
                    3 => Pace::Within(Duration::from_secs(60)),
                    _ => Pace::Interval,
                };
                async move { Ok(pace) }
            })
            .await
        });
        tokio::time::sleep(Duration::from_millis(1_600)).await;
        assert_eq!(calls.load(Ordering::SeqCst), 4, "steps at 0, 0.5, 1.0 and 1.5 s");
        tokio::time::sleep(Duration::from_millis(10_000)).await;
        assert_eq!(calls.load(Ordering::SeqCst), 5, "then the 10 s interval, not 60 s");
        cancel.cancel();
        task.await.unwrap();
    }
}
