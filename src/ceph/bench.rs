//! What benchmarks ask of the cluster: `ceph tell osd.N bench`, the OSDs'
//! hardware as their metadata reports it, and (for `rados bench`) a test
//! pool's life. A separate trait so that an adapter without benchmarks
//! (the simulator) says so instead of inventing numbers.

use futures::future::BoxFuture;

use super::CephError;
use crate::domain::bench::cluster::{Pass, PassResult};
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

/// A pool as a benchmark needs to know it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolInfo {
    pub size: u32,
    pub pg_num: u32,
    pub objects: u64,
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

    /// `ceph health`: HEALTH_OK, HEALTH_WARN or HEALTH_ERR.
    fn health(&self) -> BoxFuture<'_, Result<String, CephError>> {
        unsupported("ceph health")
    }

    /// A pool's replica count, PGs and objects; none if it does not exist.
    fn pool(&self, _name: &str) -> BoxFuture<'_, Result<Option<PoolInfo>, CephError>> {
        unsupported("ceph osd pool ls detail")
    }

    /// The state of each of a pool's PGs (`pg ls-by-pool`).
    fn pool_pg_states(&self, _name: &str) -> BoxFuture<'_, Result<Vec<String>, CephError>> {
        unsupported("ceph pg ls-by-pool")
    }

    /// Makes a replicated pool tagged with `application` (a pool that
    /// exists already is fine).
    fn create_pool(&self, _name: &str, _pg_num: u32, _application: &str) -> BoxFuture<'_, Result<(), CephError>> {
        unsupported("ceph osd pool create")
    }

    /// Removes a pool (one that does not exist is fine).
    fn delete_pool(&self, _name: &str) -> BoxFuture<'_, Result<(), CephError>> {
        unsupported("ceph osd pool delete")
    }

    /// `rados -p POOL bench SECONDS MODE --run-name RUN` (write keeps its objects).
    fn rados_bench(
        &self,
        _pool: &str,
        _pass: Pass,
        _seconds: u32,
        _run_name: &str,
    ) -> BoxFuture<'_, Result<PassResult, CephError>> {
        unsupported("rados bench")
    }

    /// `rados -p POOL cleanup --run-name RUN`: the objects of one run.
    fn rados_cleanup(&self, _pool: &str, _run_name: &str) -> BoxFuture<'_, Result<(), CephError>> {
        unsupported("rados cleanup")
    }
}
