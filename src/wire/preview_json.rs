//! A plan as the dry-run's JSON document (`wire::api::preview`), built for
//! the daemon's answer and written straight out by `preview --format json`;
//! a plan over thousands of hosts has a reason for every disk, so large
//! documents are written a batch of rows at a time, on a few threads.

use std::cell::RefCell;
use std::fmt::Display;
use std::rc::Rc;

use serde::ser::{Serialize, SerializeStruct, Serializer};

use crate::domain::command::{shown, CommandLine};
use crate::domain::inventory::ClusterView;
use crate::domain::osd_layout::{display_size, PlannedOsd};
use crate::domain::plan::{PlanRow, Preview, PREVIEW_SUFFIX};
use crate::domain::selection::describe;
use crate::domain::spec::{DriveSpec, SpecDocument};
use crate::wire::api::preview::{
    DiskProbeNote, PlannedOsdRow, PlannedOsds, PreviewDoc, PreviewRow, SkippedDevice, SpecErrorJson, SpecNote,
};

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

impl PreviewReport<'_> {
    /// The report as the API's typed document.
    pub fn doc(&self) -> PreviewDoc {
        PreviewDoc {
            errors: self.preview.errors.iter().map(SpecErrorJson::from).collect(),
            preview: self.preview.rows.iter().map(|r| self.row(r)).collect(),
            notes: self.note_list(),
        }
    }

    fn note_list(&self) -> Vec<SpecNote> {
        self.notes()
            .map(|(d, s, n)| SpecNote { doc: d.doc, service_id: s.service_id.clone(), note: n.clone() })
            .collect()
    }

    fn row(&self, row: &PlanRow) -> PreviewRow {
        let spec = self.spec(row);
        let host = &self.view.hosts[row.host];
        let sel = &row.selection;
        let paths = |list: &[std::sync::Arc<str>]| list.iter().map(|p| p.to_string()).collect::<Vec<_>>();
        PreviewRow {
            service_id: spec.service_id.clone(),
            service_name: spec.service_name(),
            host: host.name.clone(),
            data: paths(&sel.data),
            db: paths(&sel.db),
            wal: paths(&sel.wal),
            journal: paths(&sel.journal),
            commands: row.commands.iter().map(|c| shown(c)).collect(),
            preview_commands: row.commands.iter().map(|c| ForPreview(c).to_string()).collect(),
            planned_osds: match &row.layout {
                Ok(layout) => PlannedOsds::Osds(layout.osds.iter().map(planned_row).collect()),
                Err(refusal) => PlannedOsds::Refused { error: refusal.to_string() },
            },
            report_notes: report_notes(spec, &host.name, row),
            skipped: sel
                .skipped
                .iter()
                .map(|sk| {
                    let device = &host.devices[sk.device];
                    SkippedDevice {
                        path: device.path.to_string(),
                        reasons: sk
                            .passes
                            .iter()
                            .map(|(role, pass)| describe(spec, *role, device, *pass).to_string())
                            .collect(),
                    }
                })
                .collect(),
            unused: unused_devices(row),
            warnings: sel.warnings.iter().chain(row.layout.iter().flat_map(|l| &l.warnings)).cloned().collect(),
            probes: probe_notes(host, row),
            inventory_age_s: (self.inventory_age)(&host.name),
        }
    }
}

/// The finished probes of the disks a row takes, then of those it passed
/// over for their probe, by path.
fn probe_notes(host: &crate::domain::inventory::HostInventory, row: &PlanRow) -> Vec<DiskProbeNote> {
    use crate::domain::selection::Pass;
    if host.devices.iter().all(|d| d.probe.is_none()) {
        return Vec::new();
    }
    let sel = &row.selection;
    let taken = sel.data.iter().chain(&sel.db).chain(&sel.wal).chain(&sel.journal);
    let taken = taken.filter_map(|p| host.devices.iter().find(|d| d.path == *p));
    let gated = sel
        .skipped
        .iter()
        .filter(|s| s.passes.iter().any(|(_, p)| matches!(p, Pass::Probe(_) | Pass::ProbeShared)))
        .map(|s| &host.devices[s.device]);
    let mut out: Vec<DiskProbeNote> = Vec::new();
    for d in taken.chain(gated) {
        let Some(done) = d.probe.as_ref().and_then(|p| p.done.as_ref()) else { continue };
        if out.iter().any(|n| *n.path == *d.path) {
            continue;
        }
        out.push(DiskProbeNote {
            path: d.path.to_string(),
            probe_id: done.probe_id,
            mode: done.mode,
            figures: done.figures.into(),
            outlier: done.outlier.clone(),
        });
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out
}

fn planned_row(o: &PlannedOsd) -> PlannedOsdRow {
    let size = |b: Option<f64>| b.map(|b| size_text(b).to_string());
    PlannedOsdRow {
        data: o.data.to_string(),
        db: o.db.as_deref().map(str::to_string),
        wal: o.wal.as_deref().map(str::to_string),
        osd_id: o.osd_id.clone(),
        data_size: size(o.data_size),
        db_size: size(o.db_size),
        wal_size: size(o.wal_size),
        encrypted: o.encrypted,
    }
}

thread_local! {
    /// Volume sizes shown last, with their text, most recent first.
    static SIZES: RefCell<Vec<(u64, Rc<str>)>> = const { RefCell::new(Vec::new()) };
}

/// `display_size(bytes)`, remembered: a plan repeats a few volume sizes
/// thousands of times, and printing a float with two decimals costs more
/// than the rest of its row.
fn size_text(bytes: f64) -> Rc<str> {
    SIZES.with(|recent| {
        let mut recent = recent.borrow_mut();
        if let Some((_, text)) = recent.iter().find(|(b, _)| *b == bytes.to_bits()) {
            return text.clone();
        }
        let text: Rc<str> = display_size(bytes).into();
        recent.truncate(15);
        recent.insert(0, (bytes.to_bits(), text.clone()));
        text
    })
}

/// One entry per device, its roles' reasons together (a path may be passed twice).
fn unused_devices(row: &PlanRow) -> Vec<SkippedDevice> {
    let mut out: Vec<SkippedDevice> = Vec::new();
    for u in row.layout.iter().flat_map(|l| &l.unused) {
        let reason = format!("{}: chosen, but {}", u.role.short(), u.why);
        match out.iter_mut().find(|s| *s.path == *u.path) {
            Some(s) if !s.reasons.contains(&reason) => s.reasons.push(reason),
            Some(_) => {}
            None => out.push(SkippedDevice { path: u.path.to_string(), reasons: vec![reason] }),
        }
    }
    out
}

/// cephadm's note when the report lists fewer OSDs than the data `limit`
/// (`OSDService.generate_previews`, in its words). A failed report has no
/// entries for cephadm to count, and no note; nor has raw mode, whose
/// `raw prepare` does not take cephadm's `--report`.
fn report_notes(spec: &DriveSpec, host: &str, row: &PlanRow) -> Vec<String> {
    let (Some(limit), Ok(layout)) = (spec.data.limit.filter(|l| *l > 0), &row.layout) else { return Vec::new() };
    let found = layout.osds.len() as u64;
    if !matches!(row.commands.as_slice(), [c] if c.len() >= 2 && c[0] == "lvm" && c[1] == "batch") || found >= limit {
        return Vec::new();
    }
    vec![format!(
        "NOTE: Did not find enough disks matching filter on host {host} to reach data device limit (Found: {found} | Limit: {limit})"
    )]
}

/// Writes the report as JSON. Rows are independent, so large reports are
/// serialized on a few threads, a batch at a time (memory stays bounded),
/// and written in order; the bytes are those of `serde_json::to_writer` of
/// `report.doc()`, but the rows are written from the plan itself (`RowOut`)
/// instead of being copied into a `PreviewRow` first.
pub fn write_json<W: std::io::Write>(report: &PreviewReport<'_>, out: &mut W, threads: usize) -> std::io::Result<()> {
    const BATCH: usize = 256;
    let rows = &report.preview.rows;
    let threads = threads.min(rows.len() / BATCH).max(1);
    let errors: Vec<SpecErrorJson> = report.preview.errors.iter().map(SpecErrorJson::from).collect();
    let notes = report.note_list();
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
                            serde_json::to_writer(&mut *buf, &RowOut { report, row })?;
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

/// One row serialized as its `PreviewRow` would be, field by field, from the
/// plan: the paths, commands and reasons of a big plan are written where
/// they are, not copied into strings first (a test holds the bytes equal).
struct RowOut<'a> {
    report: &'a PreviewReport<'a>,
    row: &'a PlanRow,
}

impl Serialize for RowOut<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let (report, row) = (self.report, self.row);
        let spec = report.spec(row);
        let host = &report.view.hosts[row.host];
        let sel = &row.selection;
        let mut m = s.serialize_struct("PreviewRow", 17)?;
        m.serialize_field("service_id", &spec.service_id)?;
        m.serialize_field("service_name", &spec.service_name())?;
        m.serialize_field("host", &host.name)?;
        m.serialize_field("data", &sel.data)?;
        m.serialize_field("db", &sel.db)?;
        m.serialize_field("wal", &sel.wal)?;
        m.serialize_field("journal", &sel.journal)?;
        m.serialize_field("commands", &SeqOf(|| row.commands.iter().map(|c| Shown(CommandLine(c)))))?;
        m.serialize_field("preview_commands", &SeqOf(|| row.commands.iter().map(|c| Shown(ForPreview(c)))))?;
        match &row.layout {
            Ok(layout) => m.serialize_field("planned_osds", &SeqOf(|| layout.osds.iter().map(PlannedOut)))?,
            Err(refusal) => m.serialize_field("planned_osds", &RefusedOut(refusal))?,
        }
        let notes = report_notes(spec, &host.name, row);
        if notes.is_empty() {
            m.skip_field("report_notes")?;
        } else {
            m.serialize_field("report_notes", &notes)?;
        }
        let skipped = SeqOf(|| {
            sel.skipped.iter().map(|sk| {
                let device = &host.devices[sk.device];
                let reasons = SeqOf(move || {
                    sk.passes.iter().map(move |(role, pass)| Shown(describe(spec, *role, device, *pass)))
                });
                SkippedOut { path: &device.path, reasons }
            })
        });
        m.serialize_field("skipped", &skipped)?;
        m.serialize_field("unused", &unused_devices(row))?;
        let warnings = SeqOf(|| sel.warnings.iter().chain(row.layout.iter().flat_map(|l| &l.warnings)));
        m.serialize_field("warnings", &warnings)?;
        let probes = probe_notes(host, row);
        if probes.is_empty() {
            m.skip_field("probes")?;
        } else {
            m.serialize_field("probes", &probes)?;
        }
        match (report.inventory_age)(&host.name) {
            Some(age) => m.serialize_field("inventory_age_s", &age)?,
            None => m.skip_field("inventory_age_s")?,
        }
        m.end()
    }
}

/// A sequence made on demand from a closure (serializing takes `&self`).
struct SeqOf<F>(F);

impl<F, I> Serialize for SeqOf<F>
where
    F: Fn() -> I,
    I: IntoIterator,
    I::Item: Serialize,
{
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq((self.0)())
    }
}

/// A JSON string written straight from its `Display`.
struct Shown<T>(T);

impl<T: Display> Serialize for Shown<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&self.0)
    }
}

/// `SkippedDevice`, borrowed.
struct SkippedOut<'a, R> {
    path: &'a str,
    reasons: R,
}

impl<R: Serialize> Serialize for SkippedOut<'_, R> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_struct("SkippedDevice", 2)?;
        m.serialize_field("path", self.path)?;
        m.serialize_field("reasons", &self.reasons)?;
        m.end()
    }
}

/// `PlannedOsdRow`, borrowed.
struct PlannedOut<'a>(&'a PlannedOsd);

impl Serialize for PlannedOut<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let o = self.0;
        let mut m = s.serialize_struct("PlannedOsdRow", 8)?;
        m.serialize_field("data", &*o.data)?;
        m.serialize_field("db", &o.db.as_deref())?;
        m.serialize_field("wal", &o.wal.as_deref())?;
        m.serialize_field("osd_id", &o.osd_id)?;
        for (key, size) in [("data_size", o.data_size), ("db_size", o.db_size), ("wal_size", o.wal_size)] {
            match size {
                Some(b) => m.serialize_field(key, &*size_text(b))?,
                None => m.skip_field(key)?,
            }
        }
        m.serialize_field("encrypted", &o.encrypted)?;
        m.end()
    }
}

/// `PlannedOsds::Refused`, borrowed.
struct RefusedOut<'a>(&'a crate::domain::osd_layout::Refusal);

impl Serialize for RefusedOut<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_struct("Refused", 1)?;
        m.serialize_field("error", &Shown(self.0))?;
        m.end()
    }
}

/// A command with cephadm's preview suffix.
struct ForPreview<'a>(&'a [String]);

impl Display for ForPreview<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        CommandLine(self.0).fmt(f)?;
        f.write_str(PREVIEW_SUFFIX)
    }
}
