//! On-disk signatures read from a device's first sectors: the BlueStore
//! label (what ceph-volume's `has_bluestore_label` looks for) and the GPT
//! header, so that a host without blkid still sees them; and the copies of
//! the BlueStore label further in.

use std::io::{Read, Seek, SeekFrom};
use std::os::unix::fs::FileExt;
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

/// Where BlueStore writes its label: the head, and from Squid (19.2) on
/// copies at 1, 10, 100 and 1000 GiB as far as the device reaches
/// (`locations` in `ceph-bluestore-tool show-label`; ceph-volume 19.2+
/// looks at all of them). A disk whose head was wiped but that keeps a
/// copy is still an OSD's to 19.2+: `show-label` reads the copy, `raw
/// list` lists the OSD, the inventory says "Has BlueStore device label".
/// So every release's disk is checked at all of them, and a zap wipes them.
pub const BLUESTORE_LABEL_OFFSETS: [u64; 5] = [0, 1 << 30, 10 << 30, 100 << 30, 1000 << 30];

/// The label block BlueStore writes at each of those offsets.
pub const LABEL_BLOCK: u64 = 4096;

/// The label offsets a device of `size` bytes has room for (the head's
/// always: a short device is read as far as it goes).
pub fn label_offsets(size: u64) -> impl Iterator<Item = u64> {
    BLUESTORE_LABEL_OFFSETS.into_iter().filter(move |&o| o == 0 || o.saturating_add(LABEL_BLOCK) <= size)
}

/// The first BlueStore label block found (head first, then the copies)
/// and its offset, reading through `read_at(offset, len)`.
pub fn find_label<E>(
    size: u64,
    mut read_at: impl FnMut(u64, usize) -> Result<Vec<u8>, E>,
) -> Result<Option<(u64, Vec<u8>)>, E> {
    for offset in label_offsets(size) {
        let len = LABEL_BLOCK.min(size.saturating_sub(offset)) as usize;
        let block = read_at(offset, len)?;
        if has_bluestore_label(&block) {
            return Ok(Some((offset, block)));
        }
    }
    Ok(None)
}

/// `find_label` on a device (or a file) by its path; a directory has none.
pub fn read_label(node: &Path) -> std::io::Result<Option<(u64, Vec<u8>)>> {
    let mut file = std::fs::File::open(node)?;
    if file.metadata()?.is_dir() {
        return Ok(None);
    }
    let size = file.seek(SeekFrom::End(0))?;
    find_label(size, |offset, len| {
        let mut block = vec![0u8; len];
        file.read_exact_at(&mut block, offset).map(|()| block)
    })
}

/// "1 GiB" for the copies' offsets, bytes otherwise.
pub fn shown_offset(offset: u64) -> String {
    if offset > 0 && offset.is_multiple_of(1 << 30) {
        format!("{} GiB", offset >> 30)
    } else {
        format!("byte {offset}")
    }
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

    /// A real label copy: the 4 KiB at 1 GiB of an 11 GiB device made by
    /// Tentacle's `ceph-osd --mkfs` (osd.2, `record-formats.sh`), which
    /// `show-label` lists at `0x0`, `0x40000000` and `0x280000000`.
    const TENTACLE_COPY: &[u8] =
        include_bytes!("../../../../tests/fixtures/ceph_volume/bluestore_label_tentacle_20.2.4_copy_at_1GiB.bin");

    #[test]
    fn a_label_copy_of_tentacle_20_2_4_is_found_when_the_head_was_wiped() {
        let dir = tempfile::tempdir().unwrap();
        let disk = dir.path().join("sdz");
        let file = std::fs::File::create(&disk).unwrap();
        file.set_len(11 << 30).unwrap();
        assert_eq!(read_label(&disk).unwrap(), None, "a blank (sparse) disk");
        file.write_all_at(TENTACLE_COPY, 10 << 30).unwrap();
        let (at, block) = read_label(&disk).unwrap().expect("the copy at 10 GiB");
        assert_eq!((at, crate::agent_server::disks::label::whoami(&block)), (10 << 30, Some(2)));
        file.write_all_at(TENTACLE_COPY, 1 << 30).unwrap();
        assert_eq!(read_label(&disk).unwrap().map(|(at, _)| shown_offset(at)).as_deref(), Some("1 GiB"));
        // What a 16.2 zap left: the head zeroed (here never written), the copies kept.
        assert!(!has_bluestore_label(&read_head(&disk).unwrap()));
        assert_eq!(label_offsets(11 << 30).collect::<Vec<_>>(), [0, 1 << 30, 10 << 30]);
        assert_eq!(label_offsets((1 << 30) + 4095).collect::<Vec<_>>(), [0], "no room for a copy");
        assert_eq!(read_label(dir.path()).unwrap(), None);
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
