//! The cluster session: one long-lived helper process (`session.py`) that
//! stays connected to the cluster through Ceph's Python binding
//! (`python3-rados`, installed with ceph-common: the `ceph` CLI is built on
//! it) and answers the reads of `reads.rs` as JSON lines. A read through it
//! costs a round trip to the monitors or the manager, about a millisecond on
//! the sandbox, where a `ceph` CLI start costs half a second or more; the
//! removal worker reads the cluster every round (BENCHMARKS.md).
//!
//! It connects as the CLI does (the same conf, cephx name and keyring, so
//! the same caps), and its answers become the CLI's exit code, stdout and
//! stderr, so that callers read them and word errors exactly as before.
//! One command at a time. A command not answered within the timeout ends
//! the helper, and so does an answer that makes no sense; the next read
//! starts a new one. Where the binding cannot be loaded (no python, no rados
//! module) the session says so once and the CLI serves every read.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use serde::Deserialize;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::sync::Mutex;

use super::cli::Output;
use super::reads::Target;
use super::CephError;

const SCRIPT: &str = include_str!("session.py");

/// Where the cluster is and who the daemon is on it: the CLI's own options.
pub(super) struct Connection<'a> {
    pub conf: Option<&'a Path>,
    pub name: Option<&'a str>,
    pub keyring: Option<&'a Path>,
    pub timeout: Duration,
}

pub struct Session {
    python: String,
    state: Mutex<State>,
}

enum State {
    Idle,
    Running(Box<Helper>),
    /// No binding here: the CLI serves the reads from now on.
    Unavailable,
}

struct Helper {
    /// Held for its `kill_on_drop`: dropping the helper ends the process.
    _child: Child,
    stdin: ChildStdin,
    lines: Lines<BufReader<ChildStdout>>,
    next_id: u64,
}

/// Why a helper did not start.
enum NotStarted {
    Unavailable(String),
    Failed(CephError),
}

#[derive(Deserialize)]
struct Hello {
    ready: bool,
    unavailable: Option<String>,
    errno: Option<i32>,
    error: Option<String>,
}

#[derive(Deserialize)]
struct Reply {
    id: u64,
    rc: Option<i32>,
    #[serde(default)]
    out: String,
    #[serde(default)]
    outs: String,
    errno: Option<i32>,
    error: Option<String>,
}

impl Session {
    /// A session run by `python` (the interpreter with Ceph's binding,
    /// `/usr/bin/python3` where the distribution's packages put it).
    pub fn new(python: String) -> Session {
        Session { python, state: Mutex::new(State::Idle) }
    }

    /// `command` (the CLI words in `label`) through the session; `Ok(None)`
    /// when there is no session here and the CLI must run it.
    pub(super) async fn command(
        &self,
        to: &Connection<'_>,
        target: Target,
        command: &Value,
        label: &str,
    ) -> Result<Option<Output>, CephError> {
        let mut state = self.state.lock().await;
        // A helper that answered before may have died since (killed,
        // crashed): a read is safe to send again, once, to a new one.
        let mut tries = if matches!(*state, State::Running(_)) { 2 } else { 1 };
        loop {
            tries -= 1;
            match &*state {
                State::Unavailable => return Ok(None),
                State::Running(_) => {}
                State::Idle => match self.start(to, label).await {
                    Ok(helper) => *state = State::Running(Box::new(helper)),
                    Err(NotStarted::Unavailable(why)) => {
                        tracing::warn!(
                            "no cluster session ({why}); every read runs the ceph CLI (slower: a process per read)"
                        );
                        *state = State::Unavailable;
                        return Ok(None);
                    }
                    Err(NotStarted::Failed(e)) => return Err(e),
                },
            }
            let State::Running(helper) = &mut *state else { unreachable!("started above") };
            match tokio::time::timeout(bound(to.timeout), helper.ask(target, command)).await {
                Ok(Ok(out)) => return Ok(Some(out)),
                Ok(Err(why)) => {
                    *state = State::Idle;
                    if tries == 0 {
                        let message = format!("the cluster session {why}");
                        return Err(CephError::Spawn { bin: self.python.clone(), message });
                    }
                    tracing::warn!("the cluster session {why}; starting another");
                }
                Err(_) => {
                    // Dropping the helper kills it: a late answer cannot be taken for the next one's.
                    *state = State::Idle;
                    return Err(CephError::Timeout { command: label.to_string(), seconds: to.timeout.as_secs() });
                }
            }
        }
    }

    async fn start(&self, to: &Connection<'_>, label: &str) -> Result<Helper, NotStarted> {
        let text = |p: Option<&Path>| p.map(|p| p.display().to_string()).unwrap_or_default();
        let mut cmd = Command::new(&self.python);
        cmd.arg("-c").arg(SCRIPT);
        cmd.args([text(to.conf), to.name.unwrap_or_default().to_string(), text(to.keyring)]);
        cmd.arg(to.timeout.as_secs().max(1).to_string());
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).kill_on_drop(true);
        let mut child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(NotStarted::Unavailable(format!("{} not found", self.python)))
            }
            Err(e) => {
                return Err(NotStarted::Failed(CephError::Spawn { bin: self.python.clone(), message: e.to_string() }))
            }
        };
        let (Some(stdin), Some(stdout), Some(stderr)) = (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            unreachable!("all three are piped above")
        };
        // librados's own complaints and a Python traceback end up here.
        tokio::spawn(async move {
            let mut lines = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                tracing::warn!("cluster session: {line}");
            }
        });
        let mut helper = Helper { _child: child, stdin, lines: BufReader::new(stdout).lines(), next_id: 0 };
        let failed = |message: String| NotStarted::Failed(CephError::Spawn { bin: self.python.clone(), message });
        let hello = match tokio::time::timeout(bound(to.timeout), helper.lines.next_line()).await {
            Err(_) => {
                let seconds = to.timeout.as_secs();
                return Err(NotStarted::Failed(CephError::Timeout { command: label.to_string(), seconds }));
            }
            Ok(Err(e)) => return Err(failed(format!("cannot read the cluster session: {e}"))),
            Ok(Ok(None)) => return Err(failed("the cluster session ended before it connected".into())),
            Ok(Ok(Some(line))) => serde_json::from_str::<Hello>(&line)
                .map_err(|e| failed(format!("the cluster session said something unreadable: {e}: {line}")))?,
        };
        match hello {
            Hello { ready: true, .. } => Ok(helper),
            Hello { unavailable: Some(why), .. } => Err(NotStarted::Unavailable(why)),
            // As the CLI words it: its exit code is the errno, its message the binding's.
            Hello { errno, error, .. } => Err(NotStarted::Failed(CephError::Command {
                command: label.to_string(),
                code: errno.unwrap_or(1),
                message: error.unwrap_or_default(),
            })),
        }
    }
}

/// The CLI's bound: its own timeout, and a few seconds for the process.
fn bound(timeout: Duration) -> Duration {
    timeout + Duration::from_secs(5)
}

impl Helper {
    /// One exchange; `Err` says what went wrong with the helper itself.
    async fn ask(&mut self, target: Target, command: &Value) -> Result<Output, String> {
        self.next_id += 1;
        let id = self.next_id;
        let target = match target {
            Target::Mon => "mon",
            Target::Mgr => "mgr",
        };
        let line = json!({"id": id, "target": target, "cmd": command}).to_string() + "\n";
        self.stdin.write_all(line.as_bytes()).await.map_err(|e| format!("cannot be written to: {e}"))?;
        self.stdin.flush().await.map_err(|e| format!("cannot be written to: {e}"))?;
        let answer = match self.lines.next_line().await {
            Ok(Some(a)) => a,
            Ok(None) => return Err("ended without answering".into()),
            Err(e) => return Err(format!("cannot be read: {e}")),
        };
        let reply: Reply = serde_json::from_str(&answer).map_err(|e| format!("answered unreadably ({e}): {answer}"))?;
        if reply.id != id {
            return Err(format!("answered request {} when asked {id}", reply.id));
        }
        Ok(match (reply.rc, reply.error) {
            // The CLI exits with the errno and prints `outs` on stderr.
            (Some(rc), _) => Output { code: rc.abs(), stdout: reply.out, stderr: reply.outs },
            (None, error) => {
                Output { code: reply.errno.unwrap_or(1), stdout: String::new(), stderr: error.unwrap_or_default() }
            }
        })
    }
}
