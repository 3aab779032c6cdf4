//! The mount table (`/proc/mounts`): which devices are mounted, and where.
//! Like ceph-volume (`util/system.py` `device_is_mounted`), a device counts
//! as mounted when its path or the path it resolves to is the source of a
//! mount, the mount's source resolved too (`/dev/mapper/x` is `/dev/dm-3`).

use std::path::Path;

#[derive(Debug, Clone, PartialEq, Eq)]
struct Mount {
    source: String,
    /// The source with its links resolved, for sources under /dev.
    resolved: Option<String>,
    target: String,
    fstype: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Mounts {
    mounts: Vec<Mount>,
}

impl Mounts {
    /// Reads `<proc_root>/mounts`, resolving device links on this host.
    pub fn read(proc_root: &Path) -> std::io::Result<Mounts> {
        let text = std::fs::read_to_string(proc_root.join("mounts"))?;
        Ok(Mounts::parse(&text, &resolve))
    }

    /// Parses a mount table; `resolve` gives a device path's real path.
    pub fn parse(text: &str, resolve: &dyn Fn(&str) -> Option<String>) -> Mounts {
        let mounts = text
            .lines()
            .filter_map(|line| {
                let mut fields = line.split_whitespace();
                let source = unescape(fields.next()?);
                let target = unescape(fields.next()?);
                let fstype = fields.next()?.to_string();
                // Only device nodes are resolved: resolving any path could
                // hang on a dead network filesystem.
                let resolved = source.starts_with("/dev/").then(|| resolve(&source)).flatten();
                Some(Mount { source, resolved, target, fstype })
            })
            .collect();
        Mounts { mounts }
    }

    /// Where `device` is mounted (its real path is `resolved`, if known).
    pub fn mount_points(&self, device: &str, resolved: Option<&str>) -> Vec<&str> {
        let names: Vec<&str> = std::iter::once(device).chain(resolved).collect();
        self.mounts
            .iter()
            .filter(|m| names.iter().any(|n| m.source == *n || m.resolved.as_deref() == Some(n)))
            .map(|m| m.target.as_str())
            .collect()
    }

    /// How many mounts of type `fstype` are stacked on `target`.
    pub fn layers(&self, target: &str, fstype: &str) -> usize {
        self.mounts.iter().filter(|m| m.target == target && m.fstype == fstype).count()
    }
}

/// A device path's real path, if it resolves.
pub fn resolve(path: &str) -> Option<String> {
    std::fs::canonicalize(path).ok().map(|p| p.to_string_lossy().into_owned())
}

/// The kernel writes space, tab, newline and backslash as `\ooo`.
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal =
            bytes.get(i + 1..i + 4).filter(|d| bytes[i] == b'\\' && d.iter().all(|c| (b'0'..=b'7').contains(c)));
        match octal {
            Some(d) => {
                let value = d.iter().fold(0u32, |acc, c| acc * 8 + u32::from(c - b'0'));
                out.push(u8::try_from(value).unwrap_or(b'?'));
                i += 4;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: &str = "\
/dev/vda1 / ext4 rw,relatime 0 0
proc /proc proc rw 0 0
/dev/mapper/vg-data /srv/my\\040data xfs rw 0 0
server:/export /mnt/nfs nfs4 rw 0 0
/dev/loop4 /mnt/l ext4 rw 0 0
";

    fn resolver(p: &str) -> Option<String> {
        match p {
            "/dev/mapper/vg-data" => Some("/dev/dm-3".into()),
            _ => Some(p.to_string()),
        }
    }

    #[test]
    fn devices_by_path_and_by_real_path() {
        let m = Mounts::parse(TABLE, &resolver);
        assert_eq!(m.mount_points("/dev/vda1", None), ["/"]);
        assert_eq!(m.mount_points("/dev/vda", None), Vec::<&str>::new());
        assert_eq!(m.mount_points("/dev/dm-3", None), ["/srv/my data"]);
        assert_eq!(m.mount_points("/dev/vg/data", Some("/dev/dm-3")), ["/srv/my data"]);
        assert_eq!(m.mount_points("/dev/loop4", Some("/dev/loop4")), ["/mnt/l"]);
        assert!(m.mount_points("proc", None).len() == 1, "sources are compared as written");
        assert!(m.mount_points("/dev/loop44", None).is_empty());
    }

    #[test]
    fn stacked_layers_by_type() {
        let table = "tmpfs /var/lib/ceph/osd/ceph-6 tmpfs rw 0 0\n\
                     tmpfs /var/lib/ceph/osd/ceph-6 tmpfs rw 0 0\n\
                     /dev/loop4 /var/lib/ceph/osd/ceph-7 xfs rw 0 0\n";
        let m = Mounts::parse(table, &resolver);
        assert_eq!(m.layers("/var/lib/ceph/osd/ceph-6", "tmpfs"), 2);
        assert_eq!(m.layers("/var/lib/ceph/osd/ceph-7", "tmpfs"), 0);
        assert_eq!(m.layers("/var/lib/ceph/osd/ceph-7", "xfs"), 1);
        assert_eq!(m.layers("/var/lib/ceph/osd", "tmpfs"), 0);
    }

    #[test]
    fn escapes() {
        assert_eq!(unescape("a\\040b\\011c\\134"), "a b\tc\\");
        assert_eq!(unescape("trailing\\04"), "trailing\\04");
        assert_eq!(unescape("\\999"), "\\999");
    }
}
