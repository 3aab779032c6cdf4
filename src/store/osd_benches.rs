//! Per-OSD benches: each one stored when asked (`queued`), marked
//! `running` before `ceph tell` is issued, and finished with its numbers
//! or its error. A bench found `running` when the worker starts was cut
//! off by a restart: it is marked failed, not run again.

use super::{Result, Store, StoreError, Topic};
use crate::domain::bench::osd::OsdBenchResult;
use crate::wire::api::bench::{BenchState, OsdBench, OsdBenchTarget};

impl Store {
    /// Queues benches, all or none.
    pub async fn add_osd_benches(
        &self,
        benches: &[OsdBenchTarget],
        actor: Option<&str>,
        now: i64,
    ) -> Result<Vec<OsdBench>> {
        let ids = self.backend.add_osd_benches(benches, actor, now).await?;
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            out.push(self.osd_bench(id).await?);
        }
        Ok(out)
    }

    pub async fn osd_bench(&self, id: i64) -> Result<OsdBench> {
        self.backend.osd_bench(id).await?.ok_or_else(|| StoreError::NotFound(format!("no OSD bench {id}")))
    }

    /// BenchCodec in this state, oldest first.
    pub async fn osd_benches_in(&self, state: BenchState) -> Result<Vec<OsdBench>> {
        self.backend.osd_benches_in(state).await
    }

    /// The latest bench of each OSD (whatever its state), by OSD id.
    pub async fn latest_osd_benches(&self) -> Result<Vec<OsdBench>> {
        self.backend.latest_osd_benches().await
    }

    /// The latest successful bench of each OSD, by OSD id.
    pub async fn latest_done_osd_benches(&self) -> Result<Vec<OsdBench>> {
        self.backend.latest_done_osd_benches().await
    }

    /// The last `limit` benches, newest first.
    pub async fn osd_bench_history(&self, limit: i64) -> Result<Vec<OsdBench>> {
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
    ) -> Result<OsdBench> {
        self.backend.finish_osd_bench(id, &outcome, now).await?;
        self.changed(Topic::OsdBenches);
        self.osd_bench(id).await
    }

    /// Marks every `running` bench failed with `why` (they were cut off).
    pub async fn interrupt_osd_benches(&self, why: &str, now: i64) -> Result<Vec<OsdBench>> {
        let running = self.backend.interrupt_osd_benches(why, now).await?;
        self.changed(Topic::OsdBenches);
        Ok(running)
    }
}
