//! Logging: tracing to stderr, human-readable or JSON lines, level from
//! RUST_LOG (default `info`). Colour only on a terminal and never with
//! `NO_COLOR` (no-color.org); under systemd (stderr is the journal's
//! stream, `JOURNAL_STREAM`) no timestamps either: journald stamps every
//! line itself and would show `\x1b[2m` for colour codes.

use std::io::IsTerminal;

use crate::config::LogFormat;

/// How the human format looks, decided from where stderr goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Style {
    pub ansi: bool,
    pub timestamps: bool,
}

impl Style {
    pub fn decide(terminal: bool, no_color: bool, journal: bool) -> Style {
        Style { ansi: terminal && !no_color && !journal, timestamps: !journal }
    }

    fn of_stderr() -> Style {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Style::decide(std::io::stderr().is_terminal(), no_color, stderr_is_the_journal())
    }
}

/// systemd sets `JOURNAL_STREAM=DEV:INODE` for the stream it connects to
/// stderr; a child whose stderr went elsewhere inherits the variable, so
/// the device and inode are compared, as systemd's documentation asks.
fn stderr_is_the_journal() -> bool {
    let Some(value) = std::env::var_os("JOURNAL_STREAM") else { return false };
    journal_matches(&value.to_string_lossy(), stderr_id())
}

fn journal_matches(value: &str, stderr: Option<(u64, u64)>) -> bool {
    let Some((dev, ino)) = value.split_once(':') else { return false };
    match (dev.parse::<u64>(), ino.parse::<u64>(), stderr) {
        (Ok(d), Ok(i), Some(id)) => (d, i) == id,
        // Unknown stderr: trust the variable rather than colour the journal.
        (Ok(_), Ok(_), None) => true,
        _ => false,
    }
}

#[cfg(unix)]
fn stderr_id() -> Option<(u64, u64)> {
    use std::os::fd::AsFd;
    use std::os::unix::fs::MetadataExt;
    let fd = std::io::stderr().as_fd().try_clone_to_owned().ok()?;
    let meta = std::fs::File::from(fd).metadata().ok()?;
    Some((meta.dev(), meta.ino()))
}

#[cfg(not(unix))]
fn stderr_id() -> Option<(u64, u64)> {
    None
}

pub fn init(format: LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| {
        tracing_subscriber::EnvFilter::new(format!("info,{},tower_http=info", crate::store::LOG_DIRECTIVES))
    });
    let style = Style::of_stderr();
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).with_ansi(style.ansi);
    let installed = match (format, style.timestamps) {
        (LogFormat::Human, true) => builder.try_init(),
        (LogFormat::Human, false) => builder.without_time().try_init(),
        (LogFormat::Json, _) => builder.json().flatten_event(true).try_init(),
    };
    // Only a second init fails (tests start several daemons in one process);
    // the first logger stays, which is what they want.
    if let Err(e) = installed {
        eprintln!("osdkeeper: logging was set up already: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_only_on_a_terminal_without_no_color() {
        assert_eq!(Style::decide(true, false, false), Style { ansi: true, timestamps: true });
        assert_eq!(Style::decide(false, false, false), Style { ansi: false, timestamps: true }, "a pipe or a file");
        assert_eq!(Style::decide(true, true, false), Style { ansi: false, timestamps: true }, "NO_COLOR");
        assert_eq!(Style::decide(true, false, true), Style { ansi: false, timestamps: false }, "journald");
    }

    #[test]
    fn the_journal_is_recognised_by_device_and_inode() {
        assert!(journal_matches("8:1234", Some((8, 1234))));
        assert!(!journal_matches("8:1234", Some((8, 99))), "stderr redirected away from the journal");
        assert!(!journal_matches("garbage", Some((8, 1234))));
        assert!(journal_matches("8:1234", None));
    }
}
