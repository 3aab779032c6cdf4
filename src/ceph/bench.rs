//! What benchmarks ask of the cluster: `ceph tell osd.N bench`, the OSDs'
//! hardware as their metadata reports it, and (for `rados bench`) a test
//! pool's life. A separate trait so that an adapter without benchmarks
//! (the simulator) says so instead of inventing numbers.

use futures::future::BoxFuture;

use super::CephError;
use crate::domain::bench::osd::OsdBenchResult;

/// What makes an OSD comparable to others, from `ceph osd metadata`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OsdHardware {
    pub id: u32,
    pub hostname: String,
    /// `bluestore_bdev_type` (hdd, ssd, nvme): the class the OSD detected.
    pub device_class: Option<String>,
    pub size_bytes: Option<u64>,
    pub model: Option<String>,
}

fn unsupported<T: Send + 'static>(what: &str) -> BoxFuture<'static, Result<T, CephError>> {
    let what = what.to_string();
    Box::pin(async move { Err(CephError::Unsupported { what }) })
}

pub trait CephBench: Send + Sync {
    /// `ceph tell osd.N bench BYTES BLOCK_SIZE`.
    fn osd_bench(&self, _id: u32, _bytes: u64, _block: u64) -> BoxFuture<'_, Result<OsdBenchResult, CephError>> {
        unsupported("ceph tell osd.N bench")
    }

    /// Every OSD's hardware (`ceph osd metadata`).
    fn osd_hardware(&self) -> BoxFuture<'_, Result<Vec<OsdHardware>, CephError>> {
        unsupported("ceph osd metadata")
    }
}
