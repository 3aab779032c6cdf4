//! `osdkeeper backup FILE` and `osdkeeper restore FILE`: the daemon's
//! database, copied while it runs and put back while it is stopped. Both
//! work on the database file itself (run them on the daemon's host, as its
//! user), as `sqlite3 .backup` would, so they need no daemon and no token.
//! A database kept in RADOS is backed up through its leading daemon (the
//! lock admits no other connection) and restored with every daemon on it
//! stopped, as the cephx user of the config's `ceph:`.

use std::path::PathBuf;
use std::process::ExitCode;

use super::exit;
use super::remote::Remote;
use crate::app::backup::{self, BackupFacts, KeptFromReplaced, RadosDb};
use crate::wire::api::backup::BackupRequest;

#[derive(clap::Args, Debug)]
pub struct DbArgs {
    /// The backup file (a SQLite database).
    file: PathBuf,
    /// The daemon's config file, for its `db:` [env OSDKEEPER_CONFIG].
    #[arg(long, env = "OSDKEEPER_CONFIG")]
    config: Option<PathBuf>,
    /// The daemon's database, a file or ceph:POOL/NAMESPACE/NAME [default: the config file's `db:`, else osdkeeper.db].
    #[arg(long)]
    db: Option<PathBuf>,
}

impl DbArgs {
    fn db(&self) -> Result<PathBuf, String> {
        backup::database(self.db.as_deref(), self.config.as_deref())
    }
}

fn holds(f: &BackupFacts) -> String {
    format!(
        "schema {}, {} hosts, {} specs, {} removals, {} events, {} bytes",
        f.schema_version, f.hosts, f.specs, f.removals, f.events, f.bytes
    )
}

fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| format!("cannot start: {e}"))
}

/// `backup FILE`: a consistent copy of the live database, checked. A
/// database kept in RADOS is copied by its leading daemon (`--url`), to
/// FILE on that daemon's machine.
pub fn run_backup(args: DbArgs, remote: &Remote) -> ExitCode {
    if let Some(db) = backup::in_rados(args.db.as_deref(), args.config.as_deref()) {
        return backup_through(remote, &db, &args.file);
    }
    let done = args.db().and_then(|db| {
        let facts = runtime()?.block_on(backup::backup(&db, &args.file))?;
        Ok((db, facts))
    });
    match done {
        Ok((db, facts)) => {
            super::out::line(format!("backed up {} to {} ({})", db.display(), args.file.display(), holds(&facts)));
            ExitCode::SUCCESS
        }
        Err(e) => fail("backup", e),
    }
}

/// `restore FILE`: the backup in place of the database (daemon stopped).
pub fn run_restore(args: DbArgs) -> ExitCode {
    if let Some(db) = backup::in_rados(args.db.as_deref(), args.config.as_deref()) {
        return restore_rados(&args, &db);
    }
    let done = args.db().and_then(|db| {
        let r = runtime()?.block_on(backup::restore(&db, &args.file))?;
        Ok((db, r))
    });
    match done {
        Ok((db, r)) => {
            let aside = r.aside.map(|a| a.display().to_string());
            restored(&db.display().to_string(), &args, &r.facts, aside, r.kept.as_ref());
            ExitCode::SUCCESS
        }
        Err(e) => fail("restore", e),
    }
}

/// What a restore did, in lines.
fn restored(db: &str, args: &DbArgs, facts: &BackupFacts, aside: Option<String>, kept: Option<&KeptFromReplaced>) {
    super::out::line(format!("restored {db} from {} ({})", args.file.display(), holds(facts)));
    if let Some(aside) = aside {
        super::out::line(format!("the database it replaced is kept as {aside}"));
    }
    match kept {
        Some(kept) => taken_over(kept),
        None => {
            super::out::line(
                "no database was replaced: tokens revoked, disks held and a recovery boost set after the backup \
                 are not in it (revoke and hold them again; `ceph config dump` shows the boost's settings)",
            );
            migrates(facts);
        }
    }
}

/// What was taken over from the replaced database, one line per kind.
fn taken_over(k: &KeptFromReplaced) {
    let lists = [
        ("tokens revoked after the backup, revoked again", &k.revoked),
        ("tokens made after the backup, kept", &k.tokens),
        ("holds made after the backup, kept", &k.holds),
        ("holds released after the backup, held again (`device release` them again)", &k.holds_released_since),
        ("hosts added after the backup that hold disks, kept", &k.hosts),
    ];
    for (what, names) in lists.into_iter().filter(|(_, n)| !n.is_empty()) {
        super::out::line(format!("{what}: {}", names.join(", ")));
    }
    if k.boost_taken {
        super::out::line("the recovery boost set on the cluster is kept: it is put back once no fast drain is left");
    } else if k.boost_dropped {
        super::out::line("the backup's recovery boost is dropped: it was put back after the backup");
    }
}

/// `restore FILE` into a database kept in RADOS, every daemon on it stopped.
fn restore_rados(args: &DbArgs, db: &RadosDb) -> ExitCode {
    let done = backup::ceph_settings(args.config.as_deref()).and_then(|ceph| {
        // The cluster as the daemon finds it: CEPH_CONF wins over the config's.
        let conf = std::env::var_os("CEPH_CONF").map(PathBuf::from).or(ceph.conf.clone());
        // Before the runtime's threads: the VFS reads them from the environment.
        super::serve::vfs_environment(conf.as_deref(), ceph.name.as_deref(), ceph.keyring.as_deref())?;
        runtime()?.block_on(backup::restore_rados(db, &ceph, conf, &args.file))
    });
    match done {
        Ok(r) => {
            let aside = r.aside.map(|a| a.to_string());
            restored(&db.to_string(), args, &r.facts, aside, r.kept.as_ref());
            ExitCode::SUCCESS
        }
        Err(e) => fail("restore", e),
    }
}

fn migrates(facts: &BackupFacts) {
    let known = backup::known_schema_version();
    if facts.schema_version < known {
        super::out::line(format!(
            "the next `osdkeeper serve` migrates it from schema {} to {known}",
            facts.schema_version
        ));
    }
}

fn backup_through(remote: &Remote, db: &RadosDb, file: &std::path::Path) -> ExitCode {
    let Some(path) = file.to_str().map(str::to_string) else {
        return fail("backup", format!("{}: the path is not UTF-8", file.display()));
    };
    super::remote::run(|| async move {
        let done = remote.client()?.backup(&BackupRequest { file: path }).await?;
        super::out::line(format!("backed up {db} to {} on the daemon's machine ({})", done.file, holds(&done.facts())));
        Ok(ExitCode::SUCCESS)
    })
}

fn fail(what: &str, message: String) -> ExitCode {
    eprintln!("osdkeeper {what}: {message}");
    ExitCode::from(exit::INVALID)
}
