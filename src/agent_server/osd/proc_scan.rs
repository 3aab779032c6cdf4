//! Reading processes from `/proc`: their state, name and arguments, and
//! the files they hold open. Processes come and go during a scan, so one
//! that vanishes halfway is skipped rather than failing the scan.

use std::path::{Path, PathBuf};

/// A live process (zombies are left out: they hold nothing and serve
/// nothing, but keep their name until their parent reaps them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessInfo {
    pub pid: u32,
    /// `/proc/PID/comm`: for a script, the script's file name.
    pub comm: String,
    pub argv: Vec<String>,
}

/// Every live process under `proc_root`. Only the listing of the root
/// itself can fail; unreadable processes are skipped.
pub fn processes(proc_root: &Path) -> std::io::Result<Vec<ProcessInfo>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(proc_root)? {
        let Ok(entry) = entry else { continue };
        let Some(pid) = entry.file_name().to_str().and_then(parse_pid) else { continue };
        if let Some(p) = process(&entry.path(), pid) {
            out.push(p);
        }
    }
    out.sort_by_key(|p| p.pid);
    Ok(out)
}

fn parse_pid(name: &str) -> Option<u32> {
    if name.is_empty() || !name.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    name.parse().ok()
}

fn process(dir: &Path, pid: u32) -> Option<ProcessInfo> {
    let stat = std::fs::read_to_string(dir.join("stat")).ok()?;
    if matches!(state_of(&stat), Some('Z' | 'X' | 'x') | None) {
        return None;
    }
    let comm = std::fs::read_to_string(dir.join("comm")).ok()?.trim_end_matches('\n').to_string();
    let raw = std::fs::read(dir.join("cmdline")).ok()?;
    Some(ProcessInfo { pid, comm, argv: split_cmdline(&raw) })
}

/// The state letter of `/proc/PID/stat`. It follows the command name, which
/// is in parentheses and may itself contain spaces and parentheses, so the
/// last `)` is the one that ends it.
pub fn state_of(stat: &str) -> Option<char> {
    let (_, rest) = stat.rsplit_once(')')?;
    rest.trim_start().chars().next()
}

/// `/proc/PID/cmdline`: arguments separated (and usually ended) by NUL.
pub fn split_cmdline(raw: &[u8]) -> Vec<String> {
    let raw = raw.strip_suffix(b"\0").unwrap_or(raw);
    if raw.is_empty() {
        return Vec::new();
    }
    raw.split(|b| *b == 0).map(|a| String::from_utf8_lossy(a).into_owned()).collect()
}

/// What a process's file descriptors point to (`readlink /proc/PID/fd/*`).
/// Empty when they cannot be read (the process ended, or it is not ours to
/// look into).
pub fn open_files(proc_root: &Path, pid: u32) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(proc_root.join(pid.to_string()).join("fd")) else {
        return Vec::new();
    };
    entries.filter_map(|e| e.ok()).filter_map(|e| std::fs::read_link(e.path()).ok()).collect()
}

/// Builds fake `/proc` trees for the tests of the modules that scan it.
#[cfg(test)]
pub mod fake {
    use std::path::{Path, PathBuf};

    pub struct FakeProc {
        pub dir: tempfile::TempDir,
    }

    impl Default for FakeProc {
        fn default() -> Self {
            FakeProc { dir: tempfile::tempdir().unwrap() }
        }
    }

    impl FakeProc {
        pub fn new() -> FakeProc {
            FakeProc::default()
        }

        pub fn root(&self) -> PathBuf {
            self.dir.path().to_path_buf()
        }

        /// A process in `state` (`S`, `Z`, ...) with these arguments.
        pub fn add(&self, pid: u32, state: char, comm: &str, argv: &[&str]) -> PathBuf {
            let d = self.dir.path().join(pid.to_string());
            std::fs::create_dir_all(d.join("fd")).unwrap();
            std::fs::write(d.join("stat"), format!("{pid} ({comm}) {state} 1 {pid} {pid} 0 -1 4194368")).unwrap();
            std::fs::write(d.join("comm"), format!("{comm}\n")).unwrap();
            let mut cmdline = Vec::new();
            for a in argv {
                cmdline.extend_from_slice(a.as_bytes());
                cmdline.push(0);
            }
            std::fs::write(d.join("cmdline"), cmdline).unwrap();
            d
        }

        /// An open file descriptor `fd` of `pid` pointing at `target`.
        pub fn open(&self, pid: u32, fd: u32, target: &str) {
            let link = self.dir.path().join(pid.to_string()).join("fd").join(fd.to_string());
            std::os::unix::fs::symlink(Path::new(target), link).unwrap();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::fake::FakeProc;
    use super::*;

    #[test]
    fn reads_live_processes_and_skips_zombies() {
        let p = FakeProc::new();
        p.add(10, 'S', "ceph-osd", &["ceph-osd", "-i", "4", "-c", "/tmp/sb/ceph.conf"]);
        p.add(11, 'Z', "ceph-osd", &[]);
        p.add(12, 'R', "kworker/0:1", &[]);
        std::fs::create_dir(p.dir.path().join("self-not-a-pid")).unwrap();
        std::fs::write(p.dir.path().join("mounts"), "").unwrap();
        // A process that ended between the listing and the read.
        std::fs::create_dir(p.dir.path().join("13")).unwrap();
        let procs = processes(&p.root()).unwrap();
        let pids: Vec<u32> = procs.iter().map(|p| p.pid).collect();
        assert_eq!(pids, [10, 12]);
        assert_eq!(procs[0].argv, ["ceph-osd", "-i", "4", "-c", "/tmp/sb/ceph.conf"]);
        assert_eq!(procs[0].comm, "ceph-osd");
        assert!(procs[1].argv.is_empty(), "kernel threads have no arguments");
        assert!(processes(&p.root().join("missing")).is_err());
    }

    #[test]
    fn stat_state_after_a_tricky_name() {
        assert_eq!(state_of("77 (a) b) (c) Z 1 77"), Some('Z'));
        assert_eq!(state_of("5 (ceph-osd) S 1"), Some('S'));
        assert_eq!(state_of("garbage"), None);
    }

    #[test]
    fn cmdline_splitting() {
        assert_eq!(split_cmdline(b"a\0-i\0\x004\0"), ["a", "-i", "", "4"]);
        assert_eq!(split_cmdline(b"no-trailing-nul"), ["no-trailing-nul"]);
        assert!(split_cmdline(b"").is_empty());
    }

    #[test]
    fn open_file_links() {
        let p = FakeProc::new();
        p.add(20, 'S', "x", &["x"]);
        p.open(20, 3, "/dev/loop4");
        p.open(20, 4, "socket:[1234]");
        let mut files = open_files(&p.root(), 20);
        files.sort();
        assert_eq!(files, [PathBuf::from("/dev/loop4"), PathBuf::from("socket:[1234]")]);
        assert!(open_files(&p.root(), 99).is_empty());
    }
}
