//! The cluster session up to its process boundary: `python` is a shell
//! script standing in for `session.py` (the real one serves the daemon of
//! every `tests/sandbox_*.rs`: `Sandbox::ceph_yaml` turns it on), `bin` a
//! `ceph` that logs what it is asked. What is held: the answers read as
//! the CLI's, actions on the CLI, a hung helper killed and replaced, a dead
//! one replaced once, no binding falling back to the CLI, a refused
//! connection as the CLI says it.

use std::path::PathBuf;
use std::time::Duration;

use super::cli::CephCli;
use super::session::Session;
use super::{CephCluster, CephError};

/// Answers by the command's prefix, as the real helper relays the cluster's.
const ANSWERS: &str = r#"
while IFS= read -r line; do
  echo "$line" >> "$dir/requests"
  id=$(printf '%s' "$line" | sed 's/.*"id":\([0-9]*\).*/\1/')
  case "$line" in
    *safe-to-destroy*) echo '{"id": '$id', "rc": -16, "out": "", "outs": "OSD(s) 4 have 21 pgs currently mapped to them. "}' ;;
    *ok-to-stop*) echo '{"id": '$id', "rc": -16, "out": "{\"ok_to_stop\":false}", "outs": "unsafe to stop osd(s) at this time (9 PGs are or would become offline)"}' ;;
    *'"osd metadata"'*) echo '{"id": '$id', "rc": -2, "out": "", "outs": "osd.99 does not exist"}' ;;
    *'"pg ls-by-osd"'*) sleep 60 ;;
    *'"prefix":"status"'*) echo '{"id": '$id', "errno": 110, "error": "[errno 110] RADOS timed out (error calling mon_command)"}'; exit 0 ;;
  esac
done
"#;

struct Fake {
    dir: tempfile::TempDir,
}

impl Fake {
    /// A helper that greets with `hello` and then answers.
    fn new(hello: &str) -> Fake {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().display();
        let helper = format!("#!/bin/sh\ndir='{d}'\necho start >> \"$dir/starts\"\necho '{hello}'\n{ANSWERS}");
        write_exec(&dir.path().join("python"), &helper);
        write_exec(
            &dir.path().join("ceph"),
            &format!("#!/bin/sh\necho \"$*\" >> '{d}/cli'\necho 'no cluster here' >&2\nexit 1\n"),
        );
        Fake { dir }
    }

    fn cli(&self, timeout_s: u64) -> CephCli {
        self.cli_with(self.dir.path().join("python").display().to_string(), timeout_s)
    }

    fn cli_with(&self, python: String, timeout_s: u64) -> CephCli {
        CephCli {
            bin: self.dir.path().join("ceph").display().to_string(),
            rados_bin: "rados".into(),
            conf: None,
            timeout: Duration::from_secs(timeout_s),
            bench_slack: None,
            name: Some("client.osdkeeper".into()),
            keyring: None,
            osdmaptool: "osdmaptool".into(),
            session: Some(Session::new(python)),
        }
    }

    fn lines(&self, file: &str) -> Vec<String> {
        std::fs::read_to_string(self.dir.path().join(file)).unwrap_or_default().lines().map(str::to_string).collect()
    }
}

fn write_exec(path: &PathBuf, text: &str) {
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
}

const READY: &str = r#"{"ready": true}"#;

#[tokio::test]
async fn reads_through_the_helper_process_read_as_the_clis_and_actions_run_the_cli() {
    let fake = Fake::new(READY);
    let cli = fake.cli(5);
    let no = cli.safe_to_destroy(&[4]).await.unwrap();
    assert!(!no.ok);
    assert_eq!(no.message, "OSD(s) 4 have 21 pgs currently mapped to them.", "the CLI's words (cli.rs tests)");
    let busy = cli.ok_to_stop(&[4]).await.unwrap();
    assert_eq!(
        (busy.ok, busy.message.as_str()),
        (false, "unsafe to stop osd(s) at this time (9 PGs are or would become offline)")
    );
    let missing = cli.osd_devices(99).await.unwrap_err();
    assert_eq!(missing.to_string(), "`ceph osd metadata 99 --format json` failed (exit 2): osd.99 does not exist");
    assert_eq!(
        fake.lines("requests")[0],
        r#"{"cmd":{"ids":["4"],"prefix":"osd safe-to-destroy","target":["mon-mgr",""]},"id":1,"target":"mgr"}"#
    );
    assert_eq!(fake.lines("starts").len(), 1, "one helper for every read");
    assert!(fake.lines("cli").is_empty(), "{:?}", fake.lines("cli"));
    let purge = cli.purge(4).await.unwrap_err();
    assert!(purge.to_string().contains("no cluster here"), "{purge}");
    assert_eq!(fake.lines("cli"), ["--name client.osdkeeper --connect-timeout 5 osd purge 4"]);
    assert_eq!(fake.lines("requests").len(), 3, "the purge never reached the session");
}

#[tokio::test]
async fn a_helper_that_does_not_answer_is_killed_and_the_next_read_starts_another() {
    let fake = Fake::new(READY);
    let cli = fake.cli(1);
    let started = std::time::Instant::now();
    // `pg ls-by-osd` is what this fake never answers.
    let e = cli.pgs_on_osd(4).await.unwrap_err();
    assert!(matches!(e, CephError::Timeout { .. }), "{e}");
    assert!(started.elapsed() < Duration::from_secs(20), "bounded: {:?}", started.elapsed());
    assert!(cli.safe_to_destroy(&[4]).await.is_ok());
    assert_eq!(fake.lines("starts").len(), 2, "the hung one was replaced");
}

#[tokio::test]
async fn a_helper_gone_since_its_last_answer_is_replaced_once() {
    let fake = Fake::new(READY);
    let cli = fake.cli(5);
    // This fake answers `status` with the binding's exception, then exits.
    let e = cli.status().await.unwrap_err();
    assert_eq!(
        e.to_string(),
        "`ceph status --format json` failed (exit 110): [errno 110] RADOS timed out (error calling mon_command)"
    );
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(!cli.safe_to_destroy(&[4]).await.unwrap().ok);
    assert_eq!(fake.lines("starts").len(), 2);
}

#[tokio::test]
async fn without_the_binding_every_read_runs_the_cli() {
    let fake = Fake::new(r#"{"ready": false, "unavailable": "cannot import the rados module"}"#);
    let cli = fake.cli(5);
    for _ in 0..2 {
        let e = cli.safe_to_destroy(&[4]).await.unwrap_err();
        assert!(e.to_string().contains("no cluster here"), "{e}");
    }
    assert_eq!(fake.lines("starts").len(), 1, "asked once, not at every read");
    assert_eq!(fake.lines("cli").len(), 2);
    let none = fake.cli_with(fake.dir.path().join("no-such-python").display().to_string(), 5);
    assert!(none.safe_to_destroy(&[4]).await.unwrap_err().to_string().contains("no cluster here"));
}

#[tokio::test]
async fn a_refused_connection_is_the_error_the_cli_gives() {
    let refused = r#"{"ready": false, "errno": 13, "error": "[errno 13] RADOS permission denied (error connecting to the cluster)"}"#;
    let fake = Fake::new(refused);
    let cli = fake.cli(5);
    let e = cli.safe_to_destroy(&[4]).await.unwrap_err();
    assert_eq!(
        e.to_string(),
        "`ceph osd safe-to-destroy 4` failed (exit 13): [errno 13] RADOS permission denied (error connecting to the cluster)"
    );
    assert!(fake.lines("cli").is_empty(), "not hidden behind the CLI's answer");
    assert!(cli.safe_to_destroy(&[4]).await.is_err());
    assert_eq!(fake.lines("starts").len(), 2, "each read tries to connect again");
}
