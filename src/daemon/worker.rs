//! One shape for every background loop (the inventory poller, the
//! reconciler, the workers of removals, deployments, swaps and benchmarks,
//! whose steps are the operation kernel's rounds, and the read model's):
//! one step at a time; after a step, wait for the interval, or less when
//! woken (`wake`: an apply wakes the reconciler, `osd rm` the removal
//! worker, a new deployment the deployment worker, `osd replace` the swap
//! worker), or within a short time that lets a burst gather
//! (`wake_within`), or when the step asks to look again soon
//! (`Pace::Within`: an operation's next look, such as a removal's by
//! `domain::removal::cadence`; the poller's next due host), or
//! more after errors (doubled per error in a row, up to a bound); stop
//! between steps when the daemon shuts down, a step under way finished
//! first. Each step runs in a `tracing` span named for its worker, and
//! what it did last is kept for `/api/v1/workers` and `/metrics`.

use std::future::Future;
use std::sync::Mutex;
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;
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
    /// The earliest next step a `wake_within` asked for, and the call that
    /// tells a waiting loop to look at it.
    due: Mutex<Option<Instant>>,
    rearm: Notify,
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
        Worker {
            name,
            interval,
            max_backoff,
            wake: Notify::new(),
            due: Mutex::new(None),
            rearm: Notify::new(),
            status: Mutex::new(status),
        }
    }

    /// Runs the next step now instead of at the end of the wait.
    pub fn wake(&self) {
        self.wake.notify_one();
    }

    /// Runs the next step within `gather`, not later than it would have:
    /// the calls in that time share one step. The read model's worker is
    /// woken so by the store's writes (a poll round writes hundreds a
    /// second), the poller by hosts added through the API (a script adding
    /// hosts one request at a time gets one inventory commit per `gather`
    /// rather than per host).
    pub fn wake_within(&self, gather: Duration) {
        let at = Instant::now() + gather;
        let mut due = self.due.lock().expect("worker due lock");
        if due.is_none_or(|d| at < d) {
            *due = Some(at);
            self.rearm.notify_one();
        }
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
            let until = Instant::now() + self.record(&outcome);
            loop {
                let due = self.due.lock().expect("worker due lock").map_or(until, |d| d.min(until));
                tokio::select! {
                    _ = cancel.cancelled() => return,
                    _ = self.wake.notified() => break,
                    _ = self.rearm.notified() => continue,
                    _ = tokio::time::sleep_until(due) => break,
                }
            }
            // Cleared before the step: a `wake_within` during it asks for the next one.
            *self.due.lock().expect("worker due lock") = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::sync::Arc;

    use tokio::task::JoinHandle;

    use super::*;

    /// A worker running steps whose outcome `step` gives by their number
    /// (from 0), counted.
    struct Running {
        worker: Arc<Worker>,
        calls: Arc<AtomicU32>,
        cancel: CancellationToken,
        task: JoinHandle<()>,
    }

    impl Running {
        fn start(
            interval: Duration,
            max_backoff: Duration,
            step: impl Fn(u32) -> Result<Pace, DaemonError> + Send + Sync + 'static,
        ) -> Running {
            let worker = Arc::new(Worker::new("test", interval, max_backoff));
            let calls = Arc::new(AtomicU32::new(0));
            let cancel = CancellationToken::new();
            let (w, c, stop) = (worker.clone(), calls.clone(), cancel.clone());
            let task = tokio::spawn(async move {
                w.run(stop, || {
                    let outcome = step(c.fetch_add(1, Ordering::SeqCst));
                    async move { outcome }
                })
                .await
            });
            Running { worker, calls, cancel, task }
        }

        fn calls(&self) -> u32 {
            self.calls.load(Ordering::SeqCst)
        }

        async fn stop(self) -> Arc<Worker> {
            self.cancel.cancel();
            self.task.await.unwrap();
            self.worker
        }
    }

    async fn sleep_ms(ms: u64) {
        tokio::time::sleep(Duration::from_millis(ms)).await;
    }

    #[tokio::test(start_paused = true)]
    async fn backs_off_after_errors_and_recovers() {
        let r = Running::start(Duration::from_secs(1), Duration::from_secs(8), |n| {
            if n < 3 {
                Err(DaemonError::CannotAct(format!("failure {n}")))
            } else {
                Ok(Pace::Interval)
            }
        });
        // Steps at 0 s, then after 2 s, 4 s and 8 s of backoff: the fourth at 14 s.
        sleep_ms(13_900).await;
        assert_eq!(r.calls(), 3);
        let s = r.worker.status();
        assert_eq!((s.consecutive_errors, s.last_error.as_deref()), (3, Some("failure 2")));
        assert_eq!(s.last_success_at, None);
        sleep_ms(200).await;
        assert_eq!(r.calls(), 4);
        let s = r.worker.status();
        assert_eq!(s.consecutive_errors, 0, "a success resets the count");
        assert!(s.last_success_at.is_some() && s.last_error.is_some(), "the last error stays visible");
        // Woken, it steps at once; cancelled, it ends.
        r.worker.wake();
        sleep_ms(10).await;
        assert_eq!(r.calls(), 5);
        assert_eq!(r.stop().await.status().steps, 5);
    }

    #[tokio::test(start_paused = true)]
    async fn wakes_within_a_gather_time_share_one_step() {
        let r = Running::start(Duration::from_secs(10), Duration::from_secs(60), |_| Ok(Pace::Interval));
        sleep_ms(10).await;
        assert_eq!(r.calls(), 1, "the first step at once");
        // Five wakes 50 ms apart, each within 300 ms: one step, 300 ms after the first.
        for _ in 0..5 {
            r.worker.wake_within(Duration::from_millis(300));
            sleep_ms(50).await;
        }
        assert_eq!(r.calls(), 1, "250 ms after the first wake: still gathering");
        sleep_ms(60).await;
        assert_eq!(r.calls(), 2, "one step for the five");
        // A wake within a longer time than the interval does not delay the step.
        sleep_ms(9_000).await;
        r.worker.wake_within(Duration::from_secs(60));
        sleep_ms(1_000).await;
        assert_eq!(r.calls(), 3, "the interval's step came first");
        sleep_ms(10_000).await;
        assert_eq!(r.calls(), 4, "and the asked time did not stretch the next");
        r.stop().await;
    }

    #[tokio::test(start_paused = true)]
    async fn a_step_may_ask_for_the_next_sooner_but_not_later() {
        // Three quick looks (a gate about to open), then content with the interval;
        // a request for later than the interval does not stretch it.
        let r = Running::start(Duration::from_secs(10), Duration::from_secs(60), |n| {
            Ok(match n {
                0..=2 => Pace::Within(Duration::from_millis(500)),
                3 => Pace::Within(Duration::from_secs(60)),
                _ => Pace::Interval,
            })
        });
        sleep_ms(1_600).await;
        assert_eq!(r.calls(), 4, "steps at 0, 0.5, 1.0 and 1.5 s");
        sleep_ms(10_000).await;
        assert_eq!(r.calls(), 5, "then the 10 s interval, not 60 s");
        r.stop().await;
    }
}
