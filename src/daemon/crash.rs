//! Fault injection for the crash tests: with `OSDKEEPER_CRASH_AFTER=NAME`
//! the daemon aborts right after the effect of that name succeeded and
//! before it recorded the outcome, as a power cut would.

pub fn armed(effect: &str) -> bool {
    static CRASH_AFTER: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    let name = CRASH_AFTER.get_or_init(|| std::env::var("OSDKEEPER_CRASH_AFTER").ok().filter(|v| !v.is_empty()));
    name.as_deref() == Some(effect)
}
