//! `osdkeeper osd replace ID... --with HOST:DEV[,DEV...] [--in-place]
//! [--accept-single-copy] [--accept-inactive] [--method raw|lvm] [--encrypted]
//! [--dry-run]`, `host swap HOST --spec FILE --osds ID,... [--dry-run]`
//! (the same swap, its new disks and how they are made read from the spec's
//! dry-run on HOST), and `swap ls`,
//! `swap status N`, `swap stop N` (docs/cli.md, docs/design/swap.md).

use std::process::ExitCode;

use super::out;
use super::remote::{parse_ids, Remote};
use crate::client::ClientError;
use crate::domain::spec::{decode_spec, parse_spec_file, Method, SpecDocument};
use crate::domain::swap::Way;
use crate::render::swaps::{preview_text, swap_table};
use crate::wire::api::preview::PreviewDoc;
use crate::wire::api::specs::ApplyQuery;
use crate::wire::api::swaps::{SwapBody, SwapQuery};

/// `osd replace`'s arguments.
#[derive(clap::Args, Debug)]
pub struct ReplaceArgs {
    /// The OSDs to take out (N or osd.N), all on one host.
    #[arg(required = true, num_args = 1..)]
    pub ids: Vec<String>,
    /// The new disks, on the OSDs' host: HOST:DEV[,DEV...]. With --in-place, the slot the new
    /// disk goes in (the old disk's when not given).
    #[arg(long = "with", value_name = "HOST:DEV[,DEV...]")]
    pub with: Option<String>,
    /// No free bay: stop the OSD under noout, destroy it keeping its id, and rebuild its data
    /// on the new disk from the other copies (PGs run a copy short meanwhile).
    #[arg(long)]
    pub in_place: bool,
    /// In place: accept PGs left with one copy while the new disk backfills.
    #[arg(long)]
    pub accept_single_copy: bool,
    /// In place: accept PGs below their pool's min_size (client I/O to them stops) meanwhile.
    #[arg(long)]
    pub accept_inactive: bool,
    /// How the new OSDs are made, `raw` or `lvm`: as the old OSDs were when not given.
    #[arg(long, value_name = "raw|lvm")]
    pub method: Option<String>,
    /// Encrypt the new OSDs (dm-crypt), as a spec's `encrypted: true`.
    #[arg(long)]
    pub encrypted: bool,
    /// Show what each way costs (bytes, receivers, time, degraded PGs) and change nothing.
    #[arg(long)]
    pub dry_run: bool,
}

/// `host swap`'s arguments.
#[derive(clap::Args, Debug)]
pub struct HostSwapArgs {
    /// The host whose OSDs are swapped.
    pub host: String,
    /// The spec file whose dry-run on HOST names the new disks (cephadm's YAML); its
    /// `method` and `encrypted` say how the new OSDs are made. It is not stored.
    #[arg(long, value_name = "FILE")]
    pub spec: std::path::PathBuf,
    /// The OSDs on HOST to take out (N or osd.N, comma-separated).
    #[arg(long, value_delimiter = ',', required = true)]
    pub osds: Vec<String>,
    /// Show what each way costs and change nothing.
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(clap::Subcommand, Debug)]
pub enum SwapCmd {
    /// The swaps running, and the latest finished ones.
    Ls {
        /// How many finished swaps to show.
        #[arg(long, default_value_t = 20)]
        history: i64,
    },
    /// One swap with the actions it logged, each with its outcome.
    Status { swap_id: i64 },
    /// Stop a swap: what was handed over stays where it is, what was set is put back.
    Stop { swap_id: i64 },
}

/// `HOST:DEV[,DEV...]`.
fn parse_with(with: &str) -> Result<(String, Vec<String>), ClientError> {
    let usage = || ClientError::Usage(format!("--with {with}: give HOST:DEV[,DEV...], e.g. f5-422-03:/dev/sdg"));
    let (host, devs) = with.split_once(':').ok_or_else(usage)?;
    let devs: Vec<String> = devs.split(',').filter(|d| !d.is_empty()).map(str::to_string).collect();
    if host.is_empty() || devs.is_empty() {
        return Err(usage());
    }
    Ok((host.to_string(), devs))
}

pub async fn replace(r: &Remote, a: ReplaceArgs) -> Result<ExitCode, ClientError> {
    let (host, devices) = match &a.with {
        Some(w) => {
            let (h, d) = parse_with(w)?;
            (Some(h), d)
        }
        None if a.in_place => (None, Vec::new()),
        None => return Err(ClientError::Usage("osd replace needs --with HOST:DEV (or --in-place)".into())),
    };
    let method = match a.method.as_deref() {
        None => None,
        Some(m) => Some(Method::parse(m).ok_or_else(|| ClientError::Usage(format!("--method {m}: give raw or lvm")))?),
    };
    let body = SwapBody {
        osds: parse_ids(&a.ids)?,
        host,
        devices,
        way: if a.in_place { Way::InPlace } else { Way::FreeBay },
        accept_single_copy: a.accept_single_copy,
        accept_inactive: a.accept_inactive,
        method,
        encrypted: a.encrypted,
    };
    preview_or_schedule(r, &body, a.dry_run).await
}

/// `host swap`: the spec's dry-run (nothing stored) names the disks it
/// would take on the host; the swap is then `osd replace` of the OSDs with
/// those disks, made as the spec says.
pub async fn host_swap(r: &Remote, a: HostSwapArgs) -> Result<ExitCode, ClientError> {
    let unreadable = |e: String| ClientError::Usage(format!("--spec {}: {e}", a.spec.display()));
    let bytes = std::fs::read(&a.spec).map_err(|e| unreadable(e.to_string()))?;
    let text = decode_spec(&bytes).map_err(|e| unreadable(e.to_string()))?.to_string();
    let docs = parse_spec_file(&text).map_err(|e| unreadable(e.to_string()))?;
    let q = ApplyQuery { dry_run: true, allow_empty_placement: true, ..ApplyQuery::default() };
    let dry = r.client()?.apply(&q, text).await?;
    let body = host_swap_body(&a.host, parse_ids(&a.osds)?, &dry.preview, &docs).map_err(unreadable)?;
    preview_or_schedule(r, &body, a.dry_run).await
}

/// The swap a spec's dry-run asks for on `host`: its data disks there, made
/// with the spec's method and encryption. Refused where the spec makes no
/// OSD on the host, puts DBs or WALs on other disks (a swap's new OSDs have
/// none), or where two of its documents there disagree on how.
pub fn host_swap_body(host: &str, osds: Vec<u32>, dry: &PreviewDoc, docs: &[SpecDocument]) -> Result<SwapBody, String> {
    if let Some(e) = dry.errors.first() {
        return Err(format!("document {} (line {}): {}: {}", e.doc, e.line, e.field, e.error));
    }
    let rows: Vec<_> = dry.preview.iter().filter(|row| row.host == host && !row.data.is_empty()).collect();
    if rows.is_empty() {
        return Err(format!("makes no OSD on {host} now (see `apply -i FILE --dry-run`): no new disk to swap to"));
    }
    let mut how: Option<(Option<Method>, bool)> = None;
    let mut devices = Vec::new();
    for row in &rows {
        let shared: Vec<&String> = row.db.iter().chain(&row.wal).chain(&row.journal).collect();
        if !shared.is_empty() {
            return Err(format!(
                "{} puts DB/WAL on {} on {host}; a swap makes its new OSDs without one: \
                 remove the OSDs (`osd rm ... --zap`) and apply the spec instead",
                row.service_name,
                shared.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
            ));
        }
        let spec = docs
            .iter()
            .filter_map(|d| d.spec.as_ref().ok())
            .find(|s| s.service_name() == row.service_name)
            .ok_or_else(|| format!("the dry-run names {}, which the file does not hold", row.service_name))?;
        let this = (spec.method, spec.encrypted);
        match how {
            Some(before) if before != this => {
                return Err(format!(
                    "two of its services make OSDs on {host} differently ({} among them): give one",
                    row.service_name
                ))
            }
            _ => how = Some(this),
        }
        devices.extend(row.data.iter().cloned());
    }
    let (method, encrypted) = how.expect("one row at least");
    Ok(SwapBody {
        osds,
        host: Some(host.to_string()),
        devices,
        way: Way::FreeBay,
        accept_single_copy: false,
        accept_inactive: false,
        method,
        encrypted,
    })
}

async fn preview_or_schedule(r: &Remote, body: &SwapBody, dry_run: bool) -> Result<ExitCode, ClientError> {
    let c = r.client()?;
    if dry_run {
        out::answer(r.format, &c.preview_swap(body).await?, preview_text);
        return Ok(ExitCode::SUCCESS);
    }
    let status = c.schedule_swap(body).await?;
    if !out::structured(r.format, &status) {
        out::line(format!("Scheduled swap {}; follow with `osdkeeper swap status {}`", status.swap_id, status.swap_id));
    }
    Ok(ExitCode::SUCCESS)
}

pub async fn run(r: &Remote, cmd: SwapCmd) -> Result<ExitCode, ClientError> {
    let c = r.client()?;
    match cmd {
        SwapCmd::Ls { history } => {
            let rows = c.swaps(&SwapQuery { history: Some(history) }).await?;
            out::answer(r.format, &rows, |rows| swap_table(rows));
        }
        SwapCmd::Status { swap_id } => {
            let detail = c.swap(swap_id).await?;
            out::answer(r.format, &detail, |d| {
                let mut text = swap_table(std::slice::from_ref(&d.status));
                if let Some(w) = &d.degraded_window {
                    let risk = d.status.risk.as_ref();
                    let estimate = match (risk.and_then(|r| r.making_s), risk.and_then(|r| r.window_s)) {
                        (Some(m), Some(b)) => format!(
                            "; the preview estimated {:.0} s: {m:.0} s to make the new OSD, {b:.0} s of backfill, \
                             the slot's empty time not counted",
                            m + b
                        ),
                        (None, Some(b)) => format!("; the preview estimated {b:.0} s of backfill"),
                        (Some(m), None) => format!("; the preview estimated {m:.0} s to make the new OSD"),
                        (None, None) => String::new(),
                    };
                    text.push_str(&match w.seconds {
                        Some(s) => format!("Degraded window: {s:.0} s, from the stop to the last PG back{estimate}\n"),
                        None => format!("Degraded window: open since the stop{estimate}\n"),
                    });
                }
                for a in &d.actions {
                    text.push_str(&format!(
                        "  {}: {} ({})\n",
                        a.effect,
                        a.detail,
                        a.outcome.as_deref().unwrap_or("under way")
                    ));
                }
                text
            });
        }
        SwapCmd::Stop { swap_id } => {
            let status = c.stop_swap(swap_id).await?;
            if !out::structured(r.format, &status) {
                out::line(format!("Stopping swap {swap_id}: what was handed over stays, what was set is put back"));
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use crate::domain::spec::parse_spec_file;
    use crate::domain::swap::Way;
    use crate::wire::api::preview::{PlannedOsds, PreviewDoc, PreviewRow};

    fn row(service: &str, host: &str, data: &[&str], db: &[&str]) -> PreviewRow {
        let strings = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        PreviewRow {
            service_id: service.strip_prefix("osd.").map(String::from),
            service_name: service.into(),
            host: host.into(),
            data: strings(data),
            db: strings(db),
            wal: Vec::new(),
            journal: Vec::new(),
            commands: Vec::new(),
            preview_commands: Vec::new(),
            planned_osds: PlannedOsds::Osds(Vec::new()),
            report_notes: Vec::new(),
            skipped: Vec::new(),
            unused: Vec::new(),
            warnings: Vec::new(),
            probes: Vec::new(),
            inventory_age_s: None,
        }
    }

    const SPECS: &str = "service_type: osd\nservice_id: ssds\nplacement:\n  host_pattern: '*'\nencrypted: true\n\
                         spec:\n  data_devices:\n    rotational: 0\n---\nservice_type: osd\nservice_id: hdds\n\
                         placement:\n  host_pattern: '*'\nspec:\n  data_devices:\n    rotational: 1\n  db_devices:\n    rotational: 0\n";

    #[test]
    fn a_host_swap_takes_the_specs_disks_on_the_host_and_its_way_of_making_them() {
        let docs = parse_spec_file(SPECS).unwrap();
        let dry = PreviewDoc {
            errors: Vec::new(),
            preview: vec![
                row("osd.ssds", "f5-422-01", &["/dev/sdd"], &[]),
                row("osd.ssds", "f5-422-03", &["/dev/sdg", "/dev/sdh"], &[]),
            ],
            notes: Vec::new(),
        };
        let body = super::host_swap_body("f5-422-03", vec![8, 15], &dry, &docs).unwrap();
        assert_eq!(body.host.as_deref(), Some("f5-422-03"));
        assert_eq!(body.devices, ["/dev/sdg", "/dev/sdh"]);
        assert_eq!(body.osds, [8, 15]);
        assert!(body.encrypted, "the spec says encrypted: true");
        assert_eq!(body.way, Way::FreeBay);
        let e = super::host_swap_body("f5-422-02", vec![8], &dry, &docs).unwrap_err();
        assert!(e.contains("makes no OSD on f5-422-02"), "{e}");
    }

    #[test]
    fn a_host_swap_refuses_a_spec_that_puts_dbs_on_another_disk() {
        let docs = parse_spec_file(SPECS).unwrap();
        let dry = PreviewDoc {
            errors: Vec::new(),
            preview: vec![row("osd.hdds", "f5-422-03", &["/dev/sdb"], &["/dev/sdc"])],
            notes: Vec::new(),
        };
        let e = super::host_swap_body("f5-422-03", vec![8], &dry, &docs).unwrap_err();
        assert_eq!(
            e,
            "osd.hdds puts DB/WAL on /dev/sdc on f5-422-03; a swap makes its new OSDs without one: remove the OSDs \
             (`osd rm ... --zap`) and apply the spec instead"
        );
    }

    #[test]
    fn with_names_a_host_and_its_disks() {
        assert_eq!(
            super::parse_with("f5-422-03:/dev/sdg,/dev/sdh").unwrap(),
            ("f5-422-03".into(), vec!["/dev/sdg".into(), "/dev/sdh".into()])
        );
        assert!(super::parse_with("/dev/sdg").is_err());
        assert!(super::parse_with("f5-422-03:").is_err());
    }
}
