//! The command line as a cephadm user types it, against a real daemon with
//! fixture agents: global options on either side of the subcommand,
//! `HOST:PORT` addresses, cephadm's forms, `--format`, the exit statuses
//! and error words of `docs/cli.md`, a closed pipe, `/healthz` without a
//! cluster, and `events --follow` with its filters. Outputs are compared
//! with the golden files in `tests/fixtures/cli/` (`UPDATE_EXPECT=1`
//! rewrites them), after masking times and ages.

mod common;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::client::Api;
use common::*;
use serde_json::Value;

const SPEC: &str = "specs/field-report-ssds.yaml";
/// Polls fast; no Ceph (`false` fails at once), as in the demo-less tests.
const CONFIG: &str = "poll:\n  interval_s: 1\n  timeout_s: 5\nceph:\n  bin: /bin/false\n  timeout_s: 5\n";

fn start_agent(dir: &Path, host: &str) -> (Proc, String) {
    let inv: Value =
        serde_json::from_str(&std::fs::read_to_string(repo().join("specs/f5-422-inventory.json")).unwrap()).unwrap();
    let file = dir.join(format!("{host}.json"));
    std::fs::write(&file, inv["hosts"][host].to_string()).unwrap();
    let mut cmd = Command::new(bin());
    cmd.args(["agent", "--listen", "127.0.0.1:0", "--host-name", host, "--inventory-file"]).arg(&file);
    cmd.env_remove("OSDKEEPER_AGENT_TOKEN");
    spawn_listening(cmd, &format!("agent {host}"), &dir.join(format!("agent-{host}.log")))
}

/// Times, ages and ports that differ from run to run, masked; as the
/// masks change the columns' widths, columns are compared by their order
/// (runs of spaces become two).
fn mask(text: &str) -> String {
    let time = regex::Regex::new(r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(\.\d+)?").unwrap();
    let age = regex::Regex::new(r"\b\d+[smhdwMy] ago\b").unwrap();
    let port = regex::Regex::new(r"127\.0\.0\.1:\d+").unwrap();
    let text = time.replace_all(text, "<time>");
    let text = age.replace_all(&text, "<age>");
    let text = port.replace_all(&text, "127.0.0.1:<port>");
    text.lines()
        .map(|l| regex::Regex::new(r" {2,}").unwrap().replace_all(l.trim_end(), "  ").into_owned() + "\n")
        .collect()
}

/// Compares with `tests/fixtures/cli/NAME.txt`, or writes it with UPDATE_EXPECT=1.
fn golden(name: &str, actual: &str) {
    let path = repo().join("tests/fixtures/cli").join(format!("{name}.txt"));
    let actual = mask(actual);
    if std::env::var_os("UPDATE_EXPECT").is_some() {
        std::fs::write(&path, &actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(actual, expected, "{name}: the output differs from {}", path.display());
}

/// Runs the CLI with `args` as given (no OSDKEEPER_URL: the test passes --url).
fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(bin())
        .args(args)
        .env_remove("OSDKEEPER_URL")
        .env_remove("OSDKEEPER_TOKEN")
        .env_remove("OSDKEEPER_CACERT")
        .output()
        .unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
}

struct Setup {
    _dir: tempfile::TempDir,
    _agents: Vec<Proc>,
    daemon: TestDaemon,
    /// `127.0.0.1:PORT`, without a scheme.
    addr: String,
}

fn setup() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let mut agents = Vec::new();
    let daemon = start_daemon(dir.path(), CONFIG, &[]);
    let addr = daemon.url.trim_start_matches("http://").to_string();
    // f5-422-04 holds the field report's three SSD OSDs of the spec.
    for host in ["f5-422-01", "f5-422-02", "f5-422-04"] {
        let (agent, agent_addr) = start_agent(dir.path(), host);
        agents.push(agent);
        let (code, out, err) = run(&["--url", &addr, "host", "add", host, &agent_addr, "--labels", "osd"]);
        assert_eq!(code, 0, "host add {host}: {out}{err}");
    }
    let api = Api::new(&daemon.url, None);
    wait_for("both inventories", Duration::from_secs(30), || {
        (api.summary().body["hosts_without_inventory"] == 0).then_some(())
    });
    Setup { _dir: dir, _agents: agents, daemon, addr }
}

#[test]
fn cephadm_forms_and_formats() {
    let s = setup();
    let url = s.addr.as_str();
    let spec = repo().join(SPEC);
    let spec = spec.to_str().unwrap();

    // The global options before the subcommand, or after it: the same answer.
    // The hosts are polled every second, each poll moving its host's
    // `next_poll_at`: two answers are compared without it.
    let without_poll_times = |json: &str| {
        let mut v: Value = serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {json}"));
        for host in v.as_array_mut().expect("a list of hosts") {
            host.as_object_mut().expect("a host").remove("next_poll_at").expect("next_poll_at");
        }
        v
    };
    let (code, before, err) = run(&["--url", url, "--format", "json", "host", "ls"]);
    assert_eq!(code, 0, "{err}");
    let (_, after, _) = run(&["host", "ls", "--url", url, "--format", "json"]);
    assert_eq!(without_poll_times(&before), without_poll_times(&after));
    assert_eq!(before.lines().count(), 1, "json is one line, as ceph writes it");
    assert_eq!(after.lines().count(), 1, "json is one line, as ceph writes it");
    let (_, pretty, _) = run(&["host", "ls", "--url", url, "--format", "json-pretty"]);
    assert!(pretty.lines().count() > 5);
    assert_eq!(without_poll_times(&before), without_poll_times(&pretty));

    let (code, out, err) = run(&["--url", url, "apply", "osd", "-i", spec]);
    assert_eq!(code, 0, "apply osd -i: {err}");
    golden("apply_osd", &out);
    let (code, out, err) = run(&["--url", url, "spec", "ls"]);
    assert_eq!(code, 0, "{err}");
    golden("spec_ls", &out);
    let (_, with_prefix, _) = run(&["--url", url, "spec", "show", "osd.osd_spec_F5-422_SSDs"]);
    let (code, without, err) = run(&["--url", url, "spec", "show", "osd_spec_F5-422_SSDs"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(with_prefix, without, "spec show with or without osd.");
    golden("spec_show", &without);

    let (code, out, err) = run(&["--url", url, "device", "ls", "f5-422-02", "f5-422-01"]);
    assert_eq!(code, 0, "{err}");
    golden("device_ls_two_hosts", &out);
    let (code, out, err) = run(&["--url", url, "device", "ls", "f5-422-09"]);
    assert_eq!(code, 1, "an unknown host is an error: {out}");
    golden("device_ls_unknown_host", &err);
    // `device replace`: a device the host does not have, in ceph's words;
    // a dry run that would also clear is a usage error; a clear of a slot
    // nothing replaces changes nothing.
    let (code, _, err) = run(&["--url", url, "device", "replace", "f5-422-02", "/dev/sdz", "--dry-run"]);
    assert_eq!(
        (code, err.trim()),
        (
            1,
            "Error ENOENT: device path '/dev/sdz' not found on host 'f5-422-02' (a disk that died may have left the \
             inventory: `osdkeeper osd rm ID... --replace` removes its OSDs without zapping it)"
        )
    );
    let (code, _, err) = run(&["--url", url, "device", "replace", "f5-422-02", "/dev/sdc", "--dry-run", "--clear"]);
    assert!(code == 2 && err.contains("cannot be used with"), "{code}: {err}");
    let (code, _, err) = run(&["--url", url, "device", "replace", "f5-422-02", "/dev/sdc", "--clear"]);
    assert_eq!((code, err.trim()), (1, "Error ENOENT: /dev/sdc on f5-422-02 is not being replaced"));

    // `host swap`: a spec file that cannot be read is said before anything
    // is asked; the OSDs to take out must be named.
    let missing = "/nonexistent/ssds.yaml";
    let (code, _, err) =
        run(&["--url", url, "host", "swap", "f5-422-02", "--spec", missing, "--osds", "3", "--dry-run"]);
    assert!(code == 1 && err.contains(&format!("--spec {missing}: ")), "{code}: {err}");
    let (code, _, err) = run(&["--url", url, "host", "swap", "f5-422-02", "--spec", spec]);
    assert!(code == 2 && err.contains("--osds"), "the OSDs to take out are required: {code}: {err}");

    let (code, out, err) = run(&["--url", url, "osd", "rm", "status"]);
    assert_eq!(code, 0, "{err}");
    golden("osd_rm_status_empty", &out);
    let (code, out, err) = run(&["--url", url, "osd", "rm", "status", "8", "--finished", "--format", "yaml"]);
    assert_eq!((code, out.as_str()), (0, "[]\n"), "{err}");
    let (code, out, err) = run(&["--url", url, "osd", "rm", "stop"]);
    assert_eq!((code, out.as_str()), (1, ""), "a bare rm stop stops nothing and says so");
    golden("osd_rm_stop_bare", &err);
    // The preview needs the cluster: without one, EAGAIN and nothing else.
    let (code, out, err) = run(&["--url", url, "osd", "rm", "8", "--dry-run"]);
    assert_eq!((code, out.as_str()), (1, ""), "{err}");
    golden("osd_rm_dry_run_no_cluster", &err);
    let (code, _, err) = run(&["--url", url, "osd", "rm", "8", "8", "--dry-run"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.starts_with("Error EINVAL: osd.8 is listed twice"), "{err}");

    // A swap's forms; its check needs the cluster: without one, EAGAIN.
    let (code, out, err) = run(&["--url", url, "osd", "replace", "8"]);
    assert_eq!((code, out.as_str()), (1, ""), "{err}");
    assert!(err.starts_with("Error EINVAL: osd replace needs --with HOST:DEV (or --in-place)"), "{err}");
    let (code, _, err) = run(&["--url", url, "osd", "replace", "8", "--with", "/dev/sdg"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.starts_with("Error EINVAL: --with /dev/sdg: give HOST:DEV[,DEV...]"), "{err}");
    let (code, _, err) = run(&["--url", url, "osd", "replace", "8", "--with", "f5-422-01:/dev/sdf", "--dry-run"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.starts_with("Error EAGAIN: cannot read the cluster"), "{err}");
    let (code, out, err) = run(&["--url", url, "swap", "ls"]);
    assert_eq!((code, out.as_str()), (0, "No swaps reported\n"), "{err}");
    let (code, _, err) = run(&["--url", url, "swap", "stop", "3"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.starts_with("Error ENOENT: no swap 3"), "{err}");

    let (code, out, err) = run(&["--url", url, "--format", "yaml", "token", "whoami"]);
    assert_eq!(code, 0, "{err}");
    golden("whoami_yaml", &out);

    // Labels: adding one twice, or removing one that is gone, succeeds.
    for args in [["add", "f5-422-01", "ssd"], ["add", "f5-422-01", "ssd"], ["rm", "f5-422-01", "x"]] {
        let (code, _, err) = run(&["--url", url, "host", "label", args[0], args[1], args[2]]);
        assert_eq!(code, 0, "label {args:?}: {err}");
    }
    let hosts: Value = serde_json::from_str(&run(&["--url", url, "--format", "json", "host", "ls"]).1).unwrap();
    assert_eq!(hosts[0]["labels"], serde_json::json!(["osd", "ssd"]));

    // A host is forgotten only once it is known to hold no OSDs: without a
    // cluster to ask, `host rm` refuses and says how to insist.
    let (code, out, err) = run(&["--url", url, "host", "rm", "f5-422-04"]);
    assert_eq!((code, out.as_str()), (1, ""), "{err}");
    golden("host_rm_unchecked", &err);
    let (code, _, err) = run(&["--url", url, "host", "drain", "halt", "f5-422-04"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.starts_with("Error EINVAL: host drain takes HOST, `stop HOST` or `status HOST`"), "{err}");
    let (code, out, err) = run(&["--url", url, "host", "drain", "stop", "f5-422-04"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("No removal is running on host f5-422-04\n"), "{out}");

    let (code, _, err) = run(&["--url", "ftp://127.0.0.1:1", "host", "ls"]);
    assert_eq!(code, 1);
    assert!(err.starts_with("Error EINVAL: invalid daemon address"), "{err}");
    let (code, _, err) = run(&["--url", "127.0.0.1:9", "host", "ls"]);
    assert_eq!(code, 2, "nobody listens there: {err}");
    assert!(err.starts_with("Error ECONNREFUSED: cannot reach"), "{err}");
}

/// The field report's typos: `f5-442` for `f5-422`, in `hosts:` (refused,
/// as cephadm does, with the host meant) and in `host_pattern:` (a loud
/// warning; stored only when confirmed).
#[test]
fn placement_typos_are_caught_before_anything_is_stored() {
    let s = setup();
    let url = s.addr.as_str();
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, placement: &str| {
        let path = dir.path().join(name);
        let spec =
            format!("service_type: osd\nservice_id: ssds\nplacement:\n{placement}\ndata_devices:\n  rotational: 0\n");
        std::fs::write(&path, spec).unwrap();
        path.to_str().unwrap().to_string()
    };
    let hosts = write("hosts.yaml", "  hosts: [f5-442-01, f5-422-02]");
    for extra in [&["--dry-run"][..], &[]] {
        let (code, out, err) = run(&[&["--url", url, "apply", "osd", "-i", &hosts], extra].concat());
        assert_eq!((code, out.as_str()), (1, ""), "an unknown host is refused ({extra:?}): {err}");
        golden("apply_unknown_host", &err);
    }
    let pattern = write("pattern.yaml", "  host_pattern: 'f5-442-*'");
    let (code, out, err) = run(&["--url", url, "apply", "osd", "-i", &pattern, "--dry-run"]);
    assert_eq!(code, 0, "a dry-run warns, it does not fail: {err}");
    golden("apply_dry_run_pattern_matches_nothing", &out);
    let (code, out, err) = run(&["--url", url, "apply", "osd", "-i", &pattern]);
    assert_eq!((code, out.as_str()), (1, ""), "an apply needs confirming: {err}");
    golden("apply_pattern_matches_nothing", &err);
    let (_, listed, _) = run(&["--url", url, "spec", "ls"]);
    assert!(!listed.contains("osd.ssds"), "refused means not stored: {listed}");
    let (code, out, err) = run(&["--url", url, "apply", "osd", "-i", &pattern, "--allow-empty-placement"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("Scheduled osd.ssds update"), "{out}");
}

/// cephadm's host specs through `apply -i`: a dry-run says what it would
/// do and adds nothing; an agent that does not answer adds no host; with
/// `--no-check` the hosts are in `host ls`.
#[test]
fn host_specs_are_applied_as_one() {
    let s = setup();
    let url = s.addr.as_str();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("hosts.yaml");
    // Port 1 on loopback: nothing answers there.
    let specs = "service_type: host\nhostname: f5-422-07\naddr: 127.0.0.1:1\nlabels: [osd]\n---\n\
                 service_type: host\nhostname: f5-422-08\naddr: 127.0.0.1\n";
    std::fs::write(&file, specs).unwrap();
    let file = file.to_str().unwrap();
    let (code, out, err) = run(&["--url", url, "apply", "-i", file, "--dry-run"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("would add host f5-422-07 (agent 127.0.0.1:1, labels [osd])"), "{out}");
    assert!(out.contains("would add host f5-422-08 (agent 127.0.0.1:8741, labels [])"), "the agent's port: {out}");
    let (code, _, err) = run(&["--url", url, "apply", "-i", file]);
    assert_eq!(code, 1, "nothing answers at 127.0.0.1:1: {err}");
    assert!(err.contains("no host was added") && err.contains("f5-422-07"), "{err}");
    let (_, listed, _) = run(&["--url", url, "host", "ls"]);
    assert!(!listed.contains("f5-422-07") && !listed.contains("f5-422-08"), "{listed}");
    let (code, out, err) = run(&["--url", url, "apply", "-i", file, "--no-check"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("Added host f5-422-07") && out.contains("Added host f5-422-08"), "{out}");
    let (_, listed, _) = run(&["--url", url, "host", "ls"]);
    assert!(listed.contains("f5-422-07") && listed.contains("f5-422-08"), "{listed}");
    let (code, out, err) = run(&["--url", url, "apply", "-i", file, "--dry-run"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("unchanged: host f5-422-07") && out.contains("unchanged: host f5-422-08"), "{out}");
}

#[test]
fn host_add_asks_the_agent_first() {
    let s = setup();
    let dir = tempfile::tempdir().unwrap();
    let (_agent, agent_addr) = start_agent(dir.path(), "f5-422-03");
    let url = s.addr.as_str();
    let (code, _, err) = run(&["--url", url, "host", "add", "f5-422-06", &agent_addr]);
    assert_eq!(code, 1, "the agent runs on another host");
    assert!(err.contains("runs on host \"f5-422-03\", not \"f5-422-06\"") && err.contains("--no-check"), "{err}");
    let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().to_string();
    let (code, _, err) = run(&["--url", url, "host", "add", "f5-422-05", &dead]);
    assert_ne!(code, 0, "nothing answers there: {err}");
    assert!(err.contains("host f5-422-05 not added: cannot reach the agent"), "{err}");
    let (code, _, err) = run(&["--url", url, "host", "add", "f5-422-05", &dead, "--no-check"]);
    assert_eq!(code, 0, "--no-check adds it anyway: {err}");
    let (_, out, _) = run(&["--url", url, "host", "ls"]);
    assert!(!out.contains("f5-422-06") && out.contains("f5-422-05"), "{out}");
}

#[test]
fn healthz_reports_the_missing_cluster_and_the_daemon_serves_anyway() {
    let s = setup();
    let api = Api::new(&s.daemon.url, None);
    let health = wait_for("the start-up check of the cluster", Duration::from_secs(30), || {
        let h = api.healthz();
        (h.status == 200 && !h.body["ceph"]["checked_at"].is_null()).then_some(h.body)
    });
    assert_eq!(health["status"], "ok");
    assert_eq!(health["ceph"]["connected"], false);
    assert!(health["ceph"]["error"].as_str().unwrap().contains("cannot read the cluster"), "{health}");
    let log = std::fs::read_to_string(&s.daemon.log).unwrap();
    assert!(log.contains("OSD lists, removals and deployments will fail until the cluster answers"), "{log}");
    assert!(!log.contains('\u{1b}'), "no colour codes in a log file: {log}");
}

/// Lines of a running `events --follow`, read on a thread.
fn follow(args: &[&str]) -> (std::process::Child, std::sync::mpsc::Receiver<String>) {
    let mut child = Command::new(bin()).args(args).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    (child, rx)
}

fn next_line(rx: &std::sync::mpsc::Receiver<String>, what: &str) -> String {
    rx.recv_timeout(Duration::from_secs(20)).unwrap_or_else(|_| panic!("no line for {what}"))
}

#[test]
fn events_follow_with_filters_and_the_api_filters() {
    let s = setup();
    let url = s.addr.as_str();
    let (mut child, rx) = follow(&["--url", url, "events", "--follow", "--host", "f5-422-02", "--limit", "1"]);
    let first = next_line(&rx, "the latest event of f5-422-02");
    assert!(first.contains("f5-422-02") && !first.contains("f5-422-01") && !first.contains("f5-422-04"), "{first}");
    // New events: one of the other host (filtered out), then one of this one.
    assert_eq!(run(&["--url", url, "host", "label", "add", "f5-422-01", "a"]).0, 0);
    assert_eq!(run(&["--url", url, "host", "label", "add", "f5-422-02", "b"]).0, 0);
    let next = next_line(&rx, "the new label of f5-422-02");
    assert!(next.contains("Added label b to host f5-422-02"), "{next}");
    let _ = child.kill();
    let _ = child.wait();

    let api = Api::new(&s.daemon.url, None);
    let of = |query: &str| -> Vec<String> {
        api.events(query).list().iter().map(|e| e["message"].as_str().unwrap().to_string()).collect()
    };
    let all = of("");
    let two = of("host=f5-422-02");
    assert!(!two.is_empty() && two.len() < all.len(), "{two:?} of {all:?}");
    assert!(two.iter().all(|m| m.contains("f5-422-02")), "{two:?}");
    assert!(of("since=99999999999999").is_empty(), "nothing in the future");
    assert!(of("osd=8").is_empty(), "no OSD events without a cluster");
    let (code, _, err) = run(&["--url", url, "events", "--since", "yesterday"]);
    assert_eq!(code, 2, "clap's usage error");
    assert!(err.contains("neither an age"), "{err}");
}

fn spawn_piped(args: &[&str]) -> std::process::Child {
    Command::new(bin()).args(args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap()
}

#[test]
fn a_closed_pipe_ends_the_command_quietly() {
    let s = setup();
    let url = s.addr.as_str();
    // The reader goes away while `events --follow` runs (`| head -1`); the
    // next event makes it write into the closed pipe.
    let mut child = spawn_piped(&["--url", url, "events", "--follow"]);
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap();
    assert!(!first.is_empty(), "it printed the latest events first");
    drop(stdout);
    assert_eq!(run(&["--url", url, "host", "label", "add", "f5-422-01", "piped"]).0, 0);
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "events --follow kept running after its reader left");
        std::thread::sleep(Duration::from_millis(100));
    };
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert_eq!(status.code(), Some(0), "{err}");
    assert!(!err.contains("panicked") && !err.contains("Broken pipe"), "{err}");

    // A one-shot listing whose reader is gone before it writes.
    let mut child = spawn_piped(&["--url", url, "device", "ls"]);
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

/// `preview --ceph-release`: the offline dry-run as the cephadm of that
/// release (20.2 appends `--objectstore`), 16.2 without it, and a release
/// osdkeeper does not know refused by name.
#[test]
fn preview_plans_as_the_release_it_is_told() {
    let commands = |release: Option<&str>| -> Vec<String> {
        let mut cmd = Command::new(bin());
        cmd.args(["preview", "--spec"]).arg(repo().join(SPEC));
        cmd.arg("--inventory").arg(repo().join("specs/f5-422-inventory.json"));
        cmd.args(["--format", "json"]);
        if let Some(r) = release {
            cmd.args(["--ceph-release", r]);
        }
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        doc["preview"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|r| r["commands"].as_array().unwrap().clone())
            .map(|c| c.as_str().unwrap().to_string())
            .collect()
    };
    let (pacific, tentacle, reef) = (commands(None), commands(Some("20.2")), commands(Some("reef")));
    assert!(!pacific.is_empty());
    assert!(pacific.iter().chain(&reef).all(|c| !c.contains("--objectstore")), "{pacific:?}");
    assert!(tentacle.iter().all(|c| c.contains(" --objectstore bluestore ")), "{tentacle:?}");
    let out = Command::new(bin())
        .args(["preview", "--spec", "x.yaml", "--inventory", "y.json", "--ceph-release", "15.2"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("which osdkeeper does not know (it knows 16 pacific to 20 tentacle)"));
}
