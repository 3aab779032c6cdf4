//! Per-OSD benches: each one stored when asked (`queued`), marked
//! `running` before `ceph tell` is issued, and finished with its numbers
//! or its error. A bench found `running` when the worker starts was cut
//! off by a restart: it is marked failed, not run again.

use super::{Result, Store, StoreError, Topic};
use crate::domain::bench::osd::OsdBenchResult;

/// Where a bench is: stored before each change, so a restart finds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BenchState {
    Queued,
    Running,
    Done,
    Failed,
}

impl BenchState {
    pub const ALL: [BenchState; 4] = [BenchState::Queued, BenchState::Running, BenchState::Done, BenchState::Failed];

    pub fn as_str(self) -> &'static str {
        match self {
            BenchState::Queued => "queued",
            BenchState::Running => "running",
            BenchState::Done => "done",
            BenchState::Failed => "failed",
        }
    }

    pub fn parse(s: &str) -> Option<BenchState> {
        BenchState::ALL.into_iter().find(|b| b.as_str() == s)
    }

    pub fn is_finished(self) -> bool {
        matches!(self, BenchState::Done | BenchState::Failed)
    }
}

/// Which OSD a bench runs on, where, how much it writes, and what makes
/// the OSD comparable to others (as Ceph reported it when it was asked).
#[derive(Debug, Clone, PartialEq)]
pub struct BenchTarget {
    pub osd_id: u32,
    /// The host it runs on: at most one bench per host at a time.
    pub host: String,
    pub device_class: Option<String>,
    pub size_bytes: Option<u64>,
    pub model: Option<String>,
    pub bytes: u64,
    pub block_size: u64,
}

/// One per-OSD bench as stored: asked, running, or with its result.
#[derive(Debug, Clone, PartialEq)]
pub struct OsdBenchRow {
    pub bench_id: i64,
    pub target: BenchTarget,
    pub state: BenchState,
    pub requested_at: i64,
    pub started_at: Option<i64>,
    pub finished_at: Option<i64>,
    pub bytes_per_sec: Option<f64>,
    pub iops: Option<f64>,
    pub elapsed_s: Option<f64>,
    pub error: Option<String>,
}

impl Store {
    /// Queues benches, all or none.
    pub async fn add_osd_benches(
        &self,
        benches: &[BenchTarget],
        actor: Option<&str>,
        now: i64,
    ) -> Result<Vec<OsdBenchRow>> {
        let ids = self.backend.add_osd_benches(benches, actor, now).await?;
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            out.push(self.osd_bench(id).await?);
        }
        Ok(out)
    }

    pub async fn osd_bench(&self, id: i64) -> Result<OsdBenchRow> {
        self.backend.osd_bench(id).await?.ok_or_else(|| StoreError::NotFound(format!("no OSD bench {id}")))
    }

    /// BenchCodec in this state, oldest first.
    pub async fn osd_benches_in(&self, state: BenchState) -> Result<Vec<OsdBenchRow>> {
        self.backend.osd_benches_in(state).await
    }

    /// The latest bench of each OSD (whatever its state), by OSD id.
    pub async fn latest_osd_benches(&self) -> Result<Vec<OsdBenchRow>> {
        self.backend.latest_osd_benches().await
    }

    /// The latest successful bench of each OSD, by OSD id.
    pub async fn latest_done_osd_benches(&self) -> Result<Vec<OsdBenchRow>> {
        self.backend.latest_done_osd_benches().await
    }

    /// The last `limit` benches, newest first.
    pub async fn osd_bench_history(&self, limit: i64) -> Result<Vec<OsdBenchRow>> {
        self.backend.osd_bench_history(limit).await
    }

    /// Marks a queued bench as running (before `ceph tell` is issued);
    /// false if it was no longer queued.
    pub async fn start_osd_bench(&self, id: i64, now: i64) -> Result<bool> {
        self.backend.start_osd_bench(id, now).await
    }

    pub async fn finish_osd_bench(
        &self,
        id: i64,
        outcome: std::result::Result<OsdBenchResult, String>,
        now: i64,
    ) -> Result<OsdBenchRow> {
        self.backend.finish_osd_bench(id, &outcome, now).await?;
        self.changed(Topic::OsdBenches);
        self.osd_bench(id).await
    }

    /// Marks every `running` bench failed with `why` (they were cut off).
    pub async fn interrupt_osd_benches(&self, why: &str, now: i64) -> Result<Vec<OsdBenchRow>> {
        let running = self.backend.interrupt_osd_benches(why, now).await?;
        self.changed(Topic::OsdBenches);
        Ok(running)
    }
}
