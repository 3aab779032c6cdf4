//! `osdkeeper bench osds [ID...|--all] [--bytes N] [--block-size N]`:
//! queues per-OSD benches on the daemon, waits for them (the daemon runs
//! them; Ctrl-C stops only the waiting) and prints each OSD's latest
//! result with the outliers; `--results` prints them without a new run.
//! `bench cluster [--pool P] [--seconds N] [--label TEXT]` runs `rados
//! bench` the same way (queued, waited for); `bench ls`, `bench show ID`,
//! `bench compare A B` read the stored runs.

use std::collections::HashSet;
use std::process::ExitCode;
use std::time::Duration;

use super::out;
use super::remote::{parse_ids, Remote};
use crate::client::{Client, ClientError};
use crate::render::bench::{cluster_run_text, cluster_runs_table, comparison_text, osd_bench_table};
use crate::wire::api::bench::{ClusterBenchBody, ClusterRunQuery, OsdBench, OsdBenchBody, OsdBenchQuery};

#[derive(clap::Subcommand, Debug)]
pub enum BenchCmd {
    /// `ceph tell osd.N bench` on OSDs, one per host at a time, and the outliers among comparable OSDs.
    Osds {
        /// OSD ids (N or osd.N).
        ids: Vec<String>,
        /// Every OSD that is up.
        #[arg(long, conflicts_with = "ids")]
        all: bool,
        /// Bytes each OSD writes [default: 1 GiB, as Ceph's].
        #[arg(long)]
        bytes: Option<u64>,
        /// Size of each write [default: 4 MiB].
        #[arg(long)]
        block_size: Option<u64>,
        /// Queue the benches and return without waiting for them.
        #[arg(long, conflicts_with = "results")]
        no_wait: bool,
        /// Print each OSD's latest result (and the outliers) without running a bench.
        #[arg(long, conflicts_with_all = ["all", "bytes", "block_size"])]
        results: bool,
    },
    /// `rados bench` write, seq and rand on a test pool made for the run (or --pool), stored with the cluster's shape.
    Cluster {
        /// Run in this pool instead of a test pool made and removed for the run.
        #[arg(long)]
        pool: Option<String>,
        /// Seconds per pass [default: 60].
        #[arg(long)]
        seconds: Option<u32>,
        /// Placement groups of the test pool [default: 32].
        #[arg(long, conflicts_with = "pool")]
        pg_num: Option<u32>,
        /// Words to find the run by later ("before the disk swap").
        #[arg(long)]
        label: Option<String>,
        /// Run although the cluster is not HEALTH_OK or a drain runs.
        #[arg(long)]
        force: bool,
        /// With --pool: write into a pool that already holds objects (only the run's own are removed).
        #[arg(long, requires = "pool")]
        allow_pool_with_data: bool,
        /// Queue the run and return without waiting for it.
        #[arg(long)]
        no_wait: bool,
    },
    /// Cluster benchmarks, newest first.
    Ls {
        /// At most this many.
        #[arg(long, default_value_t = 50)]
        limit: i64,
    },
    /// One cluster benchmark: its cluster, each pass, its warnings.
    Show { id: i64 },
    /// Two cluster benchmarks side by side, with the change from A to B in percent.
    Compare { a: i64, b: i64 },
}

/// How often the CLI looks whether its benches are done.
const POLL: Duration = Duration::from_millis(500);

pub async fn run(r: &Remote, cmd: BenchCmd) -> Result<ExitCode, ClientError> {
    let c = r.client()?;
    match cmd {
        BenchCmd::Osds { results: true, ids, .. } => {
            let ids = parse_ids(&ids)?;
            let mut rows = c.osd_benches(&OsdBenchQuery::default()).await?;
            if !ids.is_empty() {
                rows.retain(|b| ids.contains(&b.target.osd_id));
            }
            out::answer(r.format, &rows, |rows| osd_bench_table(rows));
        }
        BenchCmd::Osds { ids, all, bytes, block_size, no_wait, .. } => {
            if ids.is_empty() && !all {
                return Err(ClientError::Usage("bench osds needs OSD ids or --all, e.g. `bench osds 3 7`".into()));
            }
            let body = OsdBenchBody { ids: parse_ids(&ids)?, all, bytes, block_size };
            let queued = c.bench_osds(&body).await?;
            if no_wait {
                if !out::structured(r.format, &queued) {
                    out::line(format!(
                        "Queued {} OSD bench(es); follow with `osdkeeper bench osds --results`",
                        queued.len()
                    ));
                }
                return Ok(ExitCode::SUCCESS);
            }
            let rows = wait_for(&c, &queued).await?;
            out::answer(r.format, &rows, |rows| osd_bench_table(rows));
        }
        BenchCmd::Cluster { pool, seconds, pg_num, label, force, allow_pool_with_data, no_wait } => {
            let body = ClusterBenchBody { pool, seconds, pg_num, label, force, allow_pool_with_data };
            let mut run = c.bench_cluster(&body).await?;
            if no_wait {
                if !out::structured(r.format, &run) {
                    out::line(format!(
                        "Queued cluster benchmark {}; follow with `osdkeeper bench show {}`",
                        run.bench_id, run.bench_id
                    ));
                }
                return Ok(ExitCode::SUCCESS);
            }
            while !run.bench.phase.is_finished() {
                tokio::time::sleep(POLL).await;
                run = c.cluster_run(run.bench_id).await?;
            }
            out::answer(r.format, &run, cluster_run_text);
            if run.bench.failure.is_some() {
                return Ok(ExitCode::from(super::exit::INVALID));
            }
        }
        BenchCmd::Ls { limit } => {
            let rows = c.cluster_runs(&ClusterRunQuery { limit: Some(limit) }).await?;
            out::answer(r.format, &rows, |rows| cluster_runs_table(rows));
        }
        BenchCmd::Show { id } => out::answer(r.format, &c.cluster_run(id).await?, cluster_run_text),
        BenchCmd::Compare { a, b } => out::answer(r.format, &c.compare_runs(a, b).await?, comparison_text),
    }
    Ok(ExitCode::SUCCESS)
}

/// The latest results once every bench of `queued` has finished.
async fn wait_for(c: &Client, queued: &[OsdBench]) -> Result<Vec<OsdBench>, ClientError> {
    let ids: HashSet<i64> = queued.iter().map(|b| b.bench_id).collect();
    let osds: HashSet<u32> = queued.iter().map(|b| b.target.osd_id).collect();
    loop {
        let latest = c.osd_benches(&OsdBenchQuery::default()).await?;
        let open = latest.iter().any(|b| ids.contains(&b.bench_id) && !b.state.is_finished());
        if !open {
            return Ok(latest.into_iter().filter(|b| osds.contains(&b.target.osd_id)).collect());
        }
        tokio::time::sleep(POLL).await;
    }
}
