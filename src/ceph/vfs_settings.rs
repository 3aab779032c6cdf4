//! The lock settings Ceph's SQLite VFS will run with, read before the
//! daemon waits for the database's lock (`domain::lock_fencing` derives the
//! leader's fencing from them).
//!
//! Read by a client that `vfs_settings.py` makes the way the VFS makes its
//! own, from this process's environment (`CEPH_CONF`, `CEPH_ARGS`: what
//! `serve` gave the VFS), through Ceph's Python binding over the same
//! librados: each value is what that library makes of Ceph's defaults, the
//! monitors' config for the client's name, the conf file and `CEPH_ARGS`,
//! checked by its own rules. `ceph config get` would not do: it gives the
//! monitors' value, which a 16.2 client drops (measured: the monitors of an
//! 18.2 cluster held 12000 ms, and a 16.2 VFS locked for 30 s).
//!
//! The binding must be of the VFS's release, as Debian installs them
//! (`python3-rados` and `libsqlite3-mod-ceph` on one `librados2`): the
//! config's `ceph.python`.

use std::process::Stdio;
use std::time::Duration;

use tokio::process::Command;

use super::CephError;
use crate::domain::lock_fencing::{VfsLockSettings, BLOCKLIST_OPTION, INTERVAL_OPTION, TIMEOUT_OPTION};

const SCRIPT: &str = include_str!("vfs_settings.py");
/// How the reading is named in errors.
const LABEL: &str = "vfs_settings.py (the VFS's lock settings, through Ceph's Python binding)";

/// The VFS's lock settings, read with `python` within `timeout`.
pub async fn vfs_lock_settings(python: &str, timeout: Duration) -> Result<VfsLockSettings, CephError> {
    let mut cmd = Command::new(python);
    cmd.arg("-c").arg(SCRIPT).arg(timeout.as_secs().max(1).to_string());
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).kill_on_drop(true);
    let child = cmd.spawn().map_err(|e| CephError::Spawn { bin: python.to_string(), message: e.to_string() })?;
    let out = tokio::time::timeout(timeout + Duration::from_secs(5), child.wait_with_output())
        .await
        .map_err(|_| CephError::Timeout { command: LABEL.to_string(), seconds: timeout.as_secs() })?
        .map_err(|e| CephError::Spawn { bin: python.to_string(), message: e.to_string() })?;
    if !out.status.success() {
        let said = String::from_utf8_lossy(&out.stderr);
        let last = said.lines().rfind(|l| !l.trim().is_empty()).unwrap_or_default().trim().to_string();
        return Err(CephError::Command {
            command: LABEL.to_string(),
            code: out.status.code().unwrap_or(-1),
            message: last,
        });
    }
    read(&String::from_utf8_lossy(&out.stdout))
        .map_err(|message| CephError::Decode { command: LABEL.to_string(), message })
}

/// The script's lines, "OPTION VALUE", each option once.
fn read(stdout: &str) -> Result<VfsLockSettings, String> {
    let value = |option: &str| {
        let mut found = stdout.lines().filter_map(|l| l.split_once(' ')).filter(|(o, _)| *o == option);
        match (found.next(), found.next()) {
            (Some((_, v)), None) => Ok(v.trim()),
            _ => Err(format!("{option} not given once in {stdout:?}")),
        }
    };
    VfsLockSettings::read(value(TIMEOUT_OPTION)?, value(INTERVAL_OPTION)?, value(BLOCKLIST_OPTION)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scripts_lines_are_read_and_a_missing_or_repeated_option_is_named() {
        let out = "cephsqlite_lock_renewal_timeout 12000\ncephsqlite_lock_renewal_interval 1000\n\
                   cephsqlite_blocklist_dead_locker true\n";
        let s = read(out).unwrap();
        assert_eq!((s.timeout, s.renewal_interval), (Duration::from_secs(12), Duration::from_secs(1)));
        assert!(s.blocklist_dead_locker);
        let e = read("cephsqlite_lock_renewal_timeout 12000\n").unwrap_err();
        assert!(e.starts_with("cephsqlite_lock_renewal_interval not given once"), "{e}");
        let twice = format!("{out}cephsqlite_lock_renewal_timeout 30000\n");
        assert!(read(&twice).unwrap_err().starts_with("cephsqlite_lock_renewal_timeout not given once"));
    }

    /// The script under a Python without Ceph's binding: it says so, and
    /// the error names what to install.
    #[tokio::test]
    async fn without_the_binding_the_error_names_the_package() {
        let dir = tempfile::tempdir().unwrap();
        let python = dir.path().join("python-without-rados");
        std::fs::write(&python, "#!/bin/sh\nexec /usr/bin/python3 -S -I \"$@\"\n").unwrap();
        std::process::Command::new("chmod").arg("+x").arg(&python).status().unwrap();
        let e = vfs_lock_settings(python.to_str().unwrap(), Duration::from_secs(5)).await.unwrap_err();
        assert!(e.to_string().contains("cannot import Ceph's Python binding (python3-rados)"), "{e}");
    }
}
