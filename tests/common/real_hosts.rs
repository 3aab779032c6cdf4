//! Real-kernel Ceph hosts for the tests that need LVM, dm-crypt, udev and
//! systemd (testbed/real-hosts/cluster.sh): qemu VMs booted from
//! throw-away overlays of a prepared cluster, killed by their pid files
//! and their overlays deleted when dropped. Every command a test runs on a
//! host goes through `sh`/`sh_ok`, which on failure print the host, the
//! command, its exit status, stdout and stderr.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::repo;

pub fn scripts() -> PathBuf {
    repo().join("testbed/real-hosts")
}

/// What a command on a host gave.
pub struct Out {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

pub struct RealCluster {
    pub run: PathBuf,
}

impl RealCluster {
    /// Clones the prepared cluster (building the image and the cluster
    /// first when this machine has none) into `run` and boots every host.
    pub fn up(run: &Path) -> RealCluster {
        let port_base = super::sandbox::free_port_base();
        let out = Command::new(scripts().join("cluster.sh"))
            .arg("up")
            .arg(run)
            .args(["--port-base", &port_base.to_string()])
            .output()
            .expect("run cluster.sh up");
        let cluster = RealCluster { run: run.to_path_buf() };
        assert!(
            out.status.success(),
            "the real-host cluster did not come up:\n--- stdout:\n{}\n--- stderr:\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        eprintln!("{}", String::from_utf8_lossy(&out.stdout).trim());
        cluster
    }

    fn script(&self, args: &[&str]) -> Out {
        let out = Command::new(scripts().join("cluster.sh"))
            .arg(args[0])
            .arg(&self.run)
            .args(&args[1..])
            .output()
            .expect("run cluster.sh");
        Out {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    fn script_ok(&self, args: &[&str]) -> String {
        let out = self.script(args);
        assert_eq!(
            out.code,
            0,
            "`cluster.sh {}` exited {}\n--- stdout:\n{}\n--- stderr:\n{}",
            args.join(" "),
            out.code,
            out.stdout,
            out.stderr
        );
        out.stdout
    }

    /// A shell command line as root on `host`.
    pub fn sh(&self, host: &str, command: &str) -> Out {
        self.script(&["ssh", host, command])
    }

    /// `sh`, which must succeed.
    pub fn sh_ok(&self, host: &str, command: &str) -> String {
        let out = self.sh(host, command);
        assert_eq!(
            out.code, 0,
            "on {host}: `{command}` exited {}\n--- stdout:\n{}\n--- stderr:\n{}",
            out.code, out.stdout, out.stderr
        );
        out.stdout
    }

    /// A command's JSON output.
    pub fn json(&self, host: &str, command: &str) -> Value {
        let out = self.sh_ok(host, command);
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("on {host}: `{command}` printed no JSON ({e}):\n{out}"))
    }

    /// `ceph ARGS --format json` on `host`.
    pub fn ceph(&self, host: &str, args: &str) -> Value {
        self.json(host, &format!("CEPH_ARGS='--connect-timeout 15' ceph {args} --format json"))
    }

    pub fn copy(&self, host: &str, src: &Path, dest: &str) {
        self.script_ok(&["copy", host, &src.display().to_string(), dest]);
    }

    /// Hot-adds a blank disk to a running host, as one is pushed into a
    /// free bay (`kind`: hdd or ssd).
    pub fn plug(&self, host: &str, name: &str, kind: &str, size: &str, scsi_id: u32) {
        self.script_ok(&["plug", host, name, kind, size, &scsi_id.to_string()]);
    }

    /// Hot-removes a disk, as it is pulled from its bay.
    pub fn unplug(&self, host: &str, name: &str) {
        self.script_ok(&["unplug", host, name]);
    }

    /// Reboots a host's guest; returns when ssh answers from the new boot.
    pub fn reboot(&self, host: &str) {
        self.script_ok(&["reboot", host]);
    }

    /// A host's ports on 127.0.0.1: (ssh, agent 8741, daemon 8740).
    pub fn ports(&self, host: &str) -> (u16, u16, u16) {
        let out = self.script_ok(&["ports", host]);
        let p: Vec<u16> = out.split_whitespace().map(|w| w.parse().unwrap()).collect();
        (p[0], p[1], p[2])
    }

    /// The run's share: what is put here every host reads at /mnt/osdk
    /// (read-only).
    pub fn share(&self) -> PathBuf {
        self.run.join("share")
    }

    /// A command in the run's network namespace, where the mon and the mgr
    /// listen (10.88.0.254) and the hosts' agents are reached on the L2;
    /// `CEPH_CONF` names the run's cluster (client.admin).
    pub fn ns_command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut cmd = Command::new(scripts().join("cluster.sh"));
        cmd.arg("ns").arg(&self.run).arg(program);
        cmd
    }

    /// `ceph ARGS --format json` from the admin side, as client.admin.
    pub fn admin_ceph(&self, args: &[&str]) -> Value {
        let out = self
            .ns_command("ceph")
            .args(["--connect-timeout", "15"])
            .args(args)
            .args(["--format", "json"])
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "`ceph {}` exited {:?}\n--- stdout:\n{stdout}\n--- stderr:\n{}",
            args.join(" "),
            out.status.code(),
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_str(&stdout)
            .unwrap_or_else(|e| panic!("`ceph {}` printed no JSON ({e}):\n{stdout}", args.join(" ")))
    }

    /// The last lines of a host's console, for a failure's explanation.
    pub fn console(&self, host: &str) -> String {
        let log = std::fs::read_to_string(self.run.join("hosts").join(host).join("console.log")).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(40)..].join("\n")
    }
}

impl Drop for RealCluster {
    fn drop(&mut self) {
        let out = self.script(&["down"]);
        if out.code != 0 {
            eprintln!("cluster.sh down {} failed:\n{}\n{}", self.run.display(), out.stdout, out.stderr);
        }
    }
}

/// Each step's time, printed as it ends and kept in a file of the run:
/// the field report's test is judged by its timeline too.
pub struct Timeline {
    start: Instant,
    last: Instant,
    file: PathBuf,
}

impl Timeline {
    pub fn new(run: &Path) -> Timeline {
        let now = Instant::now();
        Timeline { start: now, last: now, file: run.join("timeline.txt") }
    }

    pub fn step(&mut self, what: &str) {
        let now = Instant::now();
        let line = format!(
            "{:>7.1} s  {:>6.1} s  {what}",
            now.duration_since(self.start).as_secs_f64(),
            now.duration_since(self.last).as_secs_f64()
        );
        eprintln!("timeline: {line}");
        let mut all = std::fs::read_to_string(&self.file).unwrap_or_default();
        all.push_str(&line);
        all.push('\n');
        std::fs::write(&self.file, all).unwrap();
        self.last = now;
    }

    pub fn total(&self) -> Duration {
        self.start.elapsed()
    }
}
