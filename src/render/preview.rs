//! The dry-run, as a table (cephadm's OSDSPEC PREVIEWS plus what cephadm
//! does not say: why each other device was not chosen, and warnings) or as
//! JSON shaped like the cephadm oracle's `preview.py --no-simulate` output
//! with more fields.

use serde::Serialize;

use super::table::Table;
use crate::domain::osd_layout::PlannedOsd;
use crate::domain::plan::{PlanRow, Preview};
use crate::domain::selection::Skipped;
use crate::domain::spec::SpecError;

#[derive(Serialize)]
pub struct ErrorJson<'a> {
    pub doc: usize,
    pub line: usize,
    pub service_id: &'a Option<String>,
    pub error: String,
    pub field: &'a str,
    pub value: &'a Option<String>,
    pub stricter_than_cephadm: bool,
}

impl<'a> From<&'a SpecError> for ErrorJson<'a> {
    fn from(e: &'a SpecError) -> Self {
        ErrorJson {
            doc: e.doc,
            line: e.line,
            service_id: &e.service_id,
            error: e.to_string(),
            field: &e.field,
            value: &e.value,
            stricter_than_cephadm: e.stricter_than_cephadm,
        }
    }
}

#[derive(Serialize)]
struct OsdJson<'a> {
    data: &'a str,
    db: &'a Option<String>,
    wal: &'a Option<String>,
    osd_id: &'a Option<String>,
}

#[derive(Serialize)]
#[serde(untagged)]
enum OsdsJson<'a> {
    Rows(Vec<OsdJson<'a>>),
    Error { error: &'a str },
}

#[derive(Serialize)]
struct SkippedJson<'a> {
    path: &'a str,
    reasons: &'a [String],
}

#[derive(Serialize)]
pub struct RowJson<'a> {
    service_id: &'a Option<String>,
    service_name: &'a str,
    host: &'a str,
    data: &'a [String],
    db: &'a [String],
    wal: &'a [String],
    journal: &'a [String],
    commands: &'a [String],
    preview_commands: &'a [String],
    planned_osds: OsdsJson<'a>,
    skipped: Vec<SkippedJson<'a>>,
    warnings: &'a [String],
    /// Filled by the daemon: seconds since the host's inventory was taken.
    #[serde(skip_serializing_if = "Option::is_none")]
    inventory_age_s: Option<f64>,
}

impl<'a> RowJson<'a> {
    pub fn new(r: &'a PlanRow, inventory_age_s: Option<f64>) -> Self {
        RowJson {
            service_id: &r.service_id,
            service_name: &r.service_name,
            host: &r.host,
            data: &r.data,
            db: &r.db,
            wal: &r.wal,
            journal: &r.journal,
            commands: &r.commands,
            preview_commands: &r.preview_commands,
            planned_osds: match &r.osds {
                Ok(rows) => OsdsJson::Rows(rows.iter().map(osd_json).collect()),
                Err(e) => OsdsJson::Error { error: e },
            },
            skipped: r
                .skipped
                .iter()
                .map(|s: &'a Skipped| SkippedJson {
                    path: &s.path,
                    reasons: &s.reasons,
                })
                .collect(),
            warnings: &r.warnings,
            inventory_age_s,
        }
    }
}

fn osd_json(o: &PlannedOsd) -> OsdJson<'_> {
    OsdJson {
        data: &o.data,
        db: &o.db,
        wal: &o.wal,
        osd_id: &o.osd_id,
    }
}

#[derive(Serialize)]
struct NoteJson<'a> {
    doc: usize,
    service_id: &'a Option<String>,
    note: &'a str,
}

#[derive(Serialize)]
pub struct PreviewJson<'a> {
    errors: Vec<ErrorJson<'a>>,
    preview: Vec<RowJson<'a>>,
    notes: Vec<NoteJson<'a>>,
}

impl<'a> PreviewJson<'a> {
    /// `age` gives each host's inventory age in seconds, where known.
    pub fn new(p: &'a Preview, age: impl Fn(&str) -> Option<f64>) -> Self {
        PreviewJson {
            errors: p.errors.iter().map(ErrorJson::from).collect(),
            preview: p
                .rows
                .iter()
                .map(|r| RowJson::new(r, age(&r.host)))
                .collect(),
            notes: p
                .notes
                .iter()
                .map(|(doc, sid, note)| NoteJson {
                    doc: *doc,
                    service_id: sid,
                    note,
                })
                .collect(),
        }
    }
}

/// The human-readable dry-run.
pub fn preview_table(p: &Preview) -> String {
    let mut out = String::new();
    out.push_str("################\nOSDSPEC PREVIEWS\n################\n");
    let mut t = Table::new(["SERVICE", "NAME", "HOST", "DATA", "DB", "WAL"]);
    for r in &p.rows {
        let name = r.service_id.as_deref().unwrap_or("");
        match &r.osds {
            Ok(osds) => {
                for o in osds {
                    t.row([
                        "osd",
                        name,
                        &r.host,
                        &o.data,
                        o.db.as_deref().unwrap_or("-"),
                        o.wal.as_deref().unwrap_or("-"),
                    ]);
                }
            }
            Err(e) => t.row(["osd", name, &r.host, &format!("({e})"), "-", "-"]),
        }
    }
    if t.is_empty() {
        out.push_str("No OSDs would be created.\n");
    } else {
        out.push_str(&t.boxed());
    }
    let mut not_chosen = String::new();
    let mut warnings = String::new();
    for r in &p.rows {
        let name = r.service_id.as_deref().unwrap_or("<unnamed>");
        if !r.skipped.is_empty() {
            not_chosen.push_str(&format!("  {name} on {}:\n", r.host));
            let w = r.skipped.iter().map(|s| s.path.len()).max().unwrap_or(0);
            for s in &r.skipped {
                let why = if s.reasons.is_empty() {
                    "not looked at".to_string()
                } else {
                    s.reasons.join("; ")
                };
                not_chosen.push_str(&format!("    {:w$}  {why}\n", s.path));
            }
        }
        for w in &r.warnings {
            warnings.push_str(&format!("  {name} on {}: {w}\n", r.host));
        }
    }
    for (_, sid, note) in &p.notes {
        warnings.push_str(&format!(
            "  {}: {note}\n",
            sid.as_deref().unwrap_or("<unnamed>")
        ));
    }
    if !not_chosen.is_empty() {
        out.push_str("\nNot chosen:\n");
        out.push_str(&not_chosen);
    }
    if !warnings.is_empty() {
        out.push_str("\nWarnings:\n");
        out.push_str(&warnings);
    }
    let cmds: Vec<String> = p
        .rows
        .iter()
        .flat_map(|r| {
            r.commands
                .iter()
                .map(move |c| format!("  {}: ceph-volume {c}\n", r.host))
        })
        .collect();
    if !cmds.is_empty() {
        out.push_str("\nCommands:\n");
        out.extend(cmds);
    }
    if !p.errors.is_empty() {
        out.push_str("\nInvalid documents:\n");
        for e in &p.errors {
            out.push_str(&format!("  {e}\n"));
        }
    }
    out
}
