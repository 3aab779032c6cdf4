//! On-disk signatures read from a device's first sectors: the BlueStore
//! label (what ceph-volume's `has_bluestore_label` looks for) and the GPT
//! header, so that a host without blkid still sees them.

use std::io::Read;
use std::path::Path;

/// The first bytes of a BlueStore label (`bluestore_bdev_label_t`).
pub const BLUESTORE_MAGIC: &[u8; 22] = b"bluestore block device";

/// The GPT header signature, at the start of LBA 1.
pub const GPT_MAGIC: &[u8; 8] = b"EFI PART";

/// Enough for LBA 1 with 4096-byte logical sectors.
const HEAD_LEN: usize = 4096 + 512;

/// Reads the first bytes of a device (fewer when it is smaller). An error
/// means the device could not be checked, which ceph-volume reports as
/// "Failed to determine if device is BlueStore".
pub fn read_head(node: &Path) -> std::io::Result<Vec<u8>> {
    let file = std::fs::File::open(node)?;
    let mut head = Vec::with_capacity(HEAD_LEN);
    match file.take(HEAD_LEN as u64).read_to_end(&mut head) {
        Ok(_) => Ok(head),
        // ceph-volume skips a directory: it holds no label.
        Err(e) if e.kind() == std::io::ErrorKind::IsADirectory => Ok(Vec::new()),
        Err(e) => Err(e),
    }
}

pub fn has_bluestore_label(head: &[u8]) -> bool {
    head.starts_with(BLUESTORE_MAGIC)
}

/// A GPT header at LBA 1 for either common logical sector size.
pub fn has_gpt_header(head: &[u8]) -> bool {
    [512usize, 4096].iter().any(|&lba1| head.get(lba1..lba1 + GPT_MAGIC.len()) == Some(GPT_MAGIC.as_slice()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_signatures() {
        let mut head = vec![0u8; HEAD_LEN];
        assert!(!has_bluestore_label(&head) && !has_gpt_header(&head));
        head[..23].copy_from_slice(b"bluestore block device\n");
        assert!(has_bluestore_label(&head));
        head[512..520].copy_from_slice(GPT_MAGIC);
        assert!(has_gpt_header(&head));
        let mut big_sectors = vec![0u8; HEAD_LEN];
        big_sectors[4096..4104].copy_from_slice(GPT_MAGIC);
        assert!(has_gpt_header(&big_sectors));
        // A device shorter than the label is simply not BlueStore.
        assert!(!has_bluestore_label(b"bluestore"));
        assert!(!has_gpt_header(&[0u8; 100]));
    }

    #[test]
    fn reads_a_short_file_and_reports_a_missing_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sdz");
        std::fs::write(&path, b"bluestore block device\nabc").unwrap();
        let head = read_head(&path).unwrap();
        assert!(has_bluestore_label(&head));
        assert!(read_head(&dir.path().join("missing")).is_err());
        assert_eq!(read_head(dir.path()).unwrap(), Vec::<u8>::new());
    }
}
