//! Fault injection for the crash tests: with `OSDKEEPER_CRASH_AFTER=NAME`
//! the daemon aborts right after the effect of that name went through and
//! before its outcome is recorded, as a power cut would. `NAME` is the
//! effect's name (`purge`, `prepare`, `bench-write`), or the kind and the
//! name (`deployment:start`) where two kinds share one.

use crate::domain::operation::{crash_named, Kind};

/// Aborts here if the crash tests asked for it after this effect.
pub fn point(kind: Kind, effect: &str) {
    static CRASH_AFTER: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    let armed = CRASH_AFTER.get_or_init(|| std::env::var("OSDKEEPER_CRASH_AFTER").ok().filter(|v| !v.is_empty()));
    if armed.as_deref().is_some_and(|a| crash_named(a, kind, effect)) {
        eprintln!("OSDKEEPER_CRASH_AFTER={effect}: aborting after the {effect} step, as a crash would");
        std::process::abort();
    }
}
