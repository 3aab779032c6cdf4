//! One ceph-volume command line, read as ceph-volume 16.2's argparse reads
//! `lvm batch` and `raw prepare`. The command cephadm builds is the whole
//! interface between a plan and the host, so planning from it keeps the
//! dry-run, the apply and the simulator on exactly the same input.

use std::sync::Arc;

use super::size;

/// What one command asks ceph-volume for.
pub(super) enum Invocation {
    Batch(BatchArgs),
    Raw(RawArgs),
}

/// `lvm batch`, with argparse's conversions done.
pub(super) struct BatchArgs {
    pub data: Vec<Arc<str>>,
    pub db: Vec<Arc<str>>,
    pub wal: Vec<Arc<str>>,
    pub osds_per_device: i64,
    pub data_allocate_fraction: f64,
    /// Bytes; `None` when not given.
    pub block_db_size: Option<f64>,
    pub block_wal_size: Option<f64>,
    pub dmcrypt: bool,
    pub osd_ids: Vec<String>,
}

/// `raw prepare`: one OSD on whole devices.
pub(super) struct RawArgs {
    pub data: Arc<str>,
    pub db: Option<Arc<str>>,
    pub wal: Option<Arc<str>>,
    pub dmcrypt: bool,
    pub osd_id: Option<String>,
}

/// argparse's usage error, on which ceph-volume exits 2.
pub(super) struct UsageError(pub String);

/// Which list the next bare word goes to.
#[derive(Clone, Copy, PartialEq)]
enum List {
    Data,
    Db,
    Wal,
    Ignored,
    Ids,
    Closed,
}

pub(super) fn parse<S: AsRef<str>>(args: &[S]) -> Result<Invocation, UsageError> {
    let words: Vec<&str> = args.iter().map(AsRef::as_ref).collect();
    match words.as_slice() {
        ["lvm", "batch", rest @ ..] => batch(rest).map(Invocation::Batch),
        ["raw", "prepare", rest @ ..] => raw(rest).map(Invocation::Raw),
        _ => Err(UsageError(format!("osdkeeper plans only `lvm batch` and `raw prepare`, not `{}`", words.join(" ")))),
    }
}

fn batch(words: &[&str]) -> Result<BatchArgs, UsageError> {
    let mut b = BatchArgs {
        data: Vec::new(),
        db: Vec::new(),
        wal: Vec::new(),
        osds_per_device: 1,
        data_allocate_fraction: 1.0,
        block_db_size: None,
        block_wal_size: None,
        dmcrypt: false,
        osd_ids: Vec::new(),
    };
    let mut list = List::Closed;
    // argparse gives the positional devices the first run of bare words
    // that no option takes, wherever it is; a second run is an error.
    let mut positional_done = false;
    let mut i = 0;
    while i < words.len() {
        let w = words[i];
        i += 1;
        if !w.starts_with("--") {
            if list == List::Closed && !positional_done {
                list = List::Data;
            }
            match list {
                List::Data => b.data.push(Arc::from(w)),
                List::Db => b.db.push(Arc::from(w)),
                List::Wal => b.wal.push(Arc::from(w)),
                List::Ids => b.osd_ids.push(w.to_string()),
                List::Ignored => {}
                List::Closed => return Err(UsageError(format!("unrecognized arguments: {w}"))),
            }
            continue;
        }
        // A flag ends the list before it.
        positional_done |= list == List::Data;
        list = List::Closed;
        let mut value = || -> Result<&str, UsageError> {
            let v = words.get(i).copied().filter(|v| !v.starts_with("--"));
            i += 1;
            v.ok_or_else(|| UsageError(format!("argument {w}: expected one argument")))
        };
        match w {
            "--db-devices" => list = List::Db,
            "--wal-devices" => list = List::Wal,
            "--journal-devices" => list = List::Ignored,
            "--osd-ids" => list = List::Ids,
            "--block-db-size" => b.block_db_size = Some(size_value(w, value()?)?),
            "--block-wal-size" => b.block_wal_size = Some(size_value(w, value()?)?),
            "--osds-per-device" => {
                let v = value()?;
                b.osds_per_device =
                    v.trim().parse().map_err(|_| UsageError(format!("argument {w}: invalid int value: '{v}'")))?;
            }
            "--data-allocate-fraction" => {
                let v = value()?;
                let f = size::python_float(v)
                    .ok_or_else(|| UsageError(format!("argument {w}: invalid ValidFraction value: '{v}'")))?;
                if f.is_nan() || f <= 0.0 || f > 1.0 {
                    return Err(UsageError(format!("Fraction {f:.6} not in (0,1.0]")));
                }
                b.data_allocate_fraction = f;
            }
            "--crush-device-class" | "--format" => {
                value()?;
            }
            "--dmcrypt" => b.dmcrypt = true,
            "--no-auto" | "--auto" | "--yes" | "--no-systemd" | "--report" | "--bluestore" | "--prepare" => {}
            _ => return Err(UsageError(format!("unrecognized arguments: {w}"))),
        }
    }
    Ok(b)
}

/// argparse names the converter in its message: `Size.parse` is `parse`.
fn size_value(flag: &str, v: &str) -> Result<f64, UsageError> {
    size::parse(v).ok_or_else(|| UsageError(format!("argument {flag}: invalid parse value: '{v}'")))
}

/// Only what shapes the OSD. Like the cephadm oracle, we do not check the
/// rest of the line (`raw prepare` has no `--osds-per-device`, which
/// cephadm appends when the spec sets it).
fn raw(words: &[&str]) -> Result<RawArgs, UsageError> {
    let after = |flag: &str| words.windows(2).find(|w| w[0] == flag).map(|w| w[1]);
    let data = after("--data").ok_or_else(|| UsageError("the following arguments are required: --data".into()))?;
    Ok(RawArgs {
        data: Arc::from(data),
        db: after("--block.db").map(Arc::from),
        wal: after("--block.wal").map(Arc::from),
        dmcrypt: words.contains(&"--dmcrypt"),
        osd_id: after("--osd-id").map(str::to_string),
    })
}
