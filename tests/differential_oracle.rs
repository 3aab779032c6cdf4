//! osdkeeper's planner against the real cephadm selection code of 16.2
//! (Debian's python3-ceph-common, run by testbed/cephadm-oracle), 18.2 and
//! 20.2 (the same code of the Debian roots `preview.py --release` runs).
//!
//! Every hand-written oracle case, 300 random valid (spec, inventory) pairs
//! and 300 pairs with perturbed specs must agree on which documents are
//! invalid and on every host's (service_id, service_name, host, data, db,
//! wal, journal, commands, preview_commands). The only exception: documents
//! osdkeeper refuses on purpose (`stricter_than_cephadm`, listed in
//! docs/differences-from-cephadm.md).
//!
//! They must also agree on the OSDs ceph-volume 16.2 would make: every
//! planned OSD (data, db and wal with ceph-volume's sizes, encryption,
//! claimed id) equals the oracle's simulated `ceph-volume lvm batch
//! --report` row (`osds`, from the real batch planning code), and where the
//! oracle's ceph-volume refuses, osdkeeper refuses with the same message.
//! For raw mode the oracle pairs devices only, so only data, db and wal are
//! compared there.
//!
//! For 17.2, 18.2, 19.2 and 20.2 the hand cases are judged again by that
//! release's code (17.2.9's and 19.2.3's from Ubuntu's packages),
//! their inventories written as its ceph-volume writes them, and random
//! pairs get the keys that release added (tests/oracle/generate.py
//! --release); osdkeeper plans them with `--ceph-release` semantics.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::Command;

use osdkeeper::domain::ceph_release::Release;
use osdkeeper::domain::plan::preview;
use osdkeeper::domain::spec::parse_spec_file_as;
use osdkeeper::wire::inventory_file::read_inventory;
use serde_json::Value;

fn oracle_dir() -> PathBuf {
    let dir = std::env::var_os("OSDKEEPER_ORACLE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("testbed/cephadm-oracle"));
    assert!(
        dir.join("preview.py").exists(),
        "cephadm oracle not found at {} (set OSDKEEPER_ORACLE_DIR)",
        dir.display()
    );
    dir
}

fn require_ceph_python() {
    let ok = Command::new("/usr/bin/python3")
        .args(["-c", "import ceph.deployment.drive_selection"])
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        ok,
        "the oracle needs Debian's python3-ceph-common: run .ci/run, or apt-get install -y python3-ceph-common"
    );
}

const ROW_KEYS: [&str; 9] =
    ["service_id", "service_name", "host", "data", "db", "wal", "journal", "commands", "preview_commands"];

#[derive(Default, Debug)]
struct Tally {
    cases: usize,
    compared_rows: usize,
    /// Hosts whose planned OSDs were compared with the simulated report.
    compared_layouts: usize,
    compared_osds: usize,
    refusals_agreed: usize,
    invalid_docs_agreed: usize,
    stricter_docs: usize,
    cases_without_stricter: usize,
    /// Hosts with one `lvm batch` per CRUSH device class (18.2+), whose
    /// OSDs are not compared: the oracle simulates their commands as one
    /// batch, ceph-volume runs them one after the other.
    per_class_layouts_not_compared: usize,
}

/// Compares one case directory; returns a description of any disagreement.
fn check_case(dir: &Path, release: Release, tally: &mut Tally) -> Option<String> {
    let expected: Value = serde_json::from_reader(File::open(dir.join("expected.json")).unwrap()).unwrap();
    if let Some(crash) = expected.get("oracle_crash") {
        return Some(format!("the oracle crashed: {crash}"));
    }
    let text = std::fs::read_to_string(dir.join("spec.yaml")).unwrap();
    let docs = match parse_spec_file_as(&text, release) {
        Ok(d) => d,
        Err(e) => return Some(format!("our YAML reader refused the file: {e}")),
    };
    let view = read_inventory(File::open(dir.join("inventory.json")).unwrap()).expect("inventory");
    let got = preview(&docs, &view);
    tally.cases += 1;

    let stricter: BTreeSet<usize> = got.errors.iter().filter(|e| e.stricter_than_cephadm).map(|e| e.doc).collect();
    let stricter_ids: BTreeSet<String> = docs
        .iter()
        .filter(|d| stricter.contains(&d.doc))
        .filter_map(|d| d.spec.as_ref().err().and_then(|e| e.service_id.clone()))
        .collect();
    tally.stricter_docs += stricter.len();
    if stricter.is_empty() {
        tally.cases_without_stricter += 1;
    }
    let ours: BTreeSet<usize> = got.errors.iter().map(|e| e.doc).filter(|d| !stricter.contains(d)).collect();
    let theirs: BTreeSet<usize> = expected["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["doc"].as_u64().unwrap() as usize)
        .filter(|d| !stricter.contains(d))
        .collect();
    if ours != theirs {
        let their_msgs: Vec<String> =
            expected["errors"].as_array().unwrap().iter().map(|e| e["error"].to_string()).collect();
        let our_msgs: Vec<String> = got.errors.iter().map(|e| e.to_string()).collect();
        return Some(format!(
            "invalid documents differ: cephadm {theirs:?} {their_msgs:?}, osdkeeper {ours:?} {our_msgs:?}"
        ));
    }
    tally.invalid_docs_agreed += ours.len();

    let project = |row: &Value| -> Option<String> {
        let sid = match &row["service_id"] {
            Value::String(s) => s.clone(),
            Value::Null => "None".into(),
            other => other.to_string(),
        };
        if stricter_ids.contains(&sid) {
            return None;
        }
        let picked: serde_json::Map<String, Value> =
            ROW_KEYS.iter().map(|k| (k.to_string(), row[*k].clone())).collect();
        Some(Value::Object(picked).to_string())
    };
    let mut theirs_rows: Vec<String> = expected["preview"]
        .as_array()
        .unwrap()
        .iter()
        .map(raw_claims_as_osdkeeper_passes_them)
        .filter_map(|r| project(&r))
        .collect();
    let rendered =
        serde_json::to_value(osdkeeper::wire::preview_json::PreviewReport::new(&got, &docs, &view).doc()).unwrap();
    let mut ours_rows: Vec<String> = rendered["preview"].as_array().unwrap().iter().filter_map(project).collect();
    theirs_rows.sort();
    ours_rows.sort();
    if theirs_rows != ours_rows {
        let only_theirs: Vec<&String> = theirs_rows.iter().filter(|r| !ours_rows.contains(r)).collect();
        let only_ours: Vec<&String> = ours_rows.iter().filter(|r| !theirs_rows.contains(r)).collect();
        return Some(format!("plans differ:\n  cephadm only: {only_theirs:?}\n  osdkeeper only: {only_ours:?}"));
    }
    tally.compared_rows += ours_rows.len();
    check_layouts(&expected, &rendered, &stricter_ids, tally)
}

type RowKey = (String, String);

fn row_key(row: &Value) -> RowKey {
    let sid = match &row["service_id"] {
        Value::String(s) => s.clone(),
        Value::Null => "None".into(),
        other => other.to_string(),
    };
    (sid, row["host"].as_str().unwrap_or_default().to_string())
}

/// Our planned OSDs against the oracle's simulated batch report, host by
/// host (the rows already agree, so each host of the oracle has ours).
fn check_layouts(
    expected: &Value,
    rendered: &Value,
    stricter_ids: &BTreeSet<String>,
    tally: &mut Tally,
) -> Option<String> {
    let mut ours: BTreeMap<RowKey, Vec<&Value>> = BTreeMap::new();
    for row in rendered["preview"].as_array().unwrap() {
        ours.entry(row_key(row)).or_default().push(row);
    }
    let mut seen: BTreeMap<RowKey, usize> = BTreeMap::new();
    let mut diffs = Vec::new();
    for row in expected["preview"].as_array().unwrap() {
        let key = row_key(row);
        if stricter_ids.contains(&key.0) {
            continue;
        }
        let nth = seen.entry(key.clone()).or_default();
        let mine = ours.get(&key).and_then(|rows| rows.get(*nth)).expect("the rows agree");
        *nth += 1;
        let Some(theirs) = row.get("osds") else { continue };
        let raw = mine["commands"].as_array().unwrap().iter().any(|c| c.as_str().unwrap().starts_with("raw "));
        if !raw && mine["commands"].as_array().unwrap().len() > 1 {
            tally.per_class_layouts_not_compared += 1;
            continue;
        }
        let planned = &mine["planned_osds"];
        tally.compared_layouts += 1;
        let agrees = match (theirs, planned) {
            (Value::Array(t), Value::Array(o)) => {
                let as_report: Vec<Value> = o.iter().map(|osd| report_row(osd, raw)).collect();
                let theirs_rows: Vec<Value> = t.iter().map(|r| if raw { raw_row(r) } else { r.clone() }).collect();
                let same = as_report == theirs_rows;
                tally.compared_osds += if same { o.len() } else { 0 };
                same
            }
            (Value::Object(t), Value::Object(o)) => {
                let same = refusal_agrees(t, o["error"].as_str().unwrap_or_default());
                tally.refusals_agreed += usize::from(same);
                same
            }
            _ => false,
        };
        if agrees {
            continue;
        }
        diffs.push(format!(
            "{} on {}: planned OSDs differ from ceph-volume's batch report\n    ceph-volume (oracle): {theirs}\n    osdkeeper:            {}",
            key.0,
            key.1,
            if planned.is_array() {
                Value::Array(planned.as_array().unwrap().iter().map(|o| report_row(o, raw)).collect())
            } else {
                planned.clone()
            }
        ));
    }
    (!diffs.is_empty()).then(|| diffs.join("\n"))
}

/// One of our planned OSDs as `Batch.OSD.report_json` would print it.
fn report_row(osd: &Value, raw: bool) -> Value {
    let mut r = serde_json::Map::new();
    let mut put = |k: &str, v: &Value| {
        if let Some(s) = v.as_str() {
            r.insert(k.to_string(), Value::String(s.to_string()));
        }
    };
    put("data", &osd["data"]);
    put("block_db", &osd["db"]);
    put("block_wal", &osd["wal"]);
    if !raw {
        put("data_size", &osd["data_size"]);
        put("block_db_size", &osd["db_size"]);
        put("block_wal_size", &osd["wal_size"]);
        put("osd_id", &osd["osd_id"]);
        let enc = if osd["encrypted"] == true { "dmcrypt" } else { "None" };
        r.insert("encryption".into(), Value::String(enc.into()));
    }
    Value::Object(r)
}

/// The oracle's raw rows pair devices only (see the module comment).
fn raw_row(row: &Value) -> Value {
    let keep = ["data", "block_db", "block_wal"];
    Value::Object(
        row.as_object()
            .unwrap()
            .iter()
            .filter(|(k, _)| keep.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
    )
}

/// ceph-volume's lines before it exits 1 (`batch.py`); the hand cases'
/// stored reports say only that it exited.
const EXIT_1_MESSAGES: [&str; 2] = [" can be fulfilled", " num_osds"];

/// Our refusal says what the oracle's ceph-volume said: its exception, or
/// the error line it logged before exiting (`message`, from generate.py).
fn refusal_agrees(theirs: &serde_json::Map<String, Value>, ours: &str) -> bool {
    let Some(ours) = ours.strip_prefix("ceph-volume would fail: ") else { return false };
    let error = theirs["error"].as_str().unwrap_or_default();
    if let Some(message) = theirs.get("message").and_then(Value::as_str) {
        return ours.starts_with(message);
    }
    if let Some(exception) = error.strip_prefix("ceph-volume batch: ") {
        return ours.starts_with(exception);
    }
    error == "ceph-volume batch would exit(1)"
        && EXIT_1_MESSAGES.iter().any(|m| ours.split(" (").next().unwrap_or_default().ends_with(m))
}

/// The one documented difference in commands (docs/differences-from-cephadm.md):
/// cephadm 16.2 appends every claimed id as `--osd-ids A B` to each
/// `raw prepare`, which ceph-volume refuses; osdkeeper passes the i-th claim
/// as `--osd-id` to the i-th prepare, at the same place.
fn raw_claims_as_osdkeeper_passes_them(row: &Value) -> Value {
    let mut row = row.clone();
    for key in ["commands", "preview_commands"] {
        let Some(list) = row[key].as_array_mut() else { continue };
        for (i, cmd) in list.iter_mut().enumerate() {
            let Some(text) = cmd.as_str().filter(|c| c.starts_with("raw prepare")) else { continue };
            let words: Vec<&str> = text.split(' ').collect();
            let Some(at) = words.iter().position(|w| *w == "--osd-ids") else { continue };
            let ids: Vec<&str> = words[at + 1..].iter().take_while(|w| !w.starts_with("--")).copied().collect();
            let mut out: Vec<&str> = words[..at].to_vec();
            let claimed = ids.get(i).map(|id| ["--osd-id", id]);
            out.extend(claimed.iter().flatten());
            out.extend(&words[at + 1 + ids.len()..]);
            *cmd = Value::String(out.join(" "));
        }
    }
    row
}

fn check_dirs(dirs: Vec<PathBuf>) -> Tally {
    check_dirs_as(dirs, Release::Pacific)
}

fn check_dirs_as(dirs: Vec<PathBuf>, release: Release) -> Tally {
    let mut tally = Tally::default();
    let mut failures = Vec::new();
    for d in dirs {
        if let Some(why) = check_case(&d, release, &mut tally) {
            failures.push(format!("{}: {why}", d.display()));
        }
    }
    eprintln!("{} of {} cases disagree; {tally:?}", failures.len(), tally.cases);
    assert!(failures.is_empty(), "{} disagreements with cephadm:\n{}", failures.len(), failures.join("\n"));
    tally
}

fn case_dirs(root: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> =
        std::fs::read_dir(root).unwrap().map(|e| e.unwrap().path()).filter(|p| p.is_dir()).collect();
    v.sort();
    v
}

/// The oracle's name of a release (preview.py --release).
fn oracle_release(release: Release) -> &'static str {
    match release {
        Release::Pacific => panic!("16.2 is the host's own oracle, without --release"),
        other => other.name(),
    }
}

/// A release's oracle needs its code: 18.2's and 20.2's Debian root, made
/// once per machine (scripts/test makes them while the tests compile), or
/// 17.2.9's and 19.2.3's Python code from Ubuntu's packages, fetched here
/// when missing (seconds).
fn require_release_code(release: Release) {
    let version = match release {
        Release::Pacific => return,
        Release::Reef | Release::Tentacle => {
            let suite = if release == Release::Reef { "trixie" } else { "sid" };
            let cache = std::env::var("CEPH_SANDBOX_CACHE").unwrap_or_else(|_| "/var/cache/ceph-sandbox".into());
            let root = Path::new(&cache).join(suite);
            assert!(
                root.join(".ceph-sandbox-ready").exists(),
                "the {release} oracle runs that release's code from {}: make it once, as root, with \
                 testbed/ceph-sandbox/release-root.sh {}",
                root.display(),
                oracle_release(release)
            );
            return;
        }
        Release::Quincy => "17.2.9",
        Release::Squid => "19.2.3",
    };
    let cache = std::env::var("CEPH_CODE_CACHE").unwrap_or_else(|_| "/var/cache/ceph-code".into());
    if Path::new(&cache).join(version).join(".ready").exists() {
        return;
    }
    let maker = Path::new(env!("CARGO_MANIFEST_DIR")).join("testbed/ceph-sandbox/release-code.sh");
    let fetched = Command::new(&maker).arg(version).stdout(std::process::Stdio::null()).status();
    assert!(
        fetched.is_ok_and(|s| s.success()),
        "the {release} oracle runs Ceph {version}'s code from {cache}/{version}, which is missing and could not \
         be fetched (see above): run, as root, {} {version}",
        maker.display()
    );
}

fn generate_as(kind: &str, count: usize, seed: u64, mutate: bool, release: Release) -> PathBuf {
    require_ceph_python();
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("oracle-{kind}-{seed}-{}", release.name()));
    let _ = std::fs::remove_dir_all(&out);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/oracle/generate.py");
    let mut cmd = Command::new("/usr/bin/python3");
    cmd.arg(script).arg(oracle_dir()).arg(&out).arg(count.to_string()).arg(seed.to_string());
    if mutate {
        cmd.arg("--mutate");
    }
    if release != Release::Pacific {
        require_release_code(release);
        cmd.args(["--release", oracle_release(release)]);
    }
    let status = cmd.status().expect("run the oracle generator");
    assert!(status.success(), "the oracle generator failed");
    out
}

#[test]
fn hand_written_oracle_cases_agree() {
    let tally = check_dirs(case_dirs(&oracle_dir().join("cases")));
    assert!(tally.cases >= 40, "{tally:?}");
    assert!(tally.invalid_docs_agreed >= 15, "the invalid cases must be compared: {tally:?}");
    assert!(
        tally.compared_layouts >= 30 && tally.refusals_agreed >= 1,
        "the batch reports must be compared: {tally:?}"
    );
}

#[test]
fn random_valid_specs_agree() {
    random_valid_agree_as(Release::Pacific, 1);
}

#[test]
fn random_perturbed_specs_agree() {
    random_perturbed_agree_as(Release::Pacific, 2);
}

/// The example specs shipped in specs/ over the example cluster inventory.
#[test]
fn example_specs_agree() {
    require_ceph_python();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let inventory = root.join("specs/f5-422-inventory.json");
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("oracle-examples");
    let _ = std::fs::remove_dir_all(&out);
    let mut dirs = Vec::new();
    for entry in std::fs::read_dir(root.join("specs")).unwrap() {
        let spec = entry.unwrap().path();
        if spec.extension().is_none_or(|e| e != "yaml") {
            continue;
        }
        let dir = out.join(spec.file_stem().unwrap());
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::copy(&spec, dir.join("spec.yaml")).unwrap();
        std::fs::copy(&inventory, dir.join("inventory.json")).unwrap();
        let result = Command::new("/usr/bin/python3")
            .arg(oracle_dir().join("preview.py"))
            .args([dir.join("spec.yaml"), dir.join("inventory.json")])
            .output()
            .expect("run the oracle");
        assert!(result.status.success(), "oracle failed on {}", spec.display());
        std::fs::write(dir.join("expected.json"), result.stdout).unwrap();
        dirs.push(dir);
    }
    let tally = check_dirs(dirs);
    assert!(tally.cases >= 5, "{tally:?}");
    assert_eq!(tally.stricter_docs, 0, "the examples are valid for cephadm too");
    assert!(tally.compared_rows >= 8, "{tally:?}");
    assert!(tally.compared_osds >= 8, "{tally:?}");
}

/// The hand cases, judged again by the code of `release`.
fn hand_cases_as(release: Release) -> Tally {
    require_ceph_python();
    require_release_code(release);
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("oracle-cases-{}", release.name()));
    let _ = std::fs::remove_dir_all(&out);
    let status = Command::new("/usr/bin/python3")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/oracle/generate.py"))
        .arg(oracle_dir())
        .arg(&out)
        .arg("--cases")
        .arg(oracle_dir().join("cases"))
        .args(["--release", oracle_release(release)])
        .status()
        .expect("run the oracle");
    assert!(status.success(), "the {release} oracle failed on the hand cases");
    check_dirs_as(case_dirs(&out), release)
}

fn hand_cases_agree_as(release: Release) {
    let tally = hand_cases_as(release);
    assert!(tally.cases >= 40, "{tally:?}");
    assert!(tally.invalid_docs_agreed >= 14, "the invalid cases must be compared: {tally:?}");
    assert!(tally.compared_layouts >= 30 && tally.refusals_agreed >= 1, "{tally:?}");
}

/// 300 random pairs judged by `release`'s code (OSDKEEPER_DIFF_SEED, else
/// `default_seed`), every one agreeing.
fn random_cases_as(kind: &str, mutate: bool, release: Release, default_seed: u64) -> Tally {
    let seed: u64 = std::env::var("OSDKEEPER_DIFF_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(default_seed);
    let tally = check_dirs_as(case_dirs(&generate_as(kind, 300, seed, mutate, release)), release);
    assert_eq!(tally.cases, 300);
    tally
}

fn random_valid_agree_as(release: Release, default_seed: u64) {
    let tally = random_cases_as("valid", false, release, default_seed);
    assert!(tally.cases_without_stricter >= 290, "valid specs should rarely hit a deliberate difference: {tally:?}");
    assert!(tally.compared_rows >= 1000, "{tally:?}");
    assert!(tally.compared_layouts >= 1000 && tally.compared_osds >= 3000, "{tally:?}");
}

fn random_perturbed_agree_as(release: Release, default_seed: u64) {
    let tally = random_cases_as("mutated", true, release, default_seed);
    assert!(tally.invalid_docs_agreed >= 50, "perturbations must produce invalid documents: {tally:?}");
    assert!(tally.compared_rows >= 500, "{tally:?}");
    assert!(tally.compared_layouts >= 500 && tally.refusals_agreed >= 5, "{tally:?}");
}

/// 18.2.7's cephadm and ceph-volume: the hand cases, 300 random valid
/// pairs and 300 perturbed ones.
#[test]
fn reef_agrees() {
    hand_cases_agree_as(Release::Reef);
    random_valid_agree_as(Release::Reef, 3);
    random_perturbed_agree_as(Release::Reef, 4);
}

/// 20.2.4's, the same way.
#[test]
fn tentacle_agrees() {
    hand_cases_agree_as(Release::Tentacle);
    random_valid_agree_as(Release::Tentacle, 3);
    random_perturbed_agree_as(Release::Tentacle, 4);
}

/// 17.2.9's (Ubuntu's packages, testbed/ceph-sandbox/release-code.sh), the
/// same way.
#[test]
fn quincy_agrees() {
    hand_cases_agree_as(Release::Quincy);
    random_valid_agree_as(Release::Quincy, 3);
    random_perturbed_agree_as(Release::Quincy, 4);
}

/// 19.2.3's, the same way.
#[test]
fn squid_agrees() {
    hand_cases_agree_as(Release::Squid);
    random_valid_agree_as(Release::Squid, 3);
    random_perturbed_agree_as(Release::Squid, 4);
}
