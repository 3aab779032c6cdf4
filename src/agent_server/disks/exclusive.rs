//! Holding a block device exclusively and zeroing parts of it through that
//! same handle. Linux gives an `O_EXCL` open of a block device (without
//! `O_CREAT`) an exclusive claim: it fails with `EBUSY` while a mount, a
//! device-mapper or md holder, or another exclusive opener (a running
//! ceph-osd) has the device, and while the handle is open none of those can
//! take it. Checking and then opening again to wipe would leave a window in
//! which an OSD could start on the disk; wiping through the claimed handle
//! leaves none.

use std::fs::File;
use std::io::{Seek, SeekFrom};
use std::os::unix::fs::{FileExt, FileTypeExt, OpenOptionsExt};

use crate::agent_server::inventory::kernel::signatures;

/// `O_EXCL` from `asm-generic/fcntl.h` (0o200), which x86_64 and aarch64
/// use; this crate has no libc binding. Other targets get no exclusive
/// open, and therefore no wipe, rather than a guessed flag.
#[cfg(all(target_os = "linux", any(target_arch = "x86_64", target_arch = "aarch64")))]
const O_EXCL: Option<i32> = Some(0o200);
#[cfg(not(all(target_os = "linux", any(target_arch = "x86_64", target_arch = "aarch64"))))]
const O_EXCL: Option<i32> = None;

/// What a zap zeroes at each end of a device: enough for BlueStore and LVM
/// labels, a GPT and its backup, and filesystem superblocks at the start
/// (ceph-volume's own zap also zeroes 10 MiB).
pub const WIPE_LEN: u64 = 10 << 20;
const CHUNK: usize = 1 << 20;

#[derive(Debug, thiserror::Error)]
pub enum ExclusiveError {
    #[error("{path} is busy (an exclusive open failed with EBUSY)")]
    Busy { path: String },
    #[error("{path} is not a block device")]
    NotBlockDevice { path: String },
    #[error("exclusive opens are not implemented for this platform, so {path} is not wiped")]
    Unsupported { path: String },
    #[error("cannot {what} {path}: {source}")]
    Io { what: &'static str, path: String, source: std::io::Error },
}

/// A block device opened read-write with an exclusive claim, released when
/// dropped.
#[derive(Debug)]
pub struct ExclusiveDevice {
    file: File,
    pub path: String,
    pub size: u64,
}

impl ExclusiveDevice {
    pub fn open(path: &str) -> Result<ExclusiveDevice, ExclusiveError> {
        let Some(excl) = O_EXCL else {
            return Err(ExclusiveError::Unsupported { path: path.to_string() });
        };
        let io = |what, source| ExclusiveError::Io { what, path: path.to_string(), source };
        let file = std::fs::OpenOptions::new().read(true).write(true).custom_flags(excl).open(path).map_err(|e| {
            if e.kind() == std::io::ErrorKind::ResourceBusy {
                ExclusiveError::Busy { path: path.to_string() }
            } else {
                io("open", e)
            }
        })?;
        // Checked on the open handle: O_EXCL means a claim only for block
        // devices, and the path could have been swapped since it was listed.
        let meta = file.metadata().map_err(|e| io("inspect", e))?;
        if !meta.file_type().is_block_device() {
            return Err(ExclusiveError::NotBlockDevice { path: path.to_string() });
        }
        let size = (&file).seek(SeekFrom::End(0)).map_err(|e| io("find the size of", e))?;
        Ok(ExclusiveDevice { file, path: path.to_string(), size })
    }

    /// Checks that `path` could be claimed now, and lets go at once: for
    /// the devices stacked on a disk (LVs), which ceph-volume removes
    /// before the disk itself is claimed.
    pub fn probe(path: &str) -> Result<(), ExclusiveError> {
        let Some(excl) = O_EXCL else {
            return Err(ExclusiveError::Unsupported { path: path.to_string() });
        };
        match std::fs::OpenOptions::new().read(true).custom_flags(excl).open(path) {
            Ok(_) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::ResourceBusy => {
                Err(ExclusiveError::Busy { path: path.to_string() })
            }
            Err(source) => Err(ExclusiveError::Io { what: "open", path: path.to_string(), source }),
        }
    }

    /// The device number of what is held (`st_rdev`).
    pub fn rdev(&self) -> Option<u64> {
        use std::os::unix::fs::MetadataExt;
        self.file.metadata().ok().map(|m| m.rdev())
    }

    /// The first `len` bytes (fewer on a smaller device).
    pub fn read_head(&self, len: usize) -> Result<Vec<u8>, ExclusiveError> {
        read_head(&self.file, self.size, len).map_err(|source| self.io("read", source))
    }

    /// `len` bytes at `offset` (for the label copies).
    pub fn read_at(&self, offset: u64, len: usize) -> Result<Vec<u8>, ExclusiveError> {
        let mut buf = vec![0u8; len];
        self.file.read_exact_at(&mut buf, offset).map(|()| buf).map_err(|source| self.io("read", source))
    }

    pub fn zero(&self, offset: u64, len: u64) -> Result<(), ExclusiveError> {
        zero(&self.file, offset, len).map_err(|source| self.io("write zeros to", source))
    }

    /// Writes `bytes` at `offset` through the claimed handle.
    pub fn write_at(&self, offset: u64, bytes: &[u8]) -> Result<(), ExclusiveError> {
        self.file.write_all_at(bytes, offset).map_err(|source| self.io("write to", source))
    }

    /// Flushes the writes to the device before the claim is released.
    pub fn sync(&self) -> Result<(), ExclusiveError> {
        self.file.sync_all().map_err(|source| self.io("flush", source))
    }

    fn io(&self, what: &'static str, source: std::io::Error) -> ExclusiveError {
        ExclusiveError::Io { what, path: self.path.clone(), source }
    }
}

fn read_head(file: &File, size: u64, len: usize) -> std::io::Result<Vec<u8>> {
    let n = usize::try_from(size).unwrap_or(usize::MAX).min(len);
    let mut buf = vec![0u8; n];
    file.read_exact_at(&mut buf, 0)?;
    Ok(buf)
}

fn zero(file: &File, offset: u64, len: u64) -> std::io::Result<()> {
    let zeros = vec![0u8; CHUNK];
    let mut done = 0u64;
    while done < len {
        let n = usize::try_from(len - done).unwrap_or(CHUNK).min(CHUNK);
        file.write_all_at(&zeros[..n], offset + done)?;
        done += n as u64;
    }
    Ok(())
}

/// `(offset, length)` of what a wipe zeroes, in order: the first and the
/// last `WIPE_LEN` bytes, as one range when they meet, and between them
/// the BlueStore label copies 19.2+ writes (a copy left behind makes the
/// disk an OSD's again to 19.2+'s tools, whatever wiped its head).
pub fn wipe_ranges(size: u64) -> Vec<(u64, u64)> {
    let head = size.min(WIPE_LEN);
    let tail_start = size.saturating_sub(WIPE_LEN).max(head);
    let mut ranges = vec![(0, head)];
    if tail_start == head {
        ranges[0].1 = size;
    } else {
        ranges.extend(
            signatures::label_offsets(size)
                .filter(|&o| o >= head && o.saturating_add(signatures::LABEL_BLOCK) <= tail_start)
                .map(|o| (o, signatures::LABEL_BLOCK)),
        );
        ranges.push((tail_start, size - tail_start));
    }
    ranges.retain(|r| r.1 > 0);
    ranges
}

/// "10 MiB" for whole MiB, bytes otherwise.
pub fn shown_len(len: u64) -> String {
    if len.is_multiple_of(1 << 20) {
        format!("{} MiB", len >> 20)
    } else {
        format!("{len} bytes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_at_both_ends() {
        let mib = 1u64 << 20;
        let six_gib = 6 << 30;
        let copy = (1 << 30, 4096);
        assert_eq!(wipe_ranges(six_gib), [(0, 10 * mib), copy, (six_gib - 10 * mib, 10 * mib)]);
        let two_tb = 2000u64 << 30;
        let copies: Vec<u64> = wipe_ranges(two_tb)[1..5].iter().map(|r| r.0 >> 30).collect();
        assert_eq!(copies, [1, 10, 100, 1000], "every copy a 2 TB disk has room for");
        assert_eq!(wipe_ranges(1 << 30).len(), 2, "a 1 GiB disk has no copy");
        assert_eq!(wipe_ranges(20 * mib), [(0, 20 * mib)], "the ends meet");
        assert_eq!(wipe_ranges(15 * mib), [(0, 15 * mib)]);
        assert_eq!(wipe_ranges(21 * mib), [(0, 10 * mib), (11 * mib, 10 * mib)]);
        assert_eq!(wipe_ranges(512), [(0, 512)]);
        assert!(wipe_ranges(0).is_empty());
        assert_eq!(shown_len(10 * mib), "10 MiB");
        assert_eq!(shown_len(512), "512 bytes");
    }

    #[test]
    fn zeroes_exactly_the_range() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("img");
        std::fs::write(&path, vec![0xabu8; 3 * CHUNK + 100]).unwrap();
        let f = std::fs::OpenOptions::new().read(true).write(true).open(&path).unwrap();
        zero(&f, 10, (CHUNK + 5) as u64).unwrap();
        let data = std::fs::read(&path).unwrap();
        assert_eq!(data.len(), 3 * CHUNK + 100, "never writes past the range");
        assert!(data[..10].iter().all(|b| *b == 0xab));
        assert!(data[10..10 + CHUNK + 5].iter().all(|b| *b == 0));
        assert!(data[10 + CHUNK + 5..].iter().all(|b| *b == 0xab));
        assert_eq!(
            read_head(&f, data.len() as u64, 12).unwrap(),
            [0xab, 0xab, 0xab, 0xab, 0xab, 0xab, 0xab, 0xab, 0xab, 0xab, 0, 0]
        );
        assert_eq!(read_head(&f, 4, 12).unwrap().len(), 4);
    }

    #[test]
    fn only_block_devices() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("img");
        std::fs::write(&path, b"x").unwrap();
        let e = ExclusiveDevice::open(path.to_str().unwrap()).unwrap_err();
        assert!(matches!(e, ExclusiveError::NotBlockDevice { .. }), "{e}");
        let e = ExclusiveDevice::open("/nonexistent/dev").unwrap_err();
        assert!(e.to_string().starts_with("cannot open /nonexistent/dev: "), "{e}");
    }
}
