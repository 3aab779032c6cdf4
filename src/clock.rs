//! Wall-clock time for the daemon, in milliseconds since the Unix epoch
//! (what the database stores). The pure core never reads the clock.

pub fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

/// "2023-03-17 15:54:50" (UTC), as cephadm prints times.
pub fn format_ms(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms).map(|t| t.format("%Y-%m-%d %H:%M:%S").to_string()).unwrap_or_default()
}

/// cephadm's age format: "12s ago", "9m ago", "3h ago", "2d ago".
pub fn format_age(ms: i64) -> String {
    let s = (ms / 1000).max(0);
    let (n, unit) = match s {
        s if s < 120 => (s, "s"),
        s if s < 7200 => (s / 60, "m"),
        s if s < 172_800 => (s / 3600, "h"),
        s if s < 1_209_600 => (s / 86400, "d"),
        s if s < 5_184_000 => (s / 604_800, "w"),
        s if s < 63_072_000 => (s / 2_592_000, "M"),
        s => (s / 31_536_000, "y"),
    };
    format!("{n}{unit} ago")
}

#[cfg(test)]
mod tests {
    #[test]
    fn ages() {
        assert_eq!(super::format_age(5_000), "5s ago");
        assert_eq!(super::format_age(540_000), "9m ago");
        assert_eq!(super::format_age(3 * 3_600_000), "3h ago");
    }
}
