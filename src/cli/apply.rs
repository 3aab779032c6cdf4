//! `osdkeeper apply -i FILE [--dry-run] [--refresh] [--allow-empty-placement] [--no-check]`: the
//! daemon's dry-run of a spec file, or its apply (its host specs too).

use std::process::ExitCode;

use super::remote::Remote;
use super::{exit, out, Format};
use crate::client::ClientError;
use crate::domain::spec::decode_spec;
use crate::render::preview::preview_table;
use crate::wire::api::specs::{ApplyQuery, HostSpecAction};

#[derive(clap::Args, Debug)]
pub struct ApplyArgs {
    /// `osd`, as in cephadm's `apply osd -i FILE` (OSD specs; host specs,
    /// `service_type: host`, are taken beside them as by `apply -i`).
    #[arg(value_parser = ["osd"])]
    pub service_type: Option<String>,
    /// The spec file (cephadm's YAML, one or more documents).
    #[arg(short = 'i', long = "in-file")]
    pub file: std::path::PathBuf,
    /// Show what would happen; store nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Ask the matching hosts' agents for fresh inventories first.
    #[arg(long)]
    pub refresh: bool,
    /// Store a spec whose label or host_pattern matches no host yet.
    #[arg(long)]
    pub allow_empty_placement: bool,
    /// Add the file's hosts (`service_type: host`) without asking their agents first.
    #[arg(long)]
    pub no_check: bool,
}

pub async fn run(r: &Remote, args: ApplyArgs) -> Result<ExitCode, ClientError> {
    let bytes = match std::fs::read(&args.file) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("osdkeeper: cannot read {}: {e}", args.file.display());
            return Ok(ExitCode::from(exit::UNREADABLE));
        }
    };
    // Said here with the byte offset, before anything is sent.
    let text = match decode_spec(&bytes) {
        Ok(t) => t.to_string(),
        Err(e) => {
            eprintln!("osdkeeper: {}: {e}", args.file.display());
            return Ok(ExitCode::from(exit::UNREADABLE));
        }
    };
    let q = ApplyQuery {
        dry_run: args.dry_run,
        refresh: args.refresh,
        allow_empty_placement: args.allow_empty_placement,
        no_check: args.no_check,
    };
    let answer = match r.client()?.apply(&q, text).await {
        Ok(a) => a,
        Err(ClientError::Api { status: 422, body }) if r.format != Format::Plain => {
            out::structured(r.format, &body);
            eprintln!("osdkeeper: {}", body.error);
            return Ok(ExitCode::from(exit::INVALID));
        }
        Err(e) => return Err(e),
    };
    if out::structured(r.format, &answer) {
        return Ok(ExitCode::SUCCESS);
    }
    if args.dry_run {
        out::line("Dry run: nothing was changed. Inventories as of the REFRESHED age shown below.");
    }
    for h in &answer.host_specs {
        let verb = match (h.action, args.dry_run) {
            (HostSpecAction::Add, true) => "would add",
            (HostSpecAction::Add, false) => "Added",
            (HostSpecAction::Relabel, true) => "would relabel",
            (HostSpecAction::Relabel, false) => "Relabelled",
            (HostSpecAction::Unchanged, _) => "unchanged:",
        };
        out::line(format!("{verb} host {} (agent {}, labels [{}])", h.name, h.addr, h.labels.join(", ")));
    }
    if !answer.preview.preview.is_empty() || answer.host_specs.is_empty() {
        out::print(&preview_table(&answer.preview));
    }
    for h in &answer.hosts_without_inventory {
        out::line(format!("note: {h} has no inventory yet and was not planned"));
    }
    for f in &answer.refresh_failures {
        out::line(format!("note: could not refresh {}: {}", f.host, f.error));
    }
    for p in &answer.swap_proposals {
        out::line(format!("swap instead: {}", p.text));
    }
    for st in answer.stored.iter().flatten() {
        out::line(format!("Scheduled {} update... (version {})", st.service_name, st.version));
    }
    Ok(ExitCode::SUCCESS)
}
