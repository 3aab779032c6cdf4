//! Logging: tracing to stderr, human-readable or JSON lines, level from
//! RUST_LOG (default `info`).

use crate::config::LogFormat;

pub fn init(format: LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,sqlx=warn,tower_http=info"));
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr);
    let installed = match format {
        LogFormat::Human => builder.try_init(),
        LogFormat::Json => builder.json().flatten_event(true).try_init(),
    };
    // Only a second init fails (tests start several daemons in one process);
    // the first logger stays, which is what they want.
    if let Err(e) = installed {
        eprintln!("osdkeeper: logging was set up already: {e}");
    }
}
