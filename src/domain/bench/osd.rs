//! How much a per-OSD bench (`ceph tell osd.N bench BYTES BLOCK`) writes,
//! and the bounds a request must keep.

/// Ceph's own defaults for `ceph tell osd.N bench`: 1 GiB in 4 MiB writes.
pub const DEFAULT_BYTES: u64 = 1 << 30;
pub const DEFAULT_BLOCK_SIZE: u64 = 4 << 20;
/// The OSD refuses blocks above `osd_bench_max_block_size` (64 MiB by default).
pub const MAX_BLOCK_SIZE: u64 = 64 << 20;
/// Below one filesystem block the numbers say nothing about the disk.
pub const MIN_BLOCK_SIZE: u64 = 4 << 10;
/// A bench writes real data onto a disk that serves clients: bounded so a
/// typo does not write a terabyte (10 GiB is ten times Ceph's default).
pub const MAX_BYTES: u64 = 10 << 30;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BenchSize {
    pub bytes: u64,
    pub block_size: u64,
}

/// What `ceph tell osd.N bench` measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OsdBenchResult {
    pub bytes_per_sec: f64,
    pub iops: f64,
    pub elapsed_s: f64,
}

/// The size asked for, or why it cannot be run (naming the field and value).
pub fn bench_size(bytes: Option<u64>, block_size: Option<u64>) -> Result<BenchSize, String> {
    let bytes = bytes.unwrap_or(DEFAULT_BYTES);
    let block_size = block_size.unwrap_or(DEFAULT_BLOCK_SIZE);
    if !(MIN_BLOCK_SIZE..=MAX_BLOCK_SIZE).contains(&block_size) {
        return Err(format!(
            "block_size {block_size} is out of range: the OSD benchmarks blocks of {MIN_BLOCK_SIZE} to {MAX_BLOCK_SIZE} bytes"
        ));
    }
    if bytes < block_size {
        return Err(format!("bytes {bytes} is less than one block of {block_size} bytes"));
    }
    if bytes > MAX_BYTES {
        return Err(format!(
            "bytes {bytes} is more than {MAX_BYTES} (10 GiB): a bench writes onto a disk that serves clients"
        ));
    }
    Ok(BenchSize { bytes, block_size })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_cephs_and_bounds_name_the_field() {
        assert_eq!(bench_size(None, None), Ok(BenchSize { bytes: 1 << 30, block_size: 4 << 20 }));
        assert_eq!(bench_size(Some(100 << 20), Some(4096)), Ok(BenchSize { bytes: 100 << 20, block_size: 4096 }));
        assert!(bench_size(None, Some(512)).unwrap_err().starts_with("block_size 512"));
        assert!(bench_size(None, Some(128 << 20)).unwrap_err().starts_with("block_size 134217728"));
        assert!(bench_size(Some(1000), Some(4096)).unwrap_err().starts_with("bytes 1000 is less"));
        assert!(bench_size(Some(11 << 30), None).unwrap_err().starts_with("bytes 11811160064 is more"));
    }
}
