//! Commands that talk to a running daemon over its API: hosts, devices,
//! specs, events. Each prints a table (cephadm's columns where cephadm has
//! the command) or the API's JSON with `--format json`.

use std::process::ExitCode;

use serde_json::{json, Value};

use super::{exit, Format};
use crate::client::{encode, Client, ClientError};
use crate::clock::{format_age, format_ms, now_ms};
use crate::render::preview::preview_table;
use crate::render::table::{Align, Table};
use crate::render::units::format_bytes;

#[derive(clap::Args, Debug, Clone)]
pub struct Remote {
    /// The daemon's address.
    #[arg(long, global = true, env = "OSDKEEPER_URL", default_value = "http://127.0.0.1:8740")]
    pub url: String,
    /// API token (from the environment only, so it stays out of `ps`).
    #[arg(skip = std::env::var("OSDKEEPER_TOKEN").ok())]
    pub token: Option<String>,
}

impl Remote {
    fn client(&self) -> Client {
        Client::new(&self.url, self.token.clone())
    }
}

#[derive(clap::Subcommand, Debug)]
pub enum HostCmd {
    /// Add a host: NAME and the HOST:PORT of its agent.
    Add {
        name: String,
        addr: String,
        /// Comma-separated labels.
        #[arg(long, value_delimiter = ',')]
        labels: Vec<String>,
    },
    /// List hosts with their agent, labels and status.
    Ls {
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
    },
    /// Forget a host (its OSDs are not touched).
    Rm { name: String },
    /// Add or remove a label.
    Label {
        #[command(subcommand)]
        cmd: LabelCmd,
    },
}

#[derive(clap::Subcommand, Debug)]
pub enum LabelCmd {
    Add { name: String, label: String },
    Rm { name: String, label: String },
}

#[derive(clap::Subcommand, Debug)]
pub enum DeviceCmd {
    /// List devices like `ceph orch device ls`.
    Ls {
        host: Option<String>,
        /// Ask the agents for a fresh inventory first.
        #[arg(long)]
        refresh: bool,
        #[arg(long)]
        wide: bool,
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
    },
    /// Let specs use a device osdkeeper holds back (after a zap or an OSD removal).
    Release { host: String, path: String },
    /// Wipe a device's labels and signatures (refused for a device in use).
    Zap {
        host: String,
        path: String,
        /// Required: this PERMANENTLY ERASES the device.
        #[arg(long)]
        force: bool,
    },
    /// List held devices.
    Held {
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
    },
}

#[derive(clap::Subcommand, Debug)]
pub enum OsdCmd {
    /// List every OSD with its host, devices, CRUSH weight, up/in and PGs.
    Ls {
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
    },
    /// `osd rm ID... [--replace] [--force] [--zap]`, `osd rm status`, `osd rm stop ID...`
    Rm {
        /// OSD ids (N or osd.N), or `status`, or `stop` followed by ids.
        #[arg(required = true, num_args = 1..)]
        args: Vec<String>,
        /// Destroy instead of purge, keeping the id for the replacement disk.
        #[arg(long)]
        replace: bool,
        /// Do not wait for the PGs to drain (safe-to-destroy is still required).
        #[arg(long)]
        force: bool,
        /// Wipe the OSD's devices once it is gone.
        #[arg(long)]
        zap: bool,
        /// With `status`: how many finished removals to show.
        #[arg(long, default_value_t = 20)]
        history: i64,
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
    },
}

#[derive(clap::Subcommand, Debug)]
pub enum SpecCmd {
    /// List applied specs.
    Ls {
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
    },
    /// Show a spec as applied, with its history.
    Show { service_name: String },
    /// Remove a spec (its OSDs stay; no new ones are created).
    Rm { service_name: String },
}

#[derive(clap::Args, Debug)]
pub struct ApplyArgs {
    /// The spec file (cephadm's YAML, one or more documents).
    #[arg(short = 'i', long = "in-file")]
    pub file: std::path::PathBuf,
    /// Show what would happen; store nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Ask the matching hosts' agents for fresh inventories first.
    #[arg(long)]
    pub refresh: bool,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

#[derive(clap::Args, Debug)]
pub struct EventsArgs {
    #[arg(long, default_value_t = 50)]
    pub limit: i64,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

/// Runs a remote command on a small runtime and maps errors to exit codes.
pub fn run<F, Fut>(f: F) -> ExitCode
where
    F: FnOnce() -> Fut,
    Fut: std::future::Future<Output = Result<ExitCode, ClientError>>,
{
    let rt = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("osdkeeper: cannot start: {e}");
            return ExitCode::from(exit::UNREADABLE);
        }
    };
    match rt.block_on(f()) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("osdkeeper: {e}");
            if let ClientError::Api { body, .. } = &e {
                if let Some(errors) = body.get("errors").and_then(Value::as_array) {
                    for err in errors {
                        eprintln!("  {}", err.get("error").and_then(Value::as_str).unwrap_or_default());
                    }
                }
            }
            ExitCode::from(if e.is_client_error() { exit::INVALID } else { exit::UNREADABLE })
        }
    }
}

fn print_json(v: &Value) {
    println!("{}", serde_json::to_string_pretty(v).unwrap_or_default());
}

fn s(v: &Value, k: &str) -> String {
    match v.get(k) {
        Some(Value::String(x)) => x.clone(),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    }
}

pub async fn host(r: &Remote, cmd: HostCmd) -> Result<ExitCode, ClientError> {
    let c = r.client();
    match cmd {
        HostCmd::Add { name, addr, labels } => {
            let h = c.post_json("/api/v1/hosts", &json!({"name": name, "addr": addr, "labels": labels})).await?;
            println!("Added host '{}' with agent {}", s(&h, "name"), s(&h, "addr"));
        }
        HostCmd::Ls { format } => {
            let hosts = c.get("/api/v1/hosts").await?;
            if format == Format::Json {
                print_json(&hosts);
            } else {
                let mut t = Table::new(["HOST", "ADDR", "LABELS", "STATUS"]);
                for h in hosts.as_array().into_iter().flatten() {
                    let labels: Vec<&str> =
                        h["labels"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
                    let status = match h["unreachable_since"].as_i64() {
                        Some(since) => format!("Offline since {} ({})", format_ms(since), s(h, "last_error")),
                        None => String::new(),
                    };
                    t.row([s(h, "name"), s(h, "addr"), labels.join(" "), status]);
                }
                print!("{}", t.plain());
                println!("{} hosts in cluster", hosts.as_array().map_or(0, Vec::len));
            }
        }
        HostCmd::Rm { name } => {
            c.delete(&format!("/api/v1/hosts/{}", encode(&name))).await?;
            println!("Removed host '{name}'");
        }
        HostCmd::Label { cmd: LabelCmd::Add { name, label } } => {
            c.post_json(&format!("/api/v1/hosts/{}/labels", encode(&name)), &json!({ "label": label })).await?;
            println!("Added label {label} to host {name}");
        }
        HostCmd::Label { cmd: LabelCmd::Rm { name, label } } => {
            c.delete(&format!("/api/v1/hosts/{}/labels/{}", encode(&name), encode(&label))).await?;
            println!("Removed label {label} from host {name}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub async fn device(r: &Remote, cmd: DeviceCmd) -> Result<ExitCode, ClientError> {
    let c = r.client();
    match cmd {
        DeviceCmd::Ls { host, refresh, wide, format } => {
            let mut q = vec![];
            if let Some(h) = &host {
                q.push(format!("host={}", encode(h)));
            }
            if refresh {
                q.push("refresh=true".into());
            }
            let path =
                if q.is_empty() { "/api/v1/devices".to_string() } else { format!("/api/v1/devices?{}", q.join("&")) };
            let hosts = c.get(&path).await?;
            if format == Format::Json {
                print_json(&hosts);
            } else {
                print!("{}", device_table(&hosts, wide));
            }
        }
        DeviceCmd::Release { host, path } => {
            c.post_json("/api/v1/devices/release", &json!({"host": host, "path": path})).await?;
            println!("Released {path} on {host}: specs may use it again");
        }
        DeviceCmd::Zap { host, path, force } => {
            c.post_json("/api/v1/devices/zap", &json!({"host": host, "path": path, "force": force})).await?;
            println!("zap successful for {path} on {host} (held: `osdkeeper device release {host} {path}` lets specs use it)");
        }
        DeviceCmd::Held { format } => {
            let held = c.get("/api/v1/devices/held").await?;
            if format == Format::Json {
                print_json(&held);
            } else {
                let mut t = Table::new(["HOST", "PATH", "SINCE", "REASON"]);
                for h in held.as_array().into_iter().flatten() {
                    t.row([s(h, "host"), s(h, "path"), format_ms(h["since"].as_i64().unwrap_or(0)), s(h, "reason")]);
                }
                print!("{}", t.plain());
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// cephadm's `orch device ls` table (plus held devices and unreachable hosts).
pub fn device_table(hosts: &Value, wide: bool) -> String {
    let headers: Vec<&str> = if wide {
        vec![
            "HOST",
            "PATH",
            "TYPE",
            "TRANSPORT",
            "RPM",
            "DEVICE ID",
            "SIZE",
            "HEALTH",
            "IDENT",
            "FAULT",
            "AVAILABLE",
            "REFRESHED",
            "REJECT REASONS",
        ]
    } else {
        vec!["HOST", "PATH", "TYPE", "DEVICE ID", "SIZE", "AVAILABLE", "REFRESHED", "REJECT REASONS"]
    };
    let size_col = headers.iter().position(|h| *h == "SIZE").expect("size column");
    let mut t = Table::new(headers.iter().copied()).align(size_col, Align::Right);
    let mut notes = Vec::new();
    for h in hosts.as_array().into_iter().flatten() {
        let host = s(h, "host");
        let refreshed = h["inventory"]["age_s"].as_f64().map(|a| format_age((a * 1000.0) as i64)).unwrap_or_default();
        if let Some(since) = h["unreachable_since"].as_i64() {
            notes.push(format!(
                "{host}: unreachable for {} ({}); showing the last inventory",
                format_age(now_ms() - since).trim_end_matches(" ago"),
                s(h, "last_error")
            ));
        }
        if h["inventory"].is_null() {
            notes.push(format!("{host}: no inventory yet"));
        }
        if let Some(e) = h["refresh_error"].as_str() {
            notes.push(format!("{host}: refresh failed: {e}"));
        }
        for d in h["devices"].as_array().into_iter().flatten() {
            let mut reasons: Vec<String> = d["rejected_reasons"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|r| r.as_str().map(str::to_string))
                .collect();
            let held = d["held"].as_str();
            if let Some(why) = held {
                reasons.insert(0, format!("held by osdkeeper: {why}"));
            }
            let available = if d["available"].as_bool() == Some(true) && held.is_none() { "Yes" } else { "" };
            let size = d["size_bytes"].as_f64().map(|b| format_bytes(b, 5)).unwrap_or_default();
            let mut row = vec![host.clone(), s(d, "path"), s(d, "type")];
            if wide {
                row.extend([s(d, "transport"), s(d, "rpm")]);
            }
            row.extend([s(d, "device_id"), size]);
            if wide {
                row.extend([s(d, "health"), s(d, "ident"), s(d, "fault")]);
            }
            row.extend([available.to_string(), refreshed.clone(), reasons.join(", ")]);
            t.row(row);
        }
    }
    let mut out = t.plain();
    for n in notes {
        out.push_str(&format!("note: {n}\n"));
    }
    out
}

pub async fn apply(r: &Remote, args: ApplyArgs) -> Result<ExitCode, ClientError> {
    let text = match std::fs::read_to_string(&args.file) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("osdkeeper: cannot read {}: {e}", args.file.display());
            return Ok(ExitCode::from(exit::UNREADABLE));
        }
    };
    let q = format!("/api/v1/specs?dry_run={}&refresh={}", args.dry_run, args.refresh);
    let result = r.client().post_text(&q, text, "application/yaml").await;
    let body = match result {
        Ok(b) => b,
        Err(ClientError::Api { status: 422, body, message }) if args.format == Format::Json => {
            print_json(&body);
            eprintln!("osdkeeper: {message}");
            return Ok(ExitCode::from(exit::INVALID));
        }
        Err(e) => return Err(e),
    };
    if args.format == Format::Json {
        print_json(&body);
        return Ok(ExitCode::SUCCESS);
    }
    if args.dry_run {
        println!("Dry run: nothing was changed. Inventories as of the REFRESHED age shown below.");
    }
    print!("{}", preview_table(&body));
    for h in body["hosts_without_inventory"].as_array().into_iter().flatten() {
        println!("note: {} has no inventory yet and was not planned", h.as_str().unwrap_or_default());
    }
    for f in body["refresh_failures"].as_array().into_iter().flatten() {
        println!("note: could not refresh {}: {}", s(f, "host"), s(f, "error"));
    }
    for st in body["stored"].as_array().into_iter().flatten() {
        println!("Scheduled {} update... (version {})", s(st, "service_name"), s(st, "version"));
    }
    Ok(ExitCode::SUCCESS)
}

pub async fn spec(r: &Remote, cmd: SpecCmd) -> Result<ExitCode, ClientError> {
    let c = r.client();
    match cmd {
        SpecCmd::Ls { format } => {
            let specs = c.get("/api/v1/specs").await?;
            if format == Format::Json {
                print_json(&specs);
            } else {
                let mut t = Table::new(["NAME", "VERSION", "MANAGED", "UPDATED"]);
                for sp in specs.as_array().into_iter().flatten() {
                    let managed = if sp["unmanaged"].as_bool() == Some(true) { "no" } else { "yes" };
                    t.row([
                        s(sp, "service_name"),
                        s(sp, "version"),
                        managed.into(),
                        format_ms(sp["updated_at"].as_i64().unwrap_or(0)),
                    ]);
                }
                print!("{}", t.plain());
            }
        }
        SpecCmd::Show { service_name } => {
            let sp = c.get(&format!("/api/v1/specs/{}", encode(&service_name))).await?;
            print!("{}", s(&sp, "source"));
            for h in sp["history"].as_array().into_iter().flatten() {
                println!(
                    "# version {} {} at {}",
                    h[0],
                    h[1].as_str().unwrap_or_default(),
                    format_ms(h[2].as_i64().unwrap_or(0))
                );
            }
        }
        SpecCmd::Rm { service_name } => {
            c.delete(&format!("/api/v1/specs/{}", encode(&service_name))).await?;
            println!("Removed spec {service_name}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub async fn events(r: &Remote, args: EventsArgs) -> Result<ExitCode, ClientError> {
    let events = r.client().get(&format!("/api/v1/events?limit={}", args.limit)).await?;
    if args.format == Format::Json {
        print_json(&events);
    } else {
        for e in events.as_array().into_iter().flatten() {
            println!(
                "{} [{}] {}",
                format_ms(e["at"].as_i64().unwrap_or(0)),
                s(e, "level").to_uppercase(),
                s(e, "message")
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn parse_ids(args: &[String]) -> Result<Vec<u32>, ClientError> {
    args.iter()
        .map(|a| {
            a.trim_start_matches("osd.").parse::<u32>().map_err(|_| ClientError::Api {
                status: 400,
                message: format!("{a:?} is not an OSD id (write 8 or osd.8)"),
                body: Value::Null,
            })
        })
        .collect()
}

pub async fn osd(r: &Remote, cmd: OsdCmd) -> Result<ExitCode, ClientError> {
    let c = r.client();
    match cmd {
        OsdCmd::Ls { format } => {
            let osds = c.get("/api/v1/osds").await?;
            if format == Format::Json {
                print_json(&osds);
                return Ok(ExitCode::SUCCESS);
            }
            let mut t = Table::new(["OSD", "HOST", "DEVICES", "WEIGHT", "STATUS", "PGS", "REMOVAL"])
                .align(3, Align::Right)
                .align(5, Align::Right);
            for o in osds.as_array().into_iter().flatten() {
                let status = if o["destroyed"] == true {
                    "destroyed".to_string()
                } else {
                    format!(
                        "{} {}",
                        if o["up"] == true { "up" } else { "down" },
                        if o["in"] == true { "in" } else { "out" }
                    )
                };
                let devices: Vec<&str> =
                    o["devices"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
                t.row([
                    format!("osd.{}", o["id"]),
                    s(o, "host"),
                    devices.join(","),
                    o["crush_weight"].as_f64().map(|w| format!("{w:.5}")).unwrap_or_default(),
                    status,
                    s(o, "pgs"),
                    s(o, "removal"),
                ]);
            }
            print!("{}", t.plain());
        }
        OsdCmd::Rm { args, replace, force, zap, history, format } => match args[0].as_str() {
            "status" => {
                let rows = c.get(&format!("/api/v1/osds/removals?history={history}")).await?;
                if format == Format::Json {
                    print_json(&rows);
                } else {
                    print!("{}", removal_table(&rows));
                }
            }
            "stop" => {
                let ids = parse_ids(&args[1..])?;
                c.post_json("/api/v1/osds/removals/stop", &json!({ "ids": ids })).await?;
                println!("Stopped OSD(s) removal; the original weight will be restored");
            }
            _ => {
                let ids = parse_ids(&args)?;
                let rows = c
                    .post_json(
                        "/api/v1/osds/removals",
                        &json!({"ids": ids, "replace": replace, "force": force, "zap": zap}),
                    )
                    .await?;
                if format == Format::Json {
                    print_json(&rows);
                } else {
                    println!("Scheduled OSD(s) for removal; follow with `osdkeeper osd rm status`");
                }
            }
        },
    }
    Ok(ExitCode::SUCCESS)
}

/// cephadm's `osd rm status` columns, plus progress, rate, ETA and the gate.
pub fn removal_table(rows: &Value) -> String {
    let list = rows.as_array().cloned().unwrap_or_default();
    if list.is_empty() {
        return "No OSD remove/replace operations reported\n".into();
    }
    let mut t = Table::new([
        "OSD",
        "HOST",
        "STATE",
        "PGS",
        "REPLACE",
        "FORCE",
        "ZAP",
        "DRAIN STARTED AT",
        "PROGRESS",
        "RATE",
        "ETA",
        "WAITING ON",
    ])
    .align(3, Align::Right);
    let yes = |v: &Value| if v.as_bool() == Some(true) { "True" } else { "False" }.to_string();
    for r in &list {
        let start = r["pgs_at_start"].as_i64();
        let now = r["pgs_now"].as_i64();
        let bar = match (start, now) {
            (Some(a), Some(n)) if a > 0 => {
                let done = ((a - n.min(a)) as f64 / a as f64).clamp(0.0, 1.0);
                let filled = (done * 10.0).round() as usize;
                format!("[{}{}] {:>3.0}%", "#".repeat(filled), "-".repeat(10 - filled), done * 100.0)
            }
            _ => String::new(),
        };
        let rate = r["pgs_per_min"].as_f64().map(|x| format!("{x:.1} PGs/min")).unwrap_or_default();
        let eta = r["eta_s"].as_f64().map(crate::domain::progress::format_duration).unwrap_or_default();
        let waiting = r["waiting_on"]
            .as_str()
            .or(r["note"].as_str())
            .or(r["last_error"].as_str())
            .unwrap_or_default()
            .to_string();
        t.row([
            s(r, "osd_id"),
            s(r, "host"),
            s(r, "state"),
            now.map(|n| n.to_string()).unwrap_or_else(|| "-1".into()),
            yes(&r["replace"]),
            yes(&r["force"]),
            yes(&r["zap"]),
            r["drain_started_at"].as_i64().map(format_ms).unwrap_or_default(),
            bar,
            rate,
            eta,
            waiting,
        ]);
    }
    t.plain()
}
