//! Everything a command prints on stdout goes through here. A reader that
//! went away (`osdkeeper osd ls | head -1`) is not an error: the command
//! ends at once with status 0, as `ceph` and coreutils do, where `println!`
//! would panic with "failed printing to stdout".

use std::io::{ErrorKind, Write};

use serde::Serialize;

use super::{exit, Format};

/// Writes `text` as is.
pub fn print(text: &str) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        if e.kind() == ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("osdkeeper: cannot write the output: {e}");
        std::process::exit(i32::from(exit::UNREADABLE));
    }
}

/// Writes `text` and a newline.
pub fn line(text: impl std::fmt::Display) {
    print(&format!("{text}\n"));
}

/// Writes `v` in a machine format and returns true; returns false for
/// `plain`, whose table the caller renders.
pub fn structured(format: Format, v: &impl Serialize) -> bool {
    let text = match format {
        Format::Plain => return false,
        Format::Json => serde_json::to_string(v),
        Format::JsonPretty => serde_json::to_string_pretty(v),
        Format::Yaml => serde_json::to_value(v).map(|v| crate::render::yaml::to_yaml(&v)),
    };
    match text {
        Ok(text) if format == Format::Yaml => print(&text),
        Ok(text) => line(text),
        Err(e) => eprintln!("osdkeeper: cannot write the answer as {format:?}: {e}"),
    }
    true
}

/// Writes `v` in a machine format, or `plain()` as text.
pub fn answer<T: Serialize>(format: Format, v: &T, plain: impl FnOnce(&T) -> String) {
    if !structured(format, v) {
        print(&plain(v));
    }
}
