//! `osdkeeper preview --spec SPEC.yaml --inventory INV.json [--ceph-release
//! 20.2]`: the dry-run, offline, as the cephadm of that release (16.2 by
//! default: an offline inventory does not say which release wrote it).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use super::{exit, Format};
use crate::domain::ceph_release::Release;
use crate::domain::plan::preview;
use crate::domain::spec::parse_spec_bytes_as;
use crate::render::preview::preview_table;
use crate::wire::inventory_file::read_inventory;
use crate::wire::preview_json::{write_json, PreviewReport};

#[derive(clap::Args, Debug)]
pub struct PreviewArgs {
    /// OSD spec file (one or more YAML documents, as for `ceph orch apply -i`).
    #[arg(long)]
    spec: PathBuf,
    /// Inventory: {"hosts": {host: [ceph-volume inventory devices]}, "labels": ..., ...}.
    #[arg(long)]
    inventory: PathBuf,
    /// Plan as the cephadm of this Ceph release does (16.2 pacific to 20.2
    /// tentacle: a name, `20`, `20.2` or a full version); 16.2 when not given.
    #[arg(long, value_name = "RELEASE", value_parser = release_arg)]
    ceph_release: Option<Release>,
}

fn release_arg(text: &str) -> Result<Release, String> {
    Release::named(text).map_err(|e| e.to_string())
}

pub fn run(args: PreviewArgs, format: Format) -> ExitCode {
    // OSDKEEPER_TIMINGS=1 prints how long each phase took, for BENCHMARKS.md.
    let timings = std::env::var_os("OSDKEEPER_TIMINGS").is_some();
    let t0 = std::time::Instant::now();
    let lap = |what: &str| {
        if timings {
            eprintln!("{what}: {:.1} ms", t0.elapsed().as_secs_f64() * 1000.0);
        }
    };
    let bytes = match std::fs::read(&args.spec) {
        Ok(b) => b,
        Err(e) => return fail(format!("cannot read spec file {}: {e}", args.spec.display())),
    };
    let docs = match parse_spec_bytes_as(&bytes, args.ceph_release.unwrap_or(Release::Pacific)) {
        Ok(d) => d,
        Err(e) => return fail(format!("{}: {e}", args.spec.display())),
    };
    let view = match File::open(&args.inventory)
        .map_err(|e| e.to_string())
        .and_then(|f| read_inventory(f).map_err(|e| e.to_string()))
    {
        Ok(v) => v,
        Err(e) => return fail(format!("cannot read inventory {}: {e}", args.inventory.display())),
    };
    lap("read spec + inventory");
    let result = preview(&docs, &view);
    lap("plan");
    let report = PreviewReport::new(&result, &docs, &view);
    let stdout = std::io::stdout();
    let mut out = BufWriter::with_capacity(1 << 16, stdout.lock());
    let written = match format {
        Format::Json => {
            let threads = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
            write_json(&report, &mut out, threads).and_then(|_| out.write_all(b"\n"))
        }
        Format::Plain => out.write_all(preview_table(&report.doc()).as_bytes()),
        // The one-document forms (the parallel writer above is for big plans).
        Format::JsonPretty | Format::Yaml => {
            super::out::structured(format, &report.doc());
            Ok(())
        }
    };
    if let Err(e) = written.and_then(|_| out.flush()) {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            return fail(format!("cannot write output: {e}"));
        }
    }
    lap("write output");
    let code = if result.is_valid() { ExitCode::SUCCESS } else { ExitCode::from(exit::INVALID) };
    // Freeing a large inventory one device at a time takes longer than the
    // planning did; the process is about to exit and the OS reclaims it all.
    std::mem::forget(result);
    std::mem::forget(view);
    code
}

fn fail(message: String) -> ExitCode {
    eprintln!("osdkeeper: {message}");
    ExitCode::from(exit::UNREADABLE)
}
