//! A `--loop` sandbox of six OSDs seen as three hosts (osd.2n and
//! osd.2n+1 on the n-th), one real agent per host reporting its two OSDs'
//! loop devices, and a daemon configured for quick rounds.

use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use super::sandbox::{sandbox_agent, Sandbox};
use super::{cli, cli_ok, wait_for, Proc};

pub const TOKEN: &str = "sandbox-api-token";
pub const AGENT_TOKEN: &str = "sandbox-agent-token";
pub const HOSTS: [&str; 3] = ["f5-422-01", "f5-422-02", "f5-422-03"];

/// The host osd.`id` is under.
pub fn host_of(id: u32) -> &'static str {
    HOSTS[id as usize / 2]
}

/// The daemon's config: polls every 2 s, removal rounds every second, no
/// reconcile, Ceph through `ceph_bin`.
pub fn daemon_config(sb: &Sandbox, ceph_bin: &Path) -> String {
    format!(
        "poll:\n  interval_s: 2\n  timeout_s: 10\nreconcile:\n  enabled: false\nremoval:\n  interval_s: 1\n{}  timeout_s: 30\n",
        sb.ceph_yaml(Some(ceph_bin))
    )
}

/// The daemon's environment: the API token and the agents' token.
pub fn env() -> Vec<(&'static str, &'static str)> {
    vec![("OSDKEEPER_TOKEN", TOKEN), ("OSDKEEPER_AGENT_TOKEN", AGENT_TOKEN)]
}

/// The loop device of osd.`id`.
pub fn device_of(sb: &Sandbox, id: u32) -> String {
    sb.loops().into_iter().find(|(i, _)| *i == id).map(|(_, d)| d).expect("a loop device per OSD")
}

/// One agent per host, each reporting its two OSDs' loop devices.
pub fn agents(dir: &Path, sb: &Sandbox) -> Vec<(Proc, String)> {
    let mut agents = Vec::new();
    for (n, host) in HOSTS.iter().enumerate() {
        let devices = [device_of(sb, 2 * n as u32), device_of(sb, 2 * n as u32 + 1)];
        agents.push(sandbox_agent(dir, sb, host, &devices, AGENT_TOKEN));
    }
    agents
}

/// Adds the agents' hosts to the daemon at `url` and waits for their
/// inventories.
pub fn add_hosts(url: &str, agents: &[(Proc, String)]) {
    for (host, (_, addr)) in HOSTS.iter().zip(agents) {
        cli_ok(url, Some(TOKEN), &["host", "add", host, addr]);
    }
    wait_for("inventories of the three hosts", Duration::from_secs(120), || {
        let (_, out, _) = cli(url, Some(TOKEN), &["device", "ls", "--format", "json"]);
        let v: Value = serde_json::from_str(&out).ok()?;
        v.as_array()?.iter().all(|h| h["devices"].as_array().is_some_and(|d| d.len() == 2)).then_some(())
    });
}
