//! Shared by the agent's integration tests: the real binary started on a
//! free port (killed by pid when dropped), a fake ceph-volume, a fake
//! ceph-osd process (killed by pid), and a loop device that is detached by
//! the path it was given, whatever happens.

#![allow(dead_code)] // each test binary uses a part

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

pub const TOKEN: &str = "t0ken-for-tests";

pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/agent").join(name)
}

fn agent_command(args: &[&str], env: &[(&str, &str)], stderr: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_osdkeeper"));
    cmd.arg("agent")
        .args(args)
        .env_remove("OSDKEEPER_AGENT_TOKEN")
        .env_remove("OSDKEEPER_CEPH_VOLUME")
        .env("RUST_LOG", "info")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(stderr).unwrap());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

/// A running agent.
pub struct Agent {
    child: Child,
    pub addr: String,
    logs: tempfile::TempDir,
}

impl Agent {
    /// Starts `osdkeeper agent ARGS --listen 127.0.0.1:0` and waits for its
    /// `listening on ADDR` line.
    pub fn start(args: &[&str], env: &[(&str, &str)]) -> Agent {
        let logs = tempfile::tempdir().unwrap();
        // The host's real data dirs are never the test's: a zap releases
        // the ones of its device there.
        let data_dir = logs.path().join("osd");
        std::fs::create_dir(&data_dir).unwrap();
        let data_dir = data_dir.to_string_lossy().into_owned();
        let mut all = vec!["--listen", "127.0.0.1:0"];
        if !args.contains(&"--osd-data-dir") {
            all.extend(["--osd-data-dir", data_dir.as_str()]);
        }
        all.extend_from_slice(args);
        let mut child = agent_command(&all, env, &logs.path().join("stderr")).spawn().expect("start the agent");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let mut agent = Agent { child, addr: String::new(), logs };
        let line = rx.recv_timeout(Duration::from_secs(20)).unwrap_or_default();
        match line.trim().strip_prefix("listening on ") {
            Some(addr) => agent.addr = addr.to_string(),
            None => panic!("the agent did not start (stdout: {line:?}); its log:\n{}", agent.log()),
        }
        agent
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.logs.path().join("stderr")).unwrap_or_default()
    }

    /// Sends SIGTERM and waits (bounded) for the exit.
    pub fn terminate(&mut self, within: Duration) -> Option<ExitStatus> {
        let pid = self.child.id().to_string();
        Command::new("kill").args(["-s", "TERM", &pid]).status().unwrap();
        let deadline = Instant::now() + within;
        while Instant::now() < deadline {
            if let Some(status) = self.child.try_wait().unwrap() {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        None
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        // Kills this child by its pid; nothing else.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs an agent that is expected to stop at startup: its status and stderr.
pub fn start_and_fail(args: &[&str], env: &[(&str, &str)]) -> (ExitStatus, String) {
    let logs = tempfile::tempdir().unwrap();
    let err = logs.path().join("stderr");
    let mut child = agent_command(args, env, &err).spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return (status, std::fs::read_to_string(&err).unwrap());
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the agent kept running: {}", std::fs::read_to_string(&err).unwrap());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A stand-in for ceph-volume: records each call's arguments and the
/// environment variables that matter to `calls.log`, prints them, and
/// sleeps when the affinity says `slow`. `inventory` fails, as it does on
/// hosts without udev, unless `set_inventory` gave it a device list;
/// `lvm list` prints what `set_lvm_list` gave it, and no OSD once an `lvm
/// zap` succeeded; `lvm zap` fails after `fail_zaps`.
pub struct FakeCephVolume {
    pub dir: tempfile::TempDir,
}

impl FakeCephVolume {
    pub fn new() -> FakeCephVolume {
        let dir = tempfile::tempdir().unwrap();
        let script = format!(
            r#"#!/bin/sh
if [ "$1" = inventory ] && [ -f {inventory} ]; then echo "inventory $*" >> {log}; cat {inventory}; exit 0; fi
if [ "$1" = inventory ]; then echo '--> FileNotFoundError: udevadm' >&2; exit 1; fi
echo "args=$* affinity=$CEPH_VOLUME_OSDSPEC_AFFINITY loops=$CEPH_VOLUME_ALLOW_LOOP_DEVICES" >> {log}
if [ "$1 $2" = "lvm list" ] && [ -f {lvm_list} ]; then cat {lvm_list}; exit 0; fi
if [ "$1 $2" = "lvm zap" ] && [ -f {fail_zap} ]; then echo '--> RuntimeError: Unable to zap' >&2; exit 1; fi
if [ "$1 $2" = "lvm zap" ] && [ -f {lvm_list} ]; then echo '{{}}' > {lvm_list}; fi
echo "created: $*"
echo "--> some progress" >&2
if [ "$CEPH_VOLUME_OSDSPEC_AFFINITY" = slow ]; then sleep 3; fi
if [ "$CEPH_VOLUME_OSDSPEC_AFFINITY" = hang ]; then sleep 30; fi
exit 0
"#,
            log = dir.path().join("calls.log").display(),
            inventory = dir.path().join("inventory.json").display(),
            fail_zap = dir.path().join("fail-zap").display(),
            lvm_list = dir.path().join("lvm-list.json").display()
        );
        let path = dir.path().join("ceph-volume");
        std::fs::write(&path, script).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        FakeCephVolume { dir }
    }

    /// From now on `inventory` prints `devices`.
    pub fn set_inventory(&self, devices: &serde_json::Value) {
        std::fs::write(self.dir.path().join("inventory.json"), devices.to_string()).unwrap();
    }

    /// From now on `lvm list` prints `listing`, and no OSD once an `lvm zap` succeeded.
    pub fn set_lvm_list(&self, listing: &serde_json::Value) {
        std::fs::write(self.dir.path().join("lvm-list.json"), listing.to_string()).unwrap();
    }

    /// From now on `lvm zap` fails.
    pub fn fail_zaps(&self) {
        std::fs::write(self.dir.path().join("fail-zap"), "").unwrap();
    }

    pub fn program(&self) -> String {
        self.dir.path().join("ceph-volume").display().to_string()
    }

    pub fn calls(&self) -> Vec<String> {
        std::fs::read_to_string(self.dir.path().join("calls.log"))
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }
}

/// A loop device over a sparse file, detached (by its own path) on drop.
pub struct LoopDevice {
    pub path: String,
    _backing: tempfile::TempDir,
}

impl LoopDevice {
    pub fn new(bytes: u64) -> LoopDevice {
        let backing = tempfile::tempdir().unwrap();
        let file = backing.path().join("disk.img");
        std::fs::File::create(&file).unwrap().set_len(bytes).unwrap();
        let out = Command::new("losetup").args(["-f", "--show"]).arg(&file).output().expect("run losetup");
        assert!(
            out.status.success(),
            "losetup -f --show failed (these tests need root and loop devices): {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let path = String::from_utf8(out.stdout).unwrap().trim().to_string();
        assert!(path.starts_with("/dev/loop"), "losetup printed {path:?}");
        LoopDevice { path, _backing: backing }
    }

    /// Writes at offset 0 through the device (not the backing file), so
    /// that readers of the device see it at once.
    pub fn write_head(&self, bytes: &[u8]) {
        self.write_at(0, bytes);
    }

    pub fn write_at(&self, offset: u64, bytes: &[u8]) {
        use std::os::unix::fs::FileExt;
        let f = std::fs::OpenOptions::new().write(true).open(&self.path).unwrap();
        f.write_all_at(bytes, offset).unwrap();
        f.sync_all().unwrap();
    }

    pub fn read_at(&self, offset: u64, len: usize) -> Vec<u8> {
        use std::os::unix::fs::FileExt;
        let f = std::fs::File::open(&self.path).unwrap();
        let mut buf = vec![0u8; len];
        f.read_exact_at(&mut buf, offset).unwrap();
        buf
    }

    /// Opens the device as a mounting kernel or a running ceph-osd would:
    /// exclusively (`O_EXCL`, 0o200 on Linux x86_64 and aarch64), until
    /// the handle is dropped.
    pub fn hold_exclusively(&self) -> std::fs::File {
        use std::os::unix::fs::OpenOptionsExt;
        const O_EXCL: i32 = 0o200;
        std::fs::OpenOptions::new().read(true).custom_flags(O_EXCL).open(&self.path).unwrap()
    }
}

impl Drop for LoopDevice {
    fn drop(&mut self) {
        match Command::new("losetup").args(["-d", &self.path]).output() {
            Ok(o) if o.status.success() => {}
            Ok(o) => eprintln!("could not detach {}: {}", self.path, String::from_utf8_lossy(&o.stderr)),
            Err(e) => eprintln!("could not detach {}: {e}", self.path),
        }
    }
}

/// The OSD uuid `bluestore_label` writes in its header.
pub const LABEL_UUID: &str = "4a6d5b0e-5b8e-4d0c-9a57-0d3c4e1f6a55";

/// The cluster `bluestore_label` names (`ceph_fsid`).
pub const LABEL_CLUSTER: &str = "75757249-f864-4e02-9720-f37e52df334e";

/// A BlueStore label as `ceph-osd --mkfs` writes it (header, then the
/// encoded `bluestore_bdev_label_t` with `whoami` in its meta map), for a
/// device of `size` bytes.
pub fn bluestore_label(whoami: u32, size: u64) -> Vec<u8> {
    fn string(out: &mut Vec<u8>, s: &str) {
        out.extend_from_slice(&(s.len() as u32).to_le_bytes());
        out.extend_from_slice(s.as_bytes());
    }
    let mut out = b"bluestore block device\n4a6d5b0e-5b8e-4d0c-9a57-0d3c4e1f6a55\n".to_vec();
    out.extend_from_slice(&[2, 1, 0, 1, 0, 0]);
    out.extend_from_slice(&[0x4a; 16]);
    out.extend_from_slice(&size.to_le_bytes());
    out.extend_from_slice(&[0; 8]);
    string(&mut out, "main");
    out.extend_from_slice(&2u32.to_le_bytes());
    for (k, v) in [("ceph_fsid", "75757249-f864-4e02-9720-f37e52df334e".to_string()), ("whoami", whoami.to_string())] {
        string(&mut out, k);
        string(&mut out, &v);
    }
    out.resize(4096, 0);
    out
}

pub fn client() -> reqwest::Client {
    reqwest::Client::builder().timeout(Duration::from_secs(60)).build().unwrap()
}

/// A process the agent takes for `ceph-osd -i ID`: a script named
/// `ceph-osd` that sleeps until killed, and `stop-osd ID`, which kills it
/// by the pid this test recorded, as the sandbox's stop.sh does.
pub struct FakeOsd {
    child: Child,
    pub id: u32,
    pub dir: tempfile::TempDir,
}

impl FakeOsd {
    pub fn start(id: u32) -> FakeOsd {
        Self::start_holding(id, None)
    }

    /// A fake that holds `device` open while it runs, as a real OSD holds its disk.
    pub fn start_holding(id: u32, device: Option<&str>) -> FakeOsd {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let osd = dir.path().join("ceph-osd");
        let hold = device.map(|d| format!("exec 3<'{d}'\n")).unwrap_or_default();
        // It waits on its stdin, a pipe this test holds open, and forks
        // nothing: a forked shell keeps the script's name and arguments
        // until it execs, and the agent would rightly count it as a second
        // process serving the OSD.
        std::fs::write(&osd, format!("#!/bin/sh\n{hold}read _\n")).unwrap();
        let stop = dir.path().join("stop-osd");
        let script = format!("#!/bin/sh\nkill \"$(cat {}/osd.$1.pid)\"\n", dir.path().display());
        std::fs::write(&stop, script).unwrap();
        for f in [&osd, &stop] {
            std::fs::set_permissions(f, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        // Another test's thread may fork while the script's write handle is
        // open here; its child holds that handle until it execs, and an exec
        // of the script meanwhile fails with ETXTBSY. That passes in moments.
        let mut tries = 0;
        let child = loop {
            let spawned = Command::new(&osd)
                .args(["-i", &id.to_string(), "-c", "/nonexistent/ceph.conf"])
                .stdin(Stdio::piped())
                .spawn();
            match spawned {
                Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy && tries < 50 => {
                    tries += 1;
                    std::thread::sleep(Duration::from_millis(20));
                }
                other => break other.expect("start the fake ceph-osd"),
            }
        };
        std::fs::write(dir.path().join(format!("osd.{id}.pid")), child.id().to_string()).unwrap();
        FakeOsd { child, id, dir }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits until it holds `device` open (the script opens it first
    /// thing, but a check made before that sees nothing of it).
    pub fn wait_holding(&self, device: &str) {
        let fd = format!("/proc/{}/fd/3", self.pid());
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::fs::read_link(&fd).map(|t| t != Path::new(device)).unwrap_or(true) {
            assert!(Instant::now() < deadline, "the fake osd.{} never opened {device}", self.id);
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// The `--osd-stop-command` template that kills it.
    pub fn stop_command(&self) -> String {
        format!("{} {{id}}", self.dir.path().join("stop-osd").display())
    }

    /// True while the process has not exited (a zombie counts as exited).
    pub fn alive(&self) -> bool {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.pid())).unwrap_or_default();
        let state = stat.rsplit_once(')').and_then(|(_, rest)| rest.trim_start().chars().next());
        !matches!(state, None | Some('Z'))
    }

    /// True once the process has exited, after the agent said its OSD
    /// stopped. The agent judges by the processes that serve the OSD, and a
    /// dying process serves none once its command line is gone (its memory
    /// released), a moment before the kernel makes it a zombie: a test
    /// under load once looked in that moment. A second is far more than it.
    pub fn exited_after_stop(&self) -> bool {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(1);
        while self.alive() {
            if std::time::Instant::now() > deadline {
                return false;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        true
    }
}

impl Drop for FakeOsd {
    fn drop(&mut self) {
        // Kills this child by its pid; nothing else.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
