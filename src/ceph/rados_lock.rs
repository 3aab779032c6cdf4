//! Who holds a RADOS lock (`rados lock info`): a restore into a database
//! kept in RADOS asks it of the database's first object before it opens
//! the database, because the VFS would wait for a held lock forever.

use serde::Deserialize;

use super::cli::CephCli;
use super::xattrs::{no_such_object, ObjectName};
use super::CephError;

/// A client holding the lock, in Ceph's words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockHolder {
    /// The RADOS client (`client.4181`).
    pub client: String,
    /// Its address (`127.0.0.1:0/2759728679`).
    pub addr: String,
    /// When the lock passes unless renewed (Ceph's UTC time).
    pub expires: String,
}

#[derive(Deserialize)]
struct LockInfo {
    lockers: Vec<Locker>,
}

#[derive(Deserialize)]
struct Locker {
    name: String,
    #[serde(default)]
    addr: String,
    #[serde(default)]
    expiration: String,
}

/// The holders `rados lock info -f json` lists (Ceph leaves the expired
/// ones out: a crashed holder's lock is listed until it expires).
pub fn holders(json: &str) -> Result<Vec<LockHolder>, String> {
    let info: LockInfo = serde_json::from_str(json.trim())
        .map_err(|e| format!("cannot read `rados lock info`'s answer ({e}): {json}"))?;
    Ok(info.lockers.into_iter().map(|l| LockHolder { client: l.name, addr: l.addr, expires: l.expiration }).collect())
}

impl CephCli {
    /// The holders of the lock `lock` on the object; none when the object
    /// is not there (no database yet).
    pub async fn lock_holders(&self, at: &ObjectName<'_>, lock: &str) -> Result<Vec<LockHolder>, CephError> {
        let mut args = at.args(&["lock", "info"]);
        args.extend([lock, "--format", "json"]);
        let command = format!("rados {}", args.join(" "));
        match self.rados(&args, self.timeout).await {
            Ok(out) => holders(&out.stdout).map_err(|message| CephError::Decode { command, message }),
            Err(CephError::Command { message, .. }) if no_such_object(&message) => Ok(Vec::new()),
            Err(e) => Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_holders_of_a_lock_are_read_from_rados_lock_info() {
        // Ceph 16.2.15, a database held by sqlite3 through libcephsqlite.
        let held = r#"{"name":"striper.lock","type":"exclusive","tag":"","lockers":[{"name":"client.4181","cookie":"77b77371-c194-4808-9d6e-0fbe565fd61d","description":"SimpleRADOSStriper","expiration":"2026-12-06T00:19:05.684301+0000","addr":"127.0.0.1:0/2759728679"}]}"#;
        assert_eq!(
            holders(held).unwrap(),
            [LockHolder {
                client: "client.4181".into(),
                addr: "127.0.0.1:0/2759728679".into(),
                expires: "2026-12-06T00:19:05.684301+0000".into()
            }]
        );
        let free = r#"{"name":"striper.lock","type":"exclusive","tag":"","lockers":[]}"#;
        assert_eq!(holders(free).unwrap(), []);
        let e = holders("error 2: (2) No such file or directory").unwrap_err();
        assert!(e.contains("cannot read `rados lock info`"), "{e}");
    }
}
