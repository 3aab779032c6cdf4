//! Running `ceph-volume` on the host: its inventory (checked before it is
//! trusted) and the OSD-creating commands the daemon asks for.

pub mod args;
pub mod release;

use std::time::Duration;

use serde_json::Value;

use crate::agent_server::inventory::device_list::Devices;
use crate::agent_server::process::{self, command_line, Keep, Limits, RunError};
use crate::wire::agent::CommandResult;
use crate::wire::ceph_volume::{reports_of, CephRelease, ReleaseError};

/// How to run ceph-volume.
#[derive(Debug, Clone)]
pub struct CephVolume {
    /// The program (`ceph-volume`, found in PATH, unless configured).
    pub program: String,
    pub inventory_timeout: Duration,
    pub command_timeout: Duration,
}

/// Why ceph-volume's inventory cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum InventoryError {
    #[error(transparent)]
    Run(#[from] RunError),
    #[error("`ceph-volume inventory` exited with status {code}: {stderr}")]
    Exit { code: i32, stderr: String },
    #[error(
        "`ceph-volume inventory` exited with status {code}: {stderr} (ceph-volume 20.2 reads udev's database, \
         /run/udev/data, for every disk of the host and fails as a whole when one disk has no entry there, \
         even when asked for one device: is systemd-udevd running, and its /run/udev visible to ceph-volume?)"
    )]
    NoUdevData { code: i32, stderr: String },
    #[error("`ceph-volume inventory` printed no device list: {0}")]
    Output(String),
}

/// Why the release of ceph-volume's Ceph is not known.
#[derive(Debug, thiserror::Error)]
pub enum VersionError {
    #[error("cannot run `{program} --version`: {source}")]
    Run { program: String, source: RunError },
    #[error("`{program} --version` exited with status {code}: {stderr}")]
    Exit { program: String, code: i32, stderr: String },
    #[error("`{program} --version`: {source}")]
    Read { program: String, source: ReleaseError },
}

/// Output kept of a command: enough for any real ceph-volume run, bounded
/// against a runaway one.
pub const COMMAND_OUTPUT_LIMIT: usize = 4 << 20;

/// The largest inventory ceph-volume may print: 75 000 devices at the
/// 850 bytes a device of the fleet benchmark takes (every `sys_api` key of
/// 16.2), 8000 at 8 KB (a DB SSD listing a dozen LVs).
pub const INVENTORY_OUTPUT_LIMIT: usize = 64 << 20;

impl CephVolume {
    /// `ceph-volume inventory --format json`, accepted only if it is a list
    /// of device reports the daemon can read. `filter_for_batch` adds
    /// `--filter-for-batch`, as cephadm does.
    /// `release`: the release of ceph-volume's Ceph, where known, for the reader.
    pub async fn inventory(
        &self,
        filter_for_batch: bool,
        release: Option<&CephRelease>,
    ) -> Result<Devices, InventoryError> {
        let mut cmd = tokio::process::Command::new(&self.program);
        cmd.args(["inventory", "--format", "json"]).kill_on_drop(true);
        if filter_for_batch {
            cmd.arg("--filter-for-batch");
        }
        let limits = Limits { timeout: self.inventory_timeout, max_output: INVENTORY_OUTPUT_LIMIT, keep: Keep::Head };
        let out = process::run(cmd, limits).await?;
        if !out.status.success() {
            let (code, stderr) = (out.exit_code(), out.stderr.last_line());
            if stderr.contains("No udev data could be retrieved") {
                return Err(InventoryError::NoUdevData { code, stderr });
            }
            return Err(InventoryError::Exit { code, stderr });
        }
        if out.stdout.dropped > 0 {
            return Err(InventoryError::Output(format!("more than {} bytes", out.stdout.bytes.len())));
        }
        let json: Vec<Value> =
            serde_json::from_slice(&out.stdout.bytes).map_err(|e| InventoryError::Output(e.to_string()))?;
        let reports = reports_of(&json, release).map_err(|e| InventoryError::Output(e.to_string()))?;
        if let Some(i) = reports.iter().position(|d| d.path.is_empty()) {
            let shown: String = json[i].to_string().chars().take(120).collect();
            return Err(InventoryError::Output(format!("an entry without a path: {shown}")));
        }
        Ok(Devices { json, reports })
    }

    /// The `ceph` beside ceph-volume: in its directory when ceph-volume is
    /// given as a path (a package's `/usr/bin`, a sandbox's or a container
    /// wrapper's `bin/`), else `ceph` from PATH, where ceph-volume is found.
    pub fn ceph_program(&self) -> String {
        match self.program.rsplit_once('/') {
            Some((dir, _)) => format!("{dir}/ceph"),
            None => "ceph".to_string(),
        }
    }

    /// The release ceph-volume belongs to, from `ceph --version` beside it:
    /// ceph-volume has no `--version`, and comes in the same packages (or
    /// image) as the `ceph` next to it.
    pub async fn release(&self) -> Result<CephRelease, VersionError> {
        let program = self.ceph_program();
        let mut cmd = tokio::process::Command::new(&program);
        cmd.arg("--version").kill_on_drop(true).current_dir("/");
        let limits = Limits { timeout: self.inventory_timeout, max_output: 64 << 10, keep: Keep::Head };
        let out =
            process::run(cmd, limits).await.map_err(|source| VersionError::Run { program: program.clone(), source })?;
        if !out.status.success() {
            return Err(VersionError::Exit { program, code: out.exit_code(), stderr: out.stderr.last_line() });
        }
        CephRelease::parse(&out.stdout.text()).map_err(|source| VersionError::Read { program, source })
    }

    /// Runs one command to its end (or its timeout). A command that fails
    /// is still a result: the daemon judges its exit code.
    pub async fn run(&self, args: &[String], env: &[(String, String)]) -> Result<CommandResult, RunError> {
        let mut cmd = tokio::process::Command::new(&self.program);
        cmd.args(args).envs(env.iter().map(|(k, v)| (k, v)));
        // Relative names must not resolve against the agent's directory.
        cmd.current_dir("/");
        let limits = Limits { timeout: self.command_timeout, max_output: COMMAND_OUTPUT_LIMIT, keep: Keep::Tail };
        let out = process::run(cmd, limits).await?;
        Ok(CommandResult {
            command: command_line(&self.program, args, env),
            exit_code: out.exit_code(),
            stdout: with_drop_note(out.stdout.text(), out.stdout.dropped),
            stderr: with_drop_note(out.stderr.text(), out.stderr.dropped),
        })
    }
}

fn with_drop_note(text: String, dropped: u64) -> String {
    if dropped == 0 {
        text
    } else {
        format!("[... {dropped} earlier bytes not kept ...]\n{text}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake(script: &str) -> (tempfile::TempDir, CephVolume) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ceph-volume");
        std::fs::write(&path, format!("#!/bin/sh\n{script}\n")).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        let cv = CephVolume {
            program: path.display().to_string(),
            inventory_timeout: Duration::from_secs(5),
            command_timeout: Duration::from_secs(5),
        };
        (dir, cv)
    }

    #[test]
    fn command_lines_are_shell_quoted() {
        let env = [("CEPH_VOLUME_OSDSPEC_AFFINITY".to_string(), "my spec".to_string())];
        let args: Vec<String> = ["lvm", "batch", "/dev/sdb", "--crush-device-class", "it's"].map(String::from).into();
        assert_eq!(
            command_line("ceph-volume", &args, &env),
            r"CEPH_VOLUME_OSDSPEC_AFFINITY='my spec' ceph-volume lvm batch /dev/sdb --crush-device-class 'it'\''s'"
        );
    }

    #[tokio::test]
    async fn inventory_is_checked_before_it_is_trusted() {
        let (_d, cv) = fake(r#"echo '[{"path": "/dev/sdb", "available": true, "sys_api": {}}]'"#);
        assert_eq!(cv.inventory(false, None).await.unwrap().reports.len(), 1);
        let (_d, cv) = fake(r#"[ "$4" = --filter-for-batch ] && echo '[]' || echo "args: $*" >&2"#);
        assert!(cv.inventory(true, None).await.unwrap().json.is_empty(), "the flag is passed on");
        let (_d, cv) = fake("echo '--> Executable udevadm not in PATH' >&2; exit 1");
        let e = cv.inventory(false, None).await.unwrap_err();
        assert_eq!(e.to_string(), "`ceph-volume inventory` exited with status 1: --> Executable udevadm not in PATH");
        // What 20.2.4 printed with an empty /run/udev (recorded on the tentacle sandbox).
        let stderr = include_str!("../../../tests/fixtures/ceph_volume/inventory_tentacle_20.2.4_no_udev_data.stderr");
        let (_d, cv) = fake(&format!("echo '{}' >&2; exit 1", stderr.trim()));
        let e = cv.inventory(false, None).await.unwrap_err().to_string();
        assert!(e.starts_with("`ceph-volume inventory` exited with status 1: -->  RuntimeError: No udev data"), "{e}");
        assert!(e.contains("is systemd-udevd running"), "{e}");
        let (_d, cv) = fake("echo 'not json'");
        assert!(matches!(cv.inventory(false, None).await, Err(InventoryError::Output(_))));
        let (_d, cv) = fake(r#"echo '[{"available": true}]'"#);
        assert!(cv.inventory(false, None).await.unwrap_err().to_string().contains("without a path"));
        let (_d, mut cv) = fake("sleep 10");
        cv.inventory_timeout = Duration::from_millis(200);
        assert!(matches!(cv.inventory(false, None).await, Err(InventoryError::Run(RunError::TimedOut { .. }))));
    }

    #[tokio::test]
    async fn the_release_from_the_ceph_beside_it() {
        let (dir, cv) = fake("exit 1");
        assert_eq!(cv.ceph_program(), format!("{}/ceph", dir.path().display()));
        assert!(matches!(cv.release().await, Err(VersionError::Run { .. })), "no ceph beside it");
        let ceph = dir.path().join("ceph");
        let line = "ceph version 20.2.4 (7f793731f1b39eb4f465e960113d2363c311b964) tentacle (stable - RelWithDebInfo)";
        std::fs::write(&ceph, format!("#!/bin/sh\n[ \"$1\" = --version ] && echo '{line}'\n")).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&ceph, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(cv.release().await.unwrap().to_string(), "20.2.4 (tentacle)");
        std::fs::write(&ceph, "#!/bin/sh\necho 'ceph version 15.2.17 (x) octopus (stable)'\n").unwrap();
        let e = cv.release().await.unwrap_err().to_string();
        assert!(e.ends_with("--version`: Ceph 15.2.17 is release 15, which osdkeeper does not know (it knows 16 pacific to 20 tentacle)"), "{e}");
        let bare = CephVolume { program: "ceph-volume".into(), ..cv };
        assert_eq!(bare.ceph_program(), "ceph");
    }

    #[tokio::test]
    async fn runs_commands_with_their_environment() {
        let (_d, cv) = fake(r#"echo "args: $*"; echo "affinity: $CEPH_VOLUME_OSDSPEC_AFFINITY" >&2; exit 5"#);
        let args: Vec<String> = ["raw", "prepare", "--data", "/dev/sdb"].map(String::from).into();
        let env = [("CEPH_VOLUME_OSDSPEC_AFFINITY".to_string(), "fast".to_string())];
        let r = cv.run(&args, &env).await.unwrap();
        assert_eq!(r.exit_code, 5);
        assert_eq!(r.stdout, "args: raw prepare --data /dev/sdb\n");
        assert_eq!(r.stderr, "affinity: fast\n");
        assert!(r.command.ends_with("ceph-volume raw prepare --data /dev/sdb"), "{}", r.command);
    }
}
