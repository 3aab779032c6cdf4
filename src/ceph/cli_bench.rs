//! `CephBench` over the `ceph` and `rados` command lines. Benches run
//! longer than queries, so each has its own bound.

use std::time::Duration;

use futures::future::BoxFuture;

use super::bench::{CephBench, OsdHardware};
use super::cli::CephCli;
use super::wire::{OsdBenchOutput, OsdMetadata};
use super::CephError;
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
}

#[cfg(test)]
mod tests {
    use super::*;

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
