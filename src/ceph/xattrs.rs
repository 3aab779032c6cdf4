//! Small values kept as xattrs of RADOS objects, through the `rados` CLI:
//! the leader record beside a database in RADOS (`app/leader.rs`).

use std::time::Duration;

use super::cli::CephCli;
use super::CephError;

/// A RADOS object, by pool, namespace (empty: the default one) and name.
pub struct ObjectName<'a> {
    pub pool: &'a str,
    pub namespace: &'a str,
    pub object: &'a str,
}

impl ObjectName<'_> {
    /// `rados` arguments: the pool and namespace, the verb's words, the object.
    pub(super) fn args<'b>(&'b self, verb: &[&'b str]) -> Vec<&'b str> {
        let mut args = vec!["--pool", self.pool];
        if !self.namespace.is_empty() {
            args.extend(["--namespace", self.namespace]);
        }
        args.extend(verb);
        args.push(self.object);
        args
    }
}

/// Whether `rados` failed because the object is not there (ENOENT).
pub(super) fn no_such_object(message: &str) -> bool {
    message.contains("No such file or directory")
}

impl CephCli {
    /// Sets `key` of the object (creating the object if needed).
    pub async fn set_xattr(&self, at: &ObjectName<'_>, key: &str, value: &str) -> Result<(), CephError> {
        let mut args = at.args(&["setxattr"]);
        args.extend([key, value]);
        self.rados(&args, self.timeout).await.map(|_| ())
    }

    /// `key` of the object; None when the object or the key is not there.
    pub async fn get_xattr(&self, at: &ObjectName<'_>, key: &str) -> Result<Option<String>, CephError> {
        let mut args = at.args(&["getxattr"]);
        args.push(key);
        match self.rados(&args, self.timeout.max(Duration::from_secs(1))).await {
            Ok(out) => Ok(Some(out.stdout)),
            // ENOENT (object) and ENODATA (key) both mean "none written yet".
            Err(CephError::Command { message, .. })
                if no_such_object(&message) || message.contains("No data available") =>
            {
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }
}
