//! The OSD a BlueStore label names (its uuid in the text header, `whoami`
//! and the cluster's `ceph_fsid` in its meta map), so that a zap can tell
//! whose data a raw device holds even when no LVM tags say so, and a stop
//! which OSD a running daemon serves. The label (`bluestore_bdev_label_t`,
//! Ceph 14-18) is the first 4 KiB of the device: the text `bluestore block
//! device\n<osd uuid>\n`, then the encoded struct: version, compat version,
//! length (u8, u8, u32), osd uuid (16 bytes), size (u64), birth time (two
//! u32), description (string) and, from version 2, the meta map (u32 count
//! of string pairs). Integers are little-endian, strings a u32 length and
//! the bytes.

/// Bytes of the label block.
pub const LABEL_LEN: usize = 4096;
const HEADER_LEN: usize = 60;
const MAGIC: &[u8] = b"bluestore block device\n";

/// `whoami` of a BlueStore label, when `head` starts with one that has it.
pub fn whoami(head: &[u8]) -> Option<u32> {
    crate::agent_server::osd::argv::parse_id(&meta(head, b"whoami")?)
}

/// The OSD uuid a BlueStore label's text header names (its second line),
/// when `head` starts with one.
pub fn osd_uuid(head: &[u8]) -> Option<String> {
    if !head.starts_with(MAGIC) || head.get(HEADER_LEN - 1) != Some(&b'\n') {
        return None;
    }
    let text = std::str::from_utf8(&head[MAGIC.len()..HEADER_LEN - 1]).ok()?;
    let shaped = text.len() == 36 && text.chars().all(|c| c.is_ascii_hexdigit() || c == '-');
    shaped.then(|| text.to_ascii_lowercase())
}

/// The cluster a BlueStore label names (`ceph_fsid` in its meta map).
pub fn ceph_fsid(head: &[u8]) -> Option<String> {
    meta(head, b"ceph_fsid").filter(|f| !f.is_empty())
}

/// A value of the label's meta map (version 2 on).
fn meta(head: &[u8], wanted: &[u8]) -> Option<String> {
    if !head.starts_with(MAGIC) || head.get(HEADER_LEN - 1) != Some(&b'\n') {
        return None;
    }
    let block = &head[..head.len().min(LABEL_LEN)];
    let mut r = Reader { buf: block, at: HEADER_LEN };
    let version = r.u8()?;
    r.skip(1 + 4 + 16 + 8 + 8)?;
    r.string()?;
    if version < 2 {
        return None;
    }
    let pairs = r.u32()?;
    for _ in 0..pairs {
        let key = r.string()?;
        let value = r.string()?;
        if key == wanted {
            return Some(std::str::from_utf8(value).ok()?.to_string());
        }
    }
    None
}

struct Reader<'a> {
    buf: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.at.checked_add(n)?;
        let s = self.buf.get(self.at..end)?;
        self.at = end;
        Some(s)
    }

    fn skip(&mut self, n: usize) -> Option<()> {
        self.take(n).map(|_| ())
    }

    fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }

    fn u32(&mut self) -> Option<u32> {
        let b = self.take(4)?;
        Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn string(&mut self) -> Option<&'a [u8]> {
        let n = usize::try_from(self.u32()?).ok()?;
        self.take(n)
    }
}

/// Builds labels for tests (here and in the zap's).
#[cfg(test)]
pub fn test_label(whoami: Option<&str>, version: u8) -> Vec<u8> {
    fn string(out: &mut Vec<u8>, s: &str) {
        out.extend_from_slice(&(s.len() as u32).to_le_bytes());
        out.extend_from_slice(s.as_bytes());
    }
    let mut out = b"bluestore block device\nf9364872-2ea4-4bec-afa7-b42bb5513f12\n".to_vec();
    out.extend_from_slice(&[version, 1, 0, 0, 0, 0]);
    out.extend_from_slice(&[0xf9; 16]);
    out.extend_from_slice(&(10u64 << 30).to_le_bytes());
    out.extend_from_slice(&[0; 8]);
    string(&mut out, "main");
    let mut meta = vec![("bluefs", "1"), ("ceph_fsid", "75757249-f864-4e02-9720-f37e52df334e")];
    if let Some(w) = whoami {
        meta.push(("whoami", w));
    }
    out.extend_from_slice(&(meta.len() as u32).to_le_bytes());
    for (k, v) in meta {
        string(&mut out, k);
        string(&mut out, v);
    }
    out.resize(LABEL_LEN, 0);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_whoami() {
        assert_eq!(whoami(&test_label(Some("4"), 2)), Some(4));
        assert_eq!(whoami(&test_label(Some("12"), 2)), Some(12));
        assert_eq!(whoami(&test_label(None, 2)), None);
        assert_eq!(whoami(&test_label(Some("4"), 1)), None, "version 1 has no meta");
        assert_eq!(whoami(&test_label(Some("x"), 2)), None);
        assert_eq!(whoami(&[0u8; LABEL_LEN]), None);
    }

    #[test]
    fn reads_the_osd_uuid_and_the_cluster() {
        let label = test_label(Some("4"), 2);
        assert_eq!(osd_uuid(&label).as_deref(), Some("f9364872-2ea4-4bec-afa7-b42bb5513f12"));
        assert_eq!(ceph_fsid(&label).as_deref(), Some("75757249-f864-4e02-9720-f37e52df334e"));
        assert_eq!(osd_uuid(&label[..59]), None, "cut in the header");
        assert_eq!(osd_uuid(&[0u8; LABEL_LEN]), None);
        let mut odd = label.clone();
        odd[30] = b'z';
        assert_eq!(osd_uuid(&odd), None, "not a uuid");
        assert_eq!(ceph_fsid(&test_label(Some("4"), 1)), None, "version 1 has no meta");
    }

    #[test]
    fn truncated_or_lying_labels_are_no_labels() {
        let full = test_label(Some("4"), 2);
        for cut in [0, 23, 60, 70, 100, 130, 180] {
            assert_eq!(whoami(&full[..cut]), None, "cut at {cut}");
        }
        let mut huge_count = full.clone();
        // The description's length claims more bytes than the block has.
        huge_count[60 + 6 + 16 + 8 + 8..60 + 6 + 16 + 8 + 8 + 4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert_eq!(whoami(&huge_count), None);
    }

    /// The start of a real OSD's label (Ceph 16.2.15, `ceph-osd --mkfs` on a
    /// loop device), its meta map shortened to `whoami`.
    #[test]
    fn a_real_label_prefix() {
        let mut head = b"bluestore block device\nf9364872-2ea4-4bec-afa7-b42bb5513f12\n".to_vec();
        head.extend_from_slice(&[0x02, 0x01, 0x0a, 0x02, 0x00, 0x00]);
        head.extend_from_slice(&[
            0xf9, 0x36, 0x48, 0x72, 0x2e, 0xa4, 0x4b, 0xec, 0xaf, 0xa7, 0xb4, 0x2b, 0xb5, 0x51, 0x3f, 0x12,
        ]);
        head.extend_from_slice(&[0x00, 0x00, 0x00, 0x80, 0x02, 0x00, 0x00, 0x00]);
        head.extend_from_slice(&[0xfb, 0xaa, 0x0d, 0x6b, 0x2b, 0xa3, 0xd8, 0x17]);
        head.extend_from_slice(b"\x04\x00\x00\x00main\x01\x00\x00\x00");
        head.extend_from_slice(b"\x06\x00\x00\x00whoami\x01\x00\x00\x004");
        assert_eq!(whoami(&head), Some(4));
    }
}
