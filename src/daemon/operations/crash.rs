//! Fault injection for the crash tests: with `OSDKEEPER_CRASH_AFTER=NAME`
//! the daemon aborts right after the effect of that name went through and
//! before its outcome is recorded, as a power cut would. `NAME` is the
//! effect's name (`purge`, `prepare`, `bench-write`), or the kind and the
//! name (`deployment:start`) where two kinds share one.

use crate::domain::operation::{crash_named, Kind};

#[cfg(test)]
tokio::task_local! {
    /// The unit tests' crash: a panic of the task driving the round, right
    /// where the process would abort, so that the test goes on with the
    /// store and the cluster as a power cut would leave them.
    pub static CRASH_AFTER_IN_TEST: String;
}

/// Aborts here if the crash tests asked for it after this effect.
pub fn point(kind: Kind, effect: &str) {
    #[cfg(test)]
    if CRASH_AFTER_IN_TEST.try_with(|armed| crash_named(armed, kind, effect)).unwrap_or(false) {
        panic!("crash injected after {effect}");
    }
    static CRASH_AFTER: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    let armed = CRASH_AFTER.get_or_init(|| std::env::var("OSDKEEPER_CRASH_AFTER").ok().filter(|v| !v.is_empty()));
    if armed.as_deref().is_some_and(|a| crash_named(a, kind, effect)) {
        eprintln!("OSDKEEPER_CRASH_AFTER={effect}: aborting after the {effect} step, as a crash would");
        std::process::abort();
    }
}
