//! Snapshot tests of the pure planner: device selection (with the reason for
//! every device passed over), the ceph-volume commands and the OSDs
//! ceph-volume's batch would make, for every spec over every host.
//!
//! Each case is a directory `tests/fixtures/plan/<case>/` holding `spec.yaml`,
//! `inventory.json` (the format `osdkeeper preview` reads) and `expected.txt`,
//! the rendered plan. `UPDATE_EXPECT=1 cargo test --test plan_fixtures`
//! rewrites the expected files; review the diff. How to add a case and how
//! the expectations were checked against cephadm: tests/fixtures/plan/README.md.
//!
//! One extension over the preview format, for the tests only: a top-level
//! `"held": {HOST: {PATH: REASON}}` marks devices osdkeeper holds back (the
//! daemon sets these from its holds; cephadm, and so the oracle, ignores the key).

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use osdkeeper::domain::inventory::ClusterView;
use osdkeeper::domain::osd_layout::{display_size, PlannedOsd};
use osdkeeper::domain::plan::{preview_with_threads, Preview};
use osdkeeper::domain::selection::describe;
use osdkeeper::domain::spec::{parse_spec_file, SpecDocument};
use osdkeeper::wire::inventory_file::read_inventory;
use osdkeeper::wire::preview_json::{write_json, PreviewReport};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/plan")
}

/// Plans `<case>/spec.yaml` over `<case>/inventory.json` and compares the
/// rendered plan with `<case>/expected.txt`.
fn check(case: &str) {
    let dir = fixtures().join(case);
    let text = std::fs::read_to_string(dir.join("spec.yaml")).expect("spec.yaml");
    let docs = parse_spec_file(&text).unwrap_or_else(|e| panic!("{case}: {e}"));
    let raw = std::fs::read(dir.join("inventory.json")).expect("inventory.json");
    let mut view = read_inventory(&raw[..]).unwrap_or_else(|e| panic!("{case}: {e}"));
    apply_holds(&raw, &mut view);
    let plan = preview_with_threads(&docs, &view, 1);
    expect_test::expect_file![dir.join("expected.txt")].assert_eq(&render(&docs, &view, &plan));
    // `preview --format json` writes its rows from the plan itself; the
    // bytes must be those of the API's typed document.
    let report = PreviewReport::new(&plan, &docs, &view);
    let mut written = Vec::new();
    write_json(&report, &mut written, 2).expect("written to memory");
    let doc = serde_json::to_string(&report.doc()).expect("serialized");
    assert_eq!(String::from_utf8(written).expect("UTF-8"), doc, "{case}: write_json differs from the document");
}

/// The test-only `held` key (see the module comment).
fn apply_holds(raw: &[u8], view: &mut ClusterView) {
    #[derive(serde::Deserialize)]
    struct Holds {
        #[serde(default)]
        held: HashMap<String, HashMap<String, String>>,
    }
    let holds: Holds = serde_json::from_slice(raw).expect("inventory.json is JSON");
    for (host, paths) in holds.held {
        let inv = view.hosts.iter_mut().find(|h| h.name == host).unwrap_or_else(|| panic!("held: no host {host}"));
        for (path, reason) in paths {
            let d = Arc::make_mut(&mut inv.devices)
                .iter_mut()
                .find(|d| *d.path == *path)
                .unwrap_or_else(|| panic!("held: no {path}"));
            d.held = Some(Arc::from(reason.as_str()));
        }
    }
}

/// One block per (spec, host) row in plan order, each with a selection,
/// commands, osds, unused and warnings section; then the invalid documents and the
/// specs' notes.
fn render(docs: &[SpecDocument], view: &ClusterView, plan: &Preview) -> String {
    let mut out = String::new();
    let none = |out: &mut String| out.push_str("    (none)\n");
    for row in &plan.rows {
        let spec = docs[row.spec].spec.as_ref().expect("rows come from valid specs");
        let host = &view.hosts[row.host];
        let sel = &row.selection;
        let _ = writeln!(out, "== {} on {} (document {})", spec.service_name(), host.name, docs[row.spec].doc);

        out.push_str("  selection:\n");
        for (role, paths) in [("data", &sel.data), ("db", &sel.db), ("wal", &sel.wal), ("journal", &sel.journal)] {
            let list: Vec<&str> = paths.iter().map(|p| &**p).collect();
            let list = if list.is_empty() { "-".to_string() } else { list.join(" ") };
            let _ = writeln!(out, "    {role:<8} {list}");
        }
        for sk in &sel.skipped {
            let d = &host.devices[sk.device];
            let _ = writeln!(out, "    skipped  {}", d.path);
            if sk.passes.is_empty() {
                out.push_str("      (not looked at)\n");
            }
            for (role, pass) in sk.passes.iter() {
                let _ = writeln!(out, "      {}", describe(spec, *role, d, *pass));
            }
        }

        out.push_str("  commands:\n");
        if row.commands.is_empty() {
            none(&mut out);
        }
        for c in &row.commands {
            let _ = writeln!(out, "    ceph-volume {}", osdkeeper::domain::command::CommandLine(c));
        }

        out.push_str("  osds:\n");
        match &row.layout {
            Ok(layout) if layout.osds.is_empty() => none(&mut out),
            Ok(layout) => {
                for o in &layout.osds {
                    let _ = writeln!(out, "    {}", osd_line(o));
                }
            }
            Err(e) => {
                let _ = writeln!(out, "    error: {e}");
            }
        }

        out.push_str("  unused:\n");
        let unused = row.layout.as_ref().map(|l| l.unused.as_slice()).unwrap_or_default();
        if unused.is_empty() {
            none(&mut out);
        }
        for u in unused {
            let _ = writeln!(out, "    {}  {}: {}", u.path, u.role.short(), u.why);
        }

        out.push_str("  warnings:\n");
        let layout_warnings = row.layout.as_ref().map(|l| l.warnings.as_slice()).unwrap_or_default();
        if sel.warnings.is_empty() && layout_warnings.is_empty() {
            none(&mut out);
        }
        for w in sel.warnings.iter().chain(layout_warnings) {
            let _ = writeln!(out, "    {w}");
        }
        out.push('\n');
    }
    if plan.rows.is_empty() {
        out.push_str("(no host matched any valid spec)\n\n");
    }

    out.push_str("errors:\n");
    if plan.errors.is_empty() {
        out.push_str("  (none)\n");
    }
    for e in &plan.errors {
        let _ = writeln!(out, "  {e}");
    }
    let notes: Vec<String> = docs
        .iter()
        .filter_map(|d| d.spec.as_ref().ok().map(|s| (d.doc, s)))
        .flat_map(|(doc, s)| s.notes.iter().map(move |n| format!("  document {doc}: {n}")))
        .collect();
    if !notes.is_empty() {
        out.push_str("notes:\n");
        for n in notes {
            out.push_str(&n);
            out.push('\n');
        }
    }
    out
}

/// One OSD as ceph-volume's report has it: sizes (in its units) and
/// encryption only where the report carries them (`lvm batch`, not raw).
fn osd_line(o: &PlannedOsd) -> String {
    let vol = |path: Option<&str>, size: Option<f64>| match (path, size) {
        (Some(p), Some(s)) => format!("{p} [{}]", display_size(s)),
        (Some(p), None) => p.to_string(),
        (None, _) => "-".to_string(),
    };
    let mut line = format!(
        "data={} db={} wal={} osd_id={}",
        vol(Some(&o.data), o.data_size),
        vol(o.db.as_deref(), o.db_size),
        vol(o.wal.as_deref(), o.wal_size),
        o.osd_id.as_deref().unwrap_or("-")
    );
    if o.data_size.is_some() {
        line.push_str(if o.encrypted { " encryption=dmcrypt" } else { " encryption=None" });
    }
    line
}

/// One test per case directory, named after it.
macro_rules! cases {
    ($($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                check(&stringify!($name).replace('_', "-"));
            }
        )*

        /// Every directory under tests/fixtures/plan is a listed case.
        #[test]
        fn every_case_directory_is_listed() {
            let listed: Vec<String> = vec![$(stringify!($name).replace('_', "-")),*];
            let mut found: Vec<String> = std::fs::read_dir(fixtures())
                .expect("tests/fixtures/plan")
                .map(|e| e.expect("dir entry").path())
                .filter(|p| p.is_dir())
                .map(|p| p.file_name().expect("name").to_string_lossy().into_owned())
                .collect();
            found.sort();
            let mut listed_sorted = listed.clone();
            listed_sorted.sort();
            assert_eq!(found, listed_sorted, "add the case to the cases! list in tests/plan_fixtures.rs");
        }
    };
}

cases! {
    all_true_leaves_nothing_for_db,
    block_db_size_larger_than_db_device,
    data_osd_in_shared_db_device,
    db_device_partly_used_by_this_spec,
    db_slots_short_full_db_device,
    encrypted_flags_order,
    exclusive_data_before_db,
    filter_logic_or,
    hdd_data_ssd_db,
    held_device,
    limit_with_existing_daemons,
    method_raw,
    method_raw_ratio_error,
    model_substring_case_sensitive,
    osd_id_claims_raw,
    osd_id_claims_replace,
    osds_per_device_with_db,
    paths_data_also_selected_as_db,
    paths_explicit,
    placement_host_pattern,
    placement_hosts_list,
    placement_label_no_schedule,
    rotational_hdd_only,
    size_exact_binary_readout,
    size_lower_bound,
    size_range_both_quirks,
    size_upper_bound,
    unavailable_and_used_devices,
    vendor_and_model_and,
    wal_assigned_before_db,
}
