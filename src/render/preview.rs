//! The dry-run, as a table (cephadm's OSDSPEC PREVIEWS plus what cephadm
//! does not say: why each other device was not chosen, and warnings) or as
//! JSON shaped like the cephadm oracle's `preview.py --no-simulate` output
//! with more fields. Reasons are formatted straight into the output: a plan
//! over thousands of hosts has a reason for every disk.

use std::fmt::Write as _;

use serde::ser::{SerializeMap, SerializeSeq, Serializer};
use serde::Serialize;

use super::table::Table;
use crate::domain::inventory::ClusterView;
use crate::domain::plan::{PlanRow, Preview, PREVIEW_SUFFIX};
use crate::domain::selection::{describe, Skipped};
use crate::domain::spec::{DriveSpec, SpecDocument, SpecError};

/// A preview with what it needs to be shown.
pub struct PreviewReport<'a> {
    pub preview: &'a Preview,
    pub docs: &'a [SpecDocument],
    pub view: &'a ClusterView,
    /// Seconds since each host's inventory was taken, where known.
    pub inventory_age: &'a (dyn Fn(&str) -> Option<f64> + Sync),
}

impl<'a> PreviewReport<'a> {
    pub fn new(preview: &'a Preview, docs: &'a [SpecDocument], view: &'a ClusterView) -> Self {
        PreviewReport { preview, docs, view, inventory_age: &|_| None }
    }

    fn spec(&self, row: &PlanRow) -> &'a DriveSpec {
        self.docs[row.spec].spec.as_ref().expect("rows come from valid specs")
    }

    fn notes(&self) -> impl Iterator<Item = (&'a SpecDocument, &'a DriveSpec, &'a String)> + 'a {
        self.docs
            .iter()
            .filter_map(|d| d.spec.as_ref().ok().map(|s| (d, s)))
            .flat_map(|(d, s)| s.notes.iter().map(move |n| (d, s, n)))
    }
}

/// One error as JSON.
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

impl Serialize for PreviewReport<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(3))?;
        let errors: Vec<ErrorJson<'_>> = self.preview.errors.iter().map(ErrorJson::from).collect();
        m.serialize_entry("errors", &errors)?;
        m.serialize_entry("preview", &Rows(self))?;
        let notes: Vec<serde_json::Value> = self
            .notes()
            .map(|(d, s, n)| serde_json::json!({"doc": d.doc, "service_id": s.service_id, "note": n}))
            .collect();
        m.serialize_entry("notes", &notes)?;
        m.end()
    }
}

struct Rows<'r, 'a>(&'r PreviewReport<'a>);

impl Serialize for Rows<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.0.preview.rows.len()))?;
        for row in &self.0.preview.rows {
            seq.serialize_element(&RowView { report: self.0, row })?;
        }
        seq.end()
    }
}

struct RowView<'r, 'a> {
    report: &'r PreviewReport<'a>,
    row: &'r PlanRow,
}

/// A list serialized from an iterator of displayable items.
struct Strings<I>(std::cell::Cell<Option<I>>);

impl<I: Iterator<Item = T>, T: std::fmt::Display> Serialize for Strings<I> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let items = self.0.take().expect("serialized once");
        let mut seq = s.serialize_seq(None)?;
        for item in items {
            seq.serialize_element(&Displayed(item))?;
        }
        seq.end()
    }
}

struct Displayed<T>(T);

impl<T: std::fmt::Display> Serialize for Displayed<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&self.0)
    }
}

fn strings<I: Iterator<Item = T>, T: std::fmt::Display>(items: I) -> Strings<I> {
    Strings(std::cell::Cell::new(Some(items)))
}

impl Serialize for RowView<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let spec = self.report.spec(self.row);
        let host = &self.report.view.hosts[self.row.host];
        let sel = &self.row.selection;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("service_id", &spec.service_id)?;
        m.serialize_entry("service_name", &spec.service_name())?;
        m.serialize_entry("host", &host.name)?;
        m.serialize_entry("data", &sel.data)?;
        m.serialize_entry("db", &sel.db)?;
        m.serialize_entry("wal", &sel.wal)?;
        m.serialize_entry("journal", &sel.journal)?;
        m.serialize_entry("commands", &self.row.commands)?;
        m.serialize_entry(
            "preview_commands",
            &strings(self.row.commands.iter().map(|c| format!("{c}{PREVIEW_SUFFIX}"))),
        )?;
        match &self.row.osds {
            Ok(osds) => {
                let rows: Vec<serde_json::Value> = osds
                    .iter()
                    .map(|o| serde_json::json!({"data": &*o.data, "db": o.db.as_deref(), "wal": o.wal.as_deref(), "osd_id": o.osd_id}))
                    .collect();
                m.serialize_entry("planned_osds", &rows)?;
            }
            Err(e) => m.serialize_entry("planned_osds", &serde_json::json!({ "error": e }))?,
        }
        m.serialize_entry("skipped", &SkippedList { spec, devices: &host.devices, skipped: &sel.skipped })?;
        m.serialize_entry("warnings", &sel.warnings)?;
        if let Some(age) = (self.report.inventory_age)(&host.name) {
            m.serialize_entry("inventory_age_s", &age)?;
        }
        m.end()
    }
}

struct SkippedList<'a> {
    spec: &'a DriveSpec,
    devices: &'a [crate::domain::inventory::Device],
    skipped: &'a [Skipped],
}

impl Serialize for SkippedList<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.skipped.len()))?;
        for sk in self.skipped {
            seq.serialize_element(&SkippedOne { spec: self.spec, device: &self.devices[sk.device], skipped: sk })?;
        }
        seq.end()
    }
}

struct SkippedOne<'a> {
    spec: &'a DriveSpec,
    device: &'a crate::domain::inventory::Device,
    skipped: &'a Skipped,
}

impl Serialize for SkippedOne<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(2))?;
        m.serialize_entry("path", &*self.device.path)?;
        let reasons = self.skipped.passes.iter().map(|(role, pass)| describe(self.spec, *role, self.device, *pass));
        m.serialize_entry("reasons", &strings(reasons))?;
        m.end()
    }
}

/// Writes the report as JSON. Rows are independent, so large reports are
/// serialized on a few threads, a batch at a time (memory stays bounded),
/// and written in order; the bytes are those of `serde_json::to_writer`.
pub fn write_json<W: std::io::Write>(report: &PreviewReport<'_>, out: &mut W, threads: usize) -> std::io::Result<()> {
    const BATCH: usize = 256;
    let rows = &report.preview.rows;
    let threads = threads.min(rows.len() / BATCH).max(1);
    if threads == 1 {
        return serde_json::to_writer(out, report).map_err(std::io::Error::from);
    }
    let errors: Vec<ErrorJson<'_>> = report.preview.errors.iter().map(ErrorJson::from).collect();
    let notes: Vec<serde_json::Value> = report
        .notes()
        .map(|(d, s, n)| serde_json::json!({"doc": d.doc, "service_id": s.service_id, "note": n}))
        .collect();
    out.write_all(b"{\"errors\":")?;
    serde_json::to_writer(&mut *out, &errors)?;
    out.write_all(b",\"preview\":[")?;
    let mut buffers: Vec<Vec<u8>> = vec![Vec::new(); threads];
    for (round, rows) in rows.chunks(BATCH * threads).enumerate() {
        std::thread::scope(|scope| -> std::io::Result<()> {
            let handles: Vec<_> = rows
                .chunks(BATCH)
                .zip(buffers.iter_mut())
                .map(|(part, buf)| {
                    scope.spawn(move || -> Result<(), serde_json::Error> {
                        buf.clear();
                        for row in part {
                            buf.push(b',');
                            serde_json::to_writer(&mut *buf, &RowView { report, row })?;
                        }
                        Ok(())
                    })
                })
                .collect();
            for h in handles {
                h.join().expect("serializer thread")?;
            }
            Ok(())
        })?;
        for (i, buf) in buffers.iter().enumerate().take(rows.len().div_ceil(BATCH)) {
            // Every row was written with a leading comma; drop the very first.
            let skip = usize::from(round == 0 && i == 0);
            out.write_all(&buf[skip..])?;
        }
    }
    out.write_all(b"],\"notes\":")?;
    serde_json::to_writer(&mut *out, &notes)?;
    out.write_all(b"}")
}

/// The human-readable dry-run, from the JSON form (the CLI renders the
/// daemon's answer with it too, so both print the same).
pub fn preview_table(p: &serde_json::Value) -> String {
    use serde_json::Value;
    let empty = Vec::new();
    let list = |v: &Value, k: &str| -> Vec<Value> { v.get(k).and_then(Value::as_array).unwrap_or(&empty).clone() };
    let text = |v: &Value, k: &str| -> String { v.get(k).and_then(Value::as_str).unwrap_or_default().to_string() };
    let rows = list(p, "preview");
    let mut out = String::new();
    out.push_str("################\nOSDSPEC PREVIEWS\n################\n");
    let mut t = Table::new(["SERVICE", "NAME", "HOST", "DATA", "DB", "WAL"]);
    for row in &rows {
        let name = text(row, "service_id");
        let host = text(row, "host");
        match row.get("planned_osds") {
            Some(Value::Array(osds)) => {
                for o in osds {
                    let dash = |k: &str| o.get(k).and_then(Value::as_str).unwrap_or("-").to_string();
                    t.row(["osd".to_string(), name.clone(), host.clone(), dash("data"), dash("db"), dash("wal")]);
                }
            }
            Some(other) => t.row([
                "osd".to_string(),
                name.clone(),
                host.clone(),
                format!("({})", text(other, "error")),
                "-".into(),
                "-".into(),
            ]),
            None => {}
        }
    }
    if t.is_empty() {
        out.push_str("No OSDs would be created.\n");
    } else {
        out.push_str(&t.boxed());
    }
    let mut not_chosen = String::new();
    let mut warnings = String::new();
    let mut cmds = String::new();
    for row in &rows {
        let name = row.get("service_id").and_then(Value::as_str).unwrap_or("<unnamed>");
        let host = text(row, "host");
        let age = row
            .get("inventory_age_s")
            .and_then(Value::as_f64)
            .map(|a| format!(" (inventory {})", crate::clock::format_age((a * 1000.0) as i64)))
            .unwrap_or_default();
        let skipped = list(row, "skipped");
        if !skipped.is_empty() {
            let _ = writeln!(not_chosen, "  {name} on {host}{age}:");
            let w = skipped.iter().map(|s| text(s, "path").len()).max().unwrap_or(0);
            for sk in &skipped {
                let reasons: Vec<String> =
                    list(sk, "reasons").iter().filter_map(|r| r.as_str().map(str::to_string)).collect();
                let why = if reasons.is_empty() { "not looked at".to_string() } else { reasons.join("; ") };
                let _ = writeln!(not_chosen, "    {:w$}  {why}", text(sk, "path"));
            }
        }
        for w in list(row, "warnings") {
            let _ = writeln!(warnings, "  {name} on {host}: {}", w.as_str().unwrap_or_default());
        }
        for c in list(row, "commands") {
            let _ = writeln!(cmds, "  {host}: ceph-volume {}", c.as_str().unwrap_or_default());
        }
    }
    for n in list(p, "notes") {
        let _ = writeln!(
            warnings,
            "  {}: {}",
            n.get("service_id").and_then(Value::as_str).unwrap_or("<unnamed>"),
            text(&n, "note")
        );
    }
    for sections in [("Not chosen", &not_chosen), ("Warnings", &warnings), ("Commands", &cmds)] {
        if !sections.1.is_empty() {
            let _ = write!(out, "\n{}:\n{}", sections.0, sections.1);
        }
    }
    let errors = list(p, "errors");
    if !errors.is_empty() {
        out.push_str("\nInvalid documents:\n");
        for e in &errors {
            let _ = writeln!(out, "  {}", text(e, "error"));
        }
    }
    out
}
