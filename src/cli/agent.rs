//! `osdkeeper agent`: runs the host agent (see `agent_server`).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use super::exit;
use crate::agent_server::osd::boot_activation::BootActivation;
use crate::agent_server::{self, AgentConfig, AgentState, RawSettings};
use crate::config::LogFormat;

#[derive(clap::Args, Debug)]
pub struct AgentArgs {
    /// Address to listen on; anything but loopback needs a token (OSDKEEPER_AGENT_TOKEN).
    #[arg(long, default_value = agent_server::config::DEFAULT_LISTEN)]
    listen: SocketAddr,
    /// The name this host is reported under [default: the system host name].
    #[arg(long)]
    host_name: Option<String>,
    /// Report and touch only these devices (comma-separated). Loop devices
    /// named here are reported as disks.
    #[arg(long, value_delimiter = ',', value_name = "/dev/a,/dev/b")]
    devices: Vec<String>,
    /// Serve this inventory (what `ceph-volume inventory --format json`
    /// prints; read again for every request) instead of the host's disks.
    /// The agent then creates no OSDs.
    #[arg(long, value_name = "FILE")]
    inventory_file: Option<PathBuf>,
    /// File holding the token (OSDKEEPER_AGENT_TOKEN wins when both are set).
    #[arg(long, value_name = "PATH")]
    token_file: Option<PathBuf>,
    /// How long one ceph-volume command may run.
    #[arg(long, default_value_t = 1800, value_name = "SECONDS")]
    ceph_volume_timeout_s: u64,
    /// How long `ceph-volume inventory` (and each of lsblk, blkid, pvs) may run.
    #[arg(long, default_value_t = 120, value_name = "SECONDS")]
    inventory_timeout_s: u64,
    /// The systemd unit of an OSD, stopped with `systemctl stop`; `{id}` is
    /// the OSD id. cephadm clusters: `ceph-<fsid>@osd.{id}`
    /// [default: ceph-osd@{id}]
    #[arg(long, value_name = "TEMPLATE")]
    osd_unit_template: Option<String>,
    /// Stop OSDs with this command instead of systemd (split on whitespace,
    /// no shell; `{id}` replaced by the OSD id in each word), e.g.
    /// `testbed/ceph-sandbox/stop.sh DIR osd.{id}`.
    #[arg(long, value_name = "TEMPLATE")]
    osd_stop_command: Option<String>,
    /// How long a stopped OSD's processes may take to exit.
    #[arg(long, default_value_t = 60, value_name = "SECONDS")]
    osd_stop_timeout_s: u64,
    /// Start OSDs with this command instead of `systemctl start` of the unit
    /// (split on whitespace, no shell; `{id}` replaced by the OSD id), for
    /// hosts without systemd units, e.g.
    /// `testbed/ceph-sandbox/osd-start.sh DIR {id} HOST`.
    #[arg(long, value_name = "TEMPLATE")]
    osd_start_command: Option<String>,
    /// How long a started OSD may take until a ceph-osd process serves it.
    #[arg(long, default_value_t = 120, value_name = "SECONDS")]
    osd_start_timeout_s: u64,
    /// Serve HTTPS with this certificate (PEM); required off loopback.
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// The certificate's private key (PEM).
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// Count only ceph-osd processes running with this ceph.conf (their
    /// -c/--conf, or /etc/ceph/CLUSTER.conf for --cluster CLUSTER) as this
    /// host's OSDs, on a host running daemons of more than one cluster
    /// [default: every ceph-osd counts].
    #[arg(long, value_name = "FILE")]
    osd_cluster_conf: Option<PathBuf>,
    /// Where ceph-volume makes the OSD data dirs; a zap unmounts the stale
    /// tmpfs of a removed OSD there (tests point it elsewhere).
    #[arg(long, value_name = "DIR", default_value = "/var/lib/ceph/osd")]
    osd_data_dir: PathBuf,
    /// For how long after the host's boot the agent activates an LVM OSD's
    /// LVs that LVM left inactive while the OSD's boot unit
    /// (ceph-volume@lvm-ID-FSID) is enabled; 0 turns it off.
    #[arg(long, default_value_t = 900, value_name = "SECONDS")]
    boot_activation_window_s: u64,
    /// A request's head (its line and headers) must arrive within this many
    /// seconds of the connection opening or its previous answer: also how
    /// long a kept-alive connection may stay idle.
    #[arg(long, default_value_t = crate::http_server::DEFAULT_HEADER_READ_TIMEOUT.as_secs(), value_name = "SECONDS")]
    header_read_timeout_s: u64,
    /// A request's body must arrive within this many seconds of its head.
    #[arg(long, default_value_t = crate::http_server::DEFAULT_REQUEST_TIMEOUT.as_secs(), value_name = "SECONDS")]
    request_timeout_s: u64,
    /// Connections served at once; more wait in the kernel's queue.
    #[arg(long, default_value_t = agent_server::config::DEFAULT_MAX_CONNECTIONS, value_name = "N")]
    max_connections: usize,
    /// The ceph-volume program.
    #[arg(long, env = "OSDKEEPER_CEPH_VOLUME", default_value = "ceph-volume", value_name = "PATH")]
    ceph_volume: String,
    #[arg(long, value_enum, default_value = "human")]
    log_format: LogFormat,
}

pub fn run(args: AgentArgs) -> ExitCode {
    crate::telemetry::init(args.log_format);
    let raw = RawSettings {
        listen: Some(args.listen),
        host_name: args.host_name,
        devices: args.devices,
        inventory_file: args.inventory_file,
        token_env: std::env::var("OSDKEEPER_AGENT_TOKEN").ok(),
        token_file: args.token_file,
        ceph_volume: Some(args.ceph_volume),
        ceph_volume_timeout_s: args.ceph_volume_timeout_s,
        inventory_timeout_s: args.inventory_timeout_s,
        osd_unit_template: args.osd_unit_template,
        osd_stop_command: args.osd_stop_command,
        osd_stop_timeout_s: args.osd_stop_timeout_s,
        osd_start_command: args.osd_start_command,
        osd_start_timeout_s: args.osd_start_timeout_s,
        tls_cert: args.tls_cert,
        tls_key: args.tls_key,
        osd_cluster_conf: args.osd_cluster_conf,
        osd_data_dir: Some(args.osd_data_dir),
        boot_activation_window_s: args.boot_activation_window_s,
        header_read_timeout_s: Some(args.header_read_timeout_s),
        request_timeout_s: Some(args.request_timeout_s),
        max_connections: Some(args.max_connections),
    };
    let config = match AgentConfig::resolve(raw) {
        Ok(c) => c,
        Err(e) => return fail(e.to_string()),
    };
    let state = match AgentState::from_config(&config) {
        Ok(s) => s,
        Err(e) => return fail(e.to_string()),
    };
    let tls = match config.tls.as_ref().map(crate::tls::server_config).transpose() {
        Ok(t) => t,
        Err(e) => return fail(e.to_string()),
    };
    let rt = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => return fail(format!("cannot start the runtime: {e}")),
    };
    rt.block_on(async move {
        let listener = match tokio::net::TcpListener::bind(config.listen).await {
            Ok(l) => l,
            Err(e) => return fail(format!("cannot listen on {}: {e}", config.listen)),
        };
        let addr = match listener.local_addr() {
            Ok(a) => a,
            Err(e) => return fail(format!("cannot tell the bound address: {e}")),
        };
        let (shutdown, force) = match agent_server::shutdown_signals() {
            Ok(s) => s,
            Err(e) => return fail(format!("cannot handle signals: {e}")),
        };
        tracing::info!(
            %addr,
            host = %config.host_name,
            devices = ?config.devices,
            token = config.token.is_some(),
            "agent listening"
        );
        // Tests and scripts read the bound address (port 0) from this line.
        println!("listening on {addr}");
        // An agent serving a file creates no OSDs, so it has none to look after.
        if config.inventory_file.is_none() && !config.boot_activation_window.is_zero() {
            let looks = BootActivation::new(config.boot_activation_window, config.devices.clone());
            tokio::spawn(looks.run(state.busy.clone()));
        }
        match agent_server::serve(listener, state, tls, config.http, shutdown, force).await {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("osdkeeper agent: {e}");
                ExitCode::FAILURE
            }
        }
    })
}

fn fail(message: String) -> ExitCode {
    eprintln!("osdkeeper agent: {message}");
    ExitCode::from(exit::UNREADABLE)
}
