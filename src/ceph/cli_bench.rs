//! `CephBench` over the `ceph` and `rados` command lines. Benches run
//! longer than queries, so each has its own bound.

use std::time::Duration;

use futures::future::BoxFuture;

use super::bench::{CephBench, OsdHardware, PoolInfo};
use super::cli::CephCli;
use super::rados_wire::parse_pass;
use super::wire::{Df, Health, OsdBenchOutput, OsdMetadata, PgDump, PoolDetail};
use super::CephError;
use crate::domain::bench::cluster::{Pass, PassResult};
use crate::domain::bench::osd::OsdBenchResult;

/// How long one `ceph tell osd.N bench` may take: Ceph's default (1 GiB)
/// at 2 MB/s. A disk slower than that is failing, and the bench says so
/// by timing out.
const OSD_BENCH_BOUND: Duration = Duration::from_secs(600);

fn decode<T: serde::de::DeserializeOwned>(command: &str, stdout: &str) -> Result<T, CephError> {
    serde_json::from_str(stdout.trim())
        .map_err(|e| CephError::Decode { command: command.to_string(), message: e.to_string() })
}

impl CephBench for CephCli {
    fn osd_bench(&self, id: u32, bytes: u64, block: u64) -> BoxFuture<'_, Result<OsdBenchResult, CephError>> {
        Box::pin(async move {
            let (osd, bytes, block) = (format!("osd.{id}"), bytes.to_string(), block.to_string());
            let args = ["tell", &osd, "bench", &bytes, &block, "--format", "json"];
            let out = self.run_within(&args, OSD_BENCH_BOUND.max(self.timeout)).await?;
            let command = args[..5].join(" ");
            if out.code != 0 {
                return Err(CephError::Command { command, code: out.code, message: super::cli::clean(&out.stderr) });
            }
            let o: OsdBenchOutput = decode(&command, &out.stdout)?;
            Ok(OsdBenchResult { bytes_per_sec: o.bytes_per_sec, iops: o.iops, elapsed_s: o.elapsed_sec })
        })
    }

    fn osd_hardware(&self) -> BoxFuture<'_, Result<Vec<OsdHardware>, CephError>> {
        Box::pin(async move {
            let all: Vec<OsdMetadata> = self.json(&["osd", "metadata"]).await?;
            Ok(all
                .into_iter()
                .filter_map(|m| {
                    Some(OsdHardware {
                        id: m.id?,
                        hostname: m.hostname,
                        device_class: m.bluestore_bdev_type.filter(|t| !t.is_empty()),
                        size_bytes: m.bluestore_bdev_size.and_then(|s| s.parse().ok()),
                        model: None,
                    })
                })
                .collect())
        })
    }

    fn health(&self) -> BoxFuture<'_, Result<String, CephError>> {
        Box::pin(async move {
            let h: Health = self.json(&["health"]).await?;
            Ok(h.said())
        })
    }

    fn pool_pg_states(&self, name: &str) -> BoxFuture<'_, Result<Vec<String>, CephError>> {
        let name = name.to_string();
        Box::pin(async move {
            let dump: PgDump = self.json(&["pg", "ls-by-pool", &name]).await?;
            Ok(dump.pg_stats.into_iter().map(|p| p.state).collect())
        })
    }

    fn pool(&self, name: &str) -> BoxFuture<'_, Result<Option<PoolInfo>, CephError>> {
        let name = name.to_string();
        Box::pin(async move {
            let pools: Vec<PoolDetail> = self.json(&["osd", "pool", "ls", "detail"]).await?;
            let Some(p) = pools.into_iter().find(|p| p.pool_name == name) else {
                return Ok(None);
            };
            let df: Df = self.json(&["df"]).await?;
            let objects = df.pools.iter().find(|d| d.name == name).map_or(0, |d| d.stats.objects);
            Ok(Some(PoolInfo { size: p.size, pg_num: p.pg_num, objects }))
        })
    }

    fn create_pool(&self, name: &str, pg_num: u32, application: &str) -> BoxFuture<'_, Result<(), CephError>> {
        let (name, application) = (name.to_string(), application.to_string());
        Box::pin(async move {
            let pg = pg_num.to_string();
            self.ok(&["osd", "pool", "create", &name, &pg, &pg, "replicated"]).await?;
            // The run's PG count is part of its shape: the autoscaler (on by
            // default) must not split or merge them during the passes.
            self.ok(&["osd", "pool", "set", &name, "pg_autoscale_mode", "off"]).await?;
            // Without an application the cluster warns (POOL_APP_NOT_ENABLED).
            self.ok(&["osd", "pool", "application", "enable", &name, &application]).await.map(|_| ())
        })
    }

    fn delete_pool(&self, name: &str) -> BoxFuture<'_, Result<(), CephError>> {
        let name = name.to_string();
        Box::pin(async move {
            // The name twice and the flag are how Ceph asks for intent; the
            // daemon made this pool for the run and nothing else is in it.
            self.ok(&["osd", "pool", "delete", &name, &name, "--yes-i-really-really-mean-it"]).await.map(|_| ())
        })
    }

    fn rados_bench(
        &self,
        pool: &str,
        pass: Pass,
        seconds: u32,
        run_name: &str,
    ) -> BoxFuture<'_, Result<PassResult, CephError>> {
        let (pool, run_name) = (pool.to_string(), run_name.to_string());
        Box::pin(async move {
            let secs = seconds.to_string();
            let mut args = vec!["-p", &pool, "bench", &secs, pass.as_str(), "--run-name", &run_name, "-f", "json"];
            if pass == Pass::Write {
                args.push("--no-cleanup");
            }
            // The pass, then the writes still in flight, with room for a slow cluster.
            let seconds = Duration::from_secs(u64::from(seconds));
            let slack = self.bench_slack.unwrap_or(seconds + Duration::from_secs(60));
            let bound = (seconds + slack).max(self.timeout);
            let out = self.rados(&args, bound).await?;
            parse_pass(pass, &out.stdout)
                .map_err(|message| CephError::Decode { command: format!("rados bench {}", pass.as_str()), message })
        })
    }

    fn rados_cleanup(&self, pool: &str, run_name: &str) -> BoxFuture<'_, Result<(), CephError>> {
        let (pool, run_name) = (pool.to_string(), run_name.to_string());
        Box::pin(async move {
            let bound = Duration::from_secs(600).max(self.timeout);
            self.rados(&["-p", &pool, "cleanup", "--run-name", &run_name], bound).await.map(|_| ())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_the_program_that_ran() {
        let rados = CephError::Timeout { command: "rados -p bench bench 10 write".into(), seconds: 80 };
        assert_eq!(rados.to_string(), "`rados -p bench bench 10 write` did not finish within 80 s");
        let ceph = CephError::Command { command: "osd purge 3".into(), code: 16, message: "busy".into() };
        assert_eq!(ceph.to_string(), "`ceph osd purge 3` failed (exit 16): busy");
    }

    #[test]
    fn reads_the_bench_answer_of_16_2() {
        // As `ceph tell osd.0 bench 104857600 4194304 --format json` printed it on the sandbox.
        let o: OsdBenchOutput = decode(
            "tell osd.0 bench",
            r#"{"bytes_written":104857600,"blocksize":4194304,"elapsed_sec":0.45046787199999999,"bytes_per_sec":232774869.23640141,"iops":55.497853573894837}"#,
        )
        .unwrap();
        assert_eq!((o.bytes_per_sec.round(), o.elapsed_sec), (232774869.0, 0.450467872));
    }
}
