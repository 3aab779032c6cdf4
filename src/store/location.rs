//! Where the database lives: a local SQLite file (the default), or a
//! database kept in a RADOS pool through Ceph's SQLite VFS
//! (`ceph:POOL/NAMESPACE/NAME`), which every daemon of an active/standby
//! set opens alike. Parsed here, opened by the SQLite adapter.

use std::fmt;
use std::path::{Path, PathBuf};

/// A database the daemon can open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DbLocation {
    File(PathBuf),
    Rados(RadosDb),
}

/// A database in RADOS: its objects are `NAME`'s stripes in `pool`, under
/// `namespace` (empty: the pool's default namespace).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RadosDb {
    pub pool: String,
    pub namespace: String,
    pub name: String,
}

/// The name of the lock Ceph's VFS (its `SimpleRADOSStriper`) takes on a
/// database's first object, as `rados lock info` shows it.
pub const VFS_LOCK: &str = "striper.lock";

/// What a `db:` value that starts with `ceph:` must look like.
pub const RADOS_FORM: &str = "ceph:POOL/NAMESPACE/NAME (or ceph:POOL/NAME for the pool's default namespace)";

impl DbLocation {
    /// Reads a `--db` or `db:` value: `ceph:...` names a RADOS database,
    /// anything else a file. The error says which part is wrong and why.
    pub fn parse(text: &str) -> Result<DbLocation, String> {
        let Some(rest) = text.strip_prefix("ceph:") else {
            if text.is_empty() {
                return Err("db: empty; give a file or ".to_string() + RADOS_FORM);
            }
            return Ok(DbLocation::File(PathBuf::from(text)));
        };
        let parts: Vec<&str> = rest.split('/').collect();
        let (pool, namespace, name) = match parts.as_slice() {
            [pool, name] => (*pool, "", *name),
            [pool, namespace, name] => (*pool, *namespace, *name),
            _ => return Err(format!("db: {text:?} has {} part(s) after ceph:, expected {RADOS_FORM}", parts.len())),
        };
        check_part(text, "POOL", pool, false)?;
        check_part(text, "NAMESPACE", namespace, true)?;
        check_part(text, "NAME", name, false)?;
        Ok(DbLocation::Rados(RadosDb { pool: pool.into(), namespace: namespace.into(), name: name.into() }))
    }

    /// The local file, when it is one.
    pub fn file(&self) -> Option<&Path> {
        match self {
            DbLocation::File(p) => Some(p),
            DbLocation::Rados(_) => None,
        }
    }
}

/// Characters the VFS's file name (`/POOL:NAMESPACE/NAME`) or a URI would
/// read as structure.
const RESERVED: &[char] = &[':', '/', '?', '#', '%', '@'];

fn check_part(text: &str, part: &str, value: &str, may_be_empty: bool) -> Result<(), String> {
    if value.is_empty() && !may_be_empty {
        return Err(format!("db: {text:?}: {part} is empty, expected {RADOS_FORM}"));
    }
    if let Some(c) = value.chars().find(|c| RESERVED.contains(c) || c.is_whitespace() || c.is_control()) {
        return Err(format!(
            "db: {text:?}: {part} {value:?} holds {c:?}, which Ceph's SQLite VFS reads as part of the path"
        ));
    }
    if part == "POOL" && value.starts_with('*') {
        return Err(format!("db: {text:?}: name the pool, not its id ({value:?})"));
    }
    Ok(())
}

impl RadosDb {
    /// The file name Ceph's VFS takes: `/POOL:NAMESPACE/NAME`.
    pub fn vfs_path(&self) -> String {
        format!("/{}:{}/{}", self.pool, self.namespace, self.name)
    }

    /// The object whose RADOS lock is the database's: Ceph's VFS stripes
    /// `NAME` over objects `NAME.<16 hex digits>` and locks the first one
    /// (`VFS_LOCK`) for as long as a connection holds the database.
    pub fn first_object(&self) -> String {
        format!("{}.{:016x}", self.name, 0)
    }

    /// The same pool and namespace, another name: where a restore keeps
    /// the database it replaces.
    pub fn beside(&self, suffix: &str) -> RadosDb {
        RadosDb { name: format!("{}{suffix}", self.name), ..self.clone() }
    }

    /// The object beside the database where the leader says where it is
    /// (a standby cannot read the database: the leader holds its lock).
    pub fn leader_object(&self) -> String {
        format!("{}.osdkeeper-leader", self.name)
    }
}

impl fmt::Display for RadosDb {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.namespace.is_empty() {
            write!(f, "ceph:{}/{}", self.pool, self.name)
        } else {
            write!(f, "ceph:{}/{}/{}", self.pool, self.namespace, self.name)
        }
    }
}

impl fmt::Display for DbLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DbLocation::File(p) => write!(f, "{}", p.display()),
            DbLocation::Rados(r) => r.fmt(f),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ceph_url_names_pool_namespace_and_database_and_anything_else_is_a_file() {
        let at = DbLocation::parse("ceph:osdkeeper/prod/osdkeeper.db").unwrap();
        let DbLocation::Rados(r) = &at else { panic!("{at:?}") };
        assert_eq!((r.pool.as_str(), r.namespace.as_str(), r.name.as_str()), ("osdkeeper", "prod", "osdkeeper.db"));
        assert_eq!(r.vfs_path(), "/osdkeeper:prod/osdkeeper.db");
        assert_eq!(at.to_string(), "ceph:osdkeeper/prod/osdkeeper.db");
        let default_ns = DbLocation::parse("ceph:osdkeeper/osdkeeper.db").unwrap();
        let DbLocation::Rados(r) = &default_ns else { panic!() };
        assert_eq!(r.vfs_path(), "/osdkeeper:/osdkeeper.db");
        assert_eq!(default_ns.to_string(), "ceph:osdkeeper/osdkeeper.db");
        // As `rados ls` lists a database the VFS made (Ceph 16.2).
        assert_eq!(r.first_object(), "osdkeeper.db.0000000000000000");
        let aside = r.beside(".before-restore-1764460800");
        assert_eq!(aside.to_string(), "ceph:osdkeeper/osdkeeper.db.before-restore-1764460800");
        assert_eq!(aside.vfs_path(), "/osdkeeper:/osdkeeper.db.before-restore-1764460800");
        assert_eq!(
            DbLocation::parse("/var/lib/osdkeeper/osdkeeper.db").unwrap().file(),
            Some(Path::new("/var/lib/osdkeeper/osdkeeper.db"))
        );
        assert_eq!(DbLocation::parse("ceph.db").unwrap().file(), Some(Path::new("ceph.db")), "only the ceph: prefix");
    }

    #[test]
    fn a_bad_ceph_url_says_which_part_is_wrong_and_why() {
        let cases = [
            ("ceph:", "has 1 part(s) after ceph:"),
            ("ceph:pool", "has 1 part(s) after ceph:"),
            ("ceph:a/b/c/d", "has 4 part(s)"),
            ("ceph:/ns/db", "POOL is empty"),
            ("ceph:pool/ns/", "NAME is empty"),
            ("ceph:po:ol/ns/db", "POOL \"po:ol\" holds ':'"),
            ("ceph:pool/n s/db", "NAMESPACE \"n s\" holds ' '"),
            ("ceph:pool/ns/d?b", "NAME \"d?b\" holds '?'"),
            ("ceph:*3/ns/db", "name the pool, not its id"),
            ("", "db: empty"),
        ];
        for (text, why) in cases {
            let e = DbLocation::parse(text).unwrap_err();
            assert!(e.contains(why), "{text:?}: {e}");
        }
    }
}
