//! `osdkeeper demo`: the whole product on a simulated cluster.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use super::exit;

#[derive(clap::Args, Debug)]
pub struct DemoArgs {
    #[arg(long, default_value = "127.0.0.1:8740")]
    listen: SocketAddr,
    /// SQLite file [default: a fresh file in the temp directory].
    #[arg(long)]
    db: Option<PathBuf>,
    /// Speeds the simulated cluster up (PGs drain this many times faster).
    #[arg(long, default_value_t = 1.0)]
    pace: f64,
    /// Instead of the field report's cluster, simulate this many hosts (for scale runs)...
    #[arg(long)]
    hosts: Option<usize>,
    /// ...with this many disks each.
    #[arg(long, default_value_t = 10)]
    devices_per_host: usize,
    /// OSDs that may drain at once (`removal.max_draining`, default 10).
    #[arg(long)]
    max_draining: Option<usize>,
    /// Keep every PG and where its data is, so that swaps (`osd replace`) can run: drains then
    /// move PGs as CRUSH remaps them, one per receiving OSD at a time.
    #[arg(long)]
    pg_map: bool,
}

pub fn run(args: DemoArgs) -> ExitCode {
    if !(args.pace > 0.0 && args.pace.is_finite()) {
        eprintln!("osdkeeper demo: --pace must be a positive number");
        return ExitCode::from(exit::UNREADABLE);
    }
    if !args.listen.ip().is_loopback() {
        eprintln!("osdkeeper demo: the demo has no token and listens on loopback only");
        return ExitCode::from(exit::UNREADABLE);
    }
    let db = args.db.unwrap_or_else(|| std::env::temp_dir().join(format!("osdkeeper-demo-{}.db", std::process::id())));
    crate::telemetry::init(crate::config::LogFormat::Human);
    eprintln!("osdkeeper demo: simulated cluster f5-422-01..04 (pace x{}), database {}", args.pace, db.display());
    eprintln!("osdkeeper demo: open the dashboard at the address printed below; Ctrl-C stops the demo");
    let rt = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("osdkeeper demo: {e}");
            return ExitCode::from(exit::UNREADABLE);
        }
    };
    match rt.block_on(crate::app::demo(
        args.listen,
        db,
        args.pace,
        args.hosts.map(|n| (n, args.devices_per_host.clamp(1, 26))),
        args.max_draining,
        args.pg_map,
    )) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("osdkeeper demo: {e}");
            ExitCode::from(exit::UNREADABLE)
        }
    }
}
