//! Group commit: writes of one kind that callers ask for at the same time
//! share one transaction. On the store in RADOS a commit costs ~13 ms
//! whatever it holds (BENCHMARKS.md), so thirty-two `host add` requests
//! arriving together cost one commit rather than thirty-two.
//!
//! The first caller to get the turn writes every write waiting then;
//! those that came while it wrote wait for the next turn, and one of them
//! writes them all. Each caller still gets its own answer, and only once
//! its write is committed.

use std::future::Future;
use std::sync::{Arc, Mutex};

use tokio::sync::oneshot;

use super::{Result, StoreError};

type Waiting<I, O> = Vec<(I, oneshot::Sender<Result<O>>)>;

pub(super) struct GroupCommit<I, O> {
    waiting: Mutex<Waiting<I, O>>,
    turn: Arc<tokio::sync::Mutex<()>>,
}

impl<I, O> Default for GroupCommit<I, O> {
    fn default() -> Self {
        GroupCommit { waiting: Mutex::new(Vec::new()), turn: Arc::new(tokio::sync::Mutex::new(())) }
    }
}

impl<I: Send + 'static, O: Send + 'static> GroupCommit<I, O> {
    /// Writes `item` with the others waiting: `write` gets them all and
    /// answers one result per item, in their order, from one transaction.
    pub async fn submit<F, Fut>(&self, item: I, write: F) -> Result<O>
    where
        F: FnOnce(Vec<I>) -> Fut,
        Fut: Future<Output = Result<Vec<O>>> + Send + 'static,
    {
        let (tx, mut rx) = oneshot::channel();
        self.waiting.lock().expect("group commit lock").push((item, tx));
        // A caller whose write another turn took is answered from there at
        // once, not after the turns queued before its own.
        let turn = tokio::select! {
            biased;
            answer = &mut rx => return answer.unwrap_or_else(|_| Err(cut_off())),
            turn = self.turn.clone().lock_owned() => turn,
        };
        let mut batch = std::mem::take(&mut *self.waiting.lock().expect("group commit lock"));
        // A caller gone before its write began (its client hung up) has
        // nothing written: no one would be told, and it may come back.
        batch.retain(|(_, caller)| !caller.is_closed());
        if batch.is_empty() {
            // The turn before took this item: its answer comes from there.
            drop(turn);
        } else {
            let (items, callers): (Vec<I>, Vec<_>) = batch.into_iter().unzip();
            tracing::debug!(writes = items.len(), "group commit");
            let written = write(items);
            // A task of its own, holding the turn: a caller whose client
            // hangs up is dropped, and must not cut off the others' write.
            tokio::spawn(async move {
                let _turn = turn;
                match written.await {
                    Ok(outs) if outs.len() == callers.len() => {
                        for (caller, out) in callers.into_iter().zip(outs) {
                            // A caller gone has no one to tell: its write is in all the same.
                            let _ = caller.send(Ok(out));
                        }
                    }
                    Ok(outs) => {
                        let why = format!("a group write answered {} results for {} writes", outs.len(), callers.len());
                        tracing::error!("{why}");
                        for caller in callers {
                            let _ = caller.send(Err(StoreError::Corrupt(why.clone())));
                        }
                    }
                    Err(e) => {
                        for caller in callers {
                            let _ = caller.send(Err(e.clone()));
                        }
                    }
                }
            });
        }
        rx.await.unwrap_or_else(|_| Err(cut_off()))
    }
}

fn cut_off() -> StoreError {
    StoreError::Unavailable("the daemon stopped before the write ended".into())
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use tokio::task::JoinHandle;

    use super::*;

    /// A group whose writes wait 20 ms each, as a commit to RADOS would,
    /// answer ten times each item, fail when they hold `fail_on`, and are
    /// counted.
    #[derive(Clone, Default)]
    struct Fixture {
        group: Arc<GroupCommit<u32, u32>>,
        transactions: Arc<AtomicUsize>,
        written: Arc<Mutex<Vec<u32>>>,
    }

    impl Fixture {
        fn spawn(&self, item: u32, fail_on: Option<u32>) -> JoinHandle<Result<u32>> {
            let f = self.clone();
            tokio::spawn(async move { f.submit(item, fail_on).await })
        }

        async fn submit(&self, item: u32, fail_on: Option<u32>) -> Result<u32> {
            let (transactions, written) = (self.transactions.clone(), self.written.clone());
            self.group
                .submit(item, move |items: Vec<u32>| async move {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    transactions.fetch_add(1, Ordering::SeqCst);
                    written.lock().unwrap().extend(&items);
                    if fail_on.is_some_and(|f| items.contains(&f)) {
                        return Err(StoreError::Unavailable("the pool is full".into()));
                    }
                    Ok(items.into_iter().map(|i| i * 10).collect())
                })
                .await
        }

        fn transactions(&self) -> usize {
            self.transactions.load(Ordering::SeqCst)
        }

        fn written(&self) -> Vec<u32> {
            let mut w = self.written.lock().unwrap().clone();
            w.sort();
            w
        }
    }

    async fn tick() {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }

    #[tokio::test(start_paused = true)]
    async fn callers_at_the_same_time_share_a_transaction_and_each_gets_its_answer() {
        let f = Fixture::default();
        let calls: Vec<_> = (0..32).map(|i| f.spawn(i, None)).collect();
        let answers: Vec<u32> =
            futures::future::join_all(calls).await.into_iter().map(|r| r.unwrap().unwrap()).collect();
        assert_eq!(answers, (0..32).map(|i| i * 10).collect::<Vec<_>>(), "each caller its own answer");
        let n = f.transactions();
        assert!(n <= 2, "32 callers at once: the first alone, then the rest together; {n} transactions");
    }

    #[tokio::test(start_paused = true)]
    async fn a_caller_written_by_another_turn_is_answered_without_waiting_for_the_next_turns() {
        let f = Fixture::default();
        let start = tokio::time::Instant::now();
        let first = f.spawn(0, None);
        tick().await;
        // 1-9 come during the first write: the second write takes them all.
        let batch: Vec<_> = (1..10).map(|i| f.spawn(i, None)).collect();
        tokio::time::sleep(Duration::from_millis(21)).await;
        // 10 comes during the second write, which ends at 40 ms; its own write then takes 20 ms more.
        let late = f.spawn(10, None);
        first.await.unwrap().unwrap();
        for call in batch {
            call.await.unwrap().unwrap();
        }
        let answered = start.elapsed();
        assert!(
            answered < Duration::from_millis(45),
            "1-9 answered when their write ended, not after 10's: {answered:?}"
        );
        late.await.unwrap().unwrap();
        assert!(start.elapsed() >= Duration::from_millis(60), "10 waited for its own write: {:?}", start.elapsed());
        assert_eq!(f.transactions(), 3);
    }

    #[tokio::test(start_paused = true)]
    async fn one_after_another_each_has_its_own() {
        let f = Fixture::default();
        for i in 0..3 {
            assert_eq!(f.submit(i, None).await.unwrap(), i * 10);
        }
        assert_eq!(f.transactions(), 3);
    }

    #[tokio::test(start_paused = true)]
    async fn a_failed_transaction_fails_every_caller_in_it_and_not_the_next() {
        let f = Fixture::default();
        // The first takes the turn alone; 1 and 2 wait and share the failing one.
        let first = f.spawn(0, None);
        tick().await;
        let shared: Vec<_> = (1..3).map(|i| f.spawn(i, Some(2))).collect();
        assert_eq!(first.await.unwrap().unwrap(), 0);
        for s in shared {
            let e = s.await.unwrap().unwrap_err();
            assert!(e.to_string().contains("the pool is full"), "{e}");
        }
        assert_eq!(f.submit(3, None).await.unwrap(), 30, "the next write goes on");
        assert_eq!(f.transactions(), 3);
    }

    #[tokio::test(start_paused = true)]
    async fn a_caller_gone_before_its_write_began_has_nothing_written() {
        let f = Fixture::default();
        let first = f.spawn(0, None);
        tick().await;
        let gone = f.spawn(1, None);
        let stays = f.spawn(2, None);
        tick().await;
        // 1 and 2 wait for the first write; 1's client hangs up meanwhile.
        gone.abort();
        assert_eq!(first.await.unwrap().unwrap(), 0);
        assert_eq!(stays.await.unwrap().unwrap(), 20);
        assert_eq!(f.written(), [0, 2], "1 was never written");
    }

    #[tokio::test(start_paused = true)]
    async fn a_caller_dropped_while_it_writes_does_not_cut_off_the_others() {
        let f = Fixture::default();
        let first = f.spawn(0, None);
        tick().await;
        let leader = f.spawn(1, None);
        let follower = f.spawn(2, None);
        tokio::time::sleep(Duration::from_millis(25)).await;
        // 1 and 2 now share the second transaction, which 1 started; 1's client hangs up.
        leader.abort();
        assert_eq!(first.await.unwrap().unwrap(), 0);
        assert_eq!(follower.await.unwrap().unwrap(), 20);
        assert_eq!(f.transactions(), 2);
    }
}
