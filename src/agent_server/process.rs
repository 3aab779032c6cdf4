//! Running the host's tools (ceph-volume, lsblk, blkid, pvs): bounded time,
//! bounded output, and on timeout the whole process group is killed, since
//! ceph-volume leaves children (lvcreate, ceph-osd --mkfs) behind otherwise.

use std::ffi::OsStr;
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt};

/// A command that ran to its end.
#[derive(Debug)]
pub struct Finished {
    pub status: ExitStatus,
    pub stdout: Captured,
    pub stderr: Captured,
}

impl Finished {
    /// The exit code, or 128 + the signal for a killed process (the shell's
    /// convention), so that callers always have a number.
    pub fn exit_code(&self) -> i32 {
        use std::os::unix::process::ExitStatusExt;
        self.status.code().or_else(|| self.status.signal().map(|s| 128 + s)).unwrap_or(-1)
    }
}

/// Output of one stream, of which at most `limit` bytes were kept.
#[derive(Debug, Default)]
pub struct Captured {
    pub bytes: Vec<u8>,
    /// Bytes that were read but not kept.
    pub dropped: u64,
}

impl Captured {
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.bytes).into_owned()
    }

    /// The last line that says something, for short error messages.
    pub fn last_line(&self) -> String {
        let text = self.text();
        text.lines().rev().map(str::trim).find(|l| !l.is_empty()).unwrap_or("").chars().take(300).collect()
    }
}

/// Which end of a long output to keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep {
    /// For reports that must be whole (JSON): the first bytes.
    Head,
    /// For logs: the last bytes, where errors are.
    Tail,
}

#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub timeout: Duration,
    pub max_output: usize,
    pub keep: Keep,
}

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("{program} is not installed (not found in PATH)")]
    NotFound { program: String },
    #[error("could not start {program}: {source}")]
    Spawn { program: String, source: std::io::Error },
    #[error("{program} did not finish within {} s and was killed{}", .after.as_secs(), tail_suffix(.stderr_tail))]
    TimedOut { program: String, after: Duration, stderr_tail: String },
    #[error("could not read the output of {program}: {source}")]
    Io { program: String, source: std::io::Error },
}

fn tail_suffix(tail: &str) -> String {
    if tail.is_empty() {
        String::new()
    } else {
        format!(" (last stderr line: {tail})")
    }
}

/// A display name for error messages: the file name of the program.
pub fn program_name(program: &OsStr) -> String {
    Path::new(program).file_name().unwrap_or(program).to_string_lossy().into_owned()
}

/// ETXTBSY: a program that was just written can still be open for writing
/// in a child another thread forked before that child exec'd; it clears as
/// soon as that child execs, so a few short retries are enough.
const TEXT_FILE_BUSY: i32 = 26;

async fn spawn_retrying(cmd: &mut tokio::process::Command) -> std::io::Result<tokio::process::Child> {
    let mut attempt = 0;
    loop {
        match cmd.spawn() {
            Err(e) if e.raw_os_error() == Some(TEXT_FILE_BUSY) && attempt < 20 => {
                attempt += 1;
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            }
            other => return other,
        }
    }
}

/// Runs `cmd` to its end or until the timeout. stdin is closed; the child
/// gets its own process group, killed as a whole on timeout.
pub async fn run(mut cmd: tokio::process::Command, limits: Limits) -> Result<Finished, RunError> {
    let program = program_name(cmd.as_std().get_program());
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).process_group(0);
    let mut child = spawn_retrying(&mut cmd).await.map_err(|source| match source.kind() {
        std::io::ErrorKind::NotFound => RunError::NotFound { program: program.clone() },
        _ => RunError::Spawn { program: program.clone(), source },
    })?;
    let pid = child.id();
    let (Some(out), Some(err)) = (child.stdout.take(), child.stderr.take()) else {
        return Err(RunError::Io { program, source: std::io::Error::other("no pipes to the child") });
    };
    let stdout = std::sync::Mutex::new(Captured::default());
    let stderr = std::sync::Mutex::new(Captured::default());
    let work = async {
        let (o, e, status) = tokio::join!(
            capture(out, &stdout, limits.max_output, limits.keep),
            capture(err, &stderr, limits.max_output, Keep::Tail),
            child.wait()
        );
        o.and(e).and(status)
    };
    let outcome = tokio::time::timeout(limits.timeout, work).await;
    let take = |m: std::sync::Mutex<Captured>| m.into_inner().unwrap_or_else(|p| p.into_inner());
    match outcome {
        Ok(Ok(status)) => Ok(Finished { status, stdout: take(stdout), stderr: take(stderr) }),
        Ok(Err(source)) => Err(RunError::Io { program, source }),
        Err(_) => {
            kill_group(pid).await;
            // Reap the leader so no zombie is left; it is normally gone already
            // (its group was killed), which is what an error here means.
            if let Err(e) = child.kill().await {
                tracing::debug!("reaping {program}: {e}");
            }
            Err(RunError::TimedOut { program, after: limits.timeout, stderr_tail: take(stderr).last_line() })
        }
    }
}

/// SIGKILL to the child's process group. `kill(1)` does it because this
/// crate has no unsafe code and no libc binding.
async fn kill_group(pid: Option<u32>) {
    let Some(pid) = pid else { return };
    let status = tokio::process::Command::new("kill")
        .args(["-s", "KILL", "--", &format!("-{pid}")])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .await;
    if !status.is_ok_and(|s| s.success()) {
        tracing::warn!(pid, "could not kill the process group of a timed-out command; killing only its leader");
    }
}

async fn capture(
    mut r: impl AsyncRead + Unpin,
    into: &std::sync::Mutex<Captured>,
    limit: usize,
    keep: Keep,
) -> std::io::Result<()> {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = r.read(&mut buf).await?;
        if n == 0 {
            return Ok(());
        }
        let mut c = into.lock().unwrap_or_else(|p| p.into_inner());
        c.bytes.extend_from_slice(&buf[..n]);
        if c.bytes.len() <= limit {
            continue;
        }
        let excess = c.bytes.len() - limit;
        match keep {
            Keep::Head => c.bytes.truncate(limit),
            // Drains in large steps so that a chatty child costs amortized
            // linear time.
            Keep::Tail if c.bytes.len() >= 2 * limit.max(1) => {
                c.bytes.drain(..excess);
            }
            Keep::Tail => continue,
        }
        c.dropped += excess as u64;
    }
}

/// The command as a shell would run it, environment first.
pub fn command_line(program: &str, args: &[String], env: &[(String, String)]) -> String {
    let mut words: Vec<String> = env.iter().map(|(k, v)| format!("{k}={}", quote(v))).collect();
    words.push(quote(program));
    words.extend(args.iter().map(|a| quote(a)));
    words.join(" ")
}

fn quote(word: &str) -> String {
    let plain = !word.is_empty() && word.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> tokio::process::Command {
        let mut c = tokio::process::Command::new("sh");
        c.args(["-c", script]);
        c
    }

    fn limits(ms: u64, max: usize, keep: Keep) -> Limits {
        Limits { timeout: Duration::from_millis(ms), max_output: max, keep }
    }

    #[tokio::test]
    async fn captures_output_and_exit_code() {
        let f = run(sh("echo out; echo err >&2; exit 3"), limits(5000, 1024, Keep::Head)).await.unwrap();
        assert_eq!(f.exit_code(), 3);
        assert_eq!(f.stdout.text(), "out\n");
        assert_eq!(f.stderr.last_line(), "err");
    }

    #[tokio::test]
    async fn keeps_the_requested_end() {
        let script = "i=0; while [ $i -lt 2000 ]; do echo line$i; i=$((i+1)); done";
        let head = run(sh(script), limits(5000, 100, Keep::Head)).await.unwrap();
        assert!(head.stdout.text().starts_with("line0\n"));
        assert_eq!(head.stdout.bytes.len(), 100);
        let tail = run(sh(script), limits(5000, 100, Keep::Tail)).await.unwrap();
        assert!(tail.stdout.text().ends_with("line1999\n"));
        assert!(tail.stdout.bytes.len() <= 200 && tail.stdout.dropped > 0);
    }

    #[tokio::test]
    async fn kills_the_whole_group_on_timeout() {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("grandchild-survived");
        // The grandchild would create the marker after the timeout.
        let script = format!("echo starting >&2; (sleep 1; touch {}) & sleep 30", marker.display());
        let started = std::time::Instant::now();
        let e = run(sh(&script), limits(300, 1024, Keep::Tail)).await.unwrap_err();
        assert!(matches!(&e, RunError::TimedOut { stderr_tail, .. } if stderr_tail == "starting"), "{e}");
        assert!(started.elapsed() < Duration::from_secs(5));
        tokio::time::sleep(Duration::from_millis(1500)).await;
        assert!(!marker.exists(), "the grandchild outlived the timeout");
    }

    #[tokio::test]
    async fn missing_program() {
        let e = run(tokio::process::Command::new("/nonexistent/ceph-volume"), limits(1000, 10, Keep::Head))
            .await
            .unwrap_err();
        assert!(matches!(e, RunError::NotFound { .. }), "{e}");
        assert_eq!(e.to_string(), "ceph-volume is not installed (not found in PATH)");
    }
}
