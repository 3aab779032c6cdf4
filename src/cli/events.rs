//! `osdkeeper events [--follow] [--host H] [--osd N] [--since 10m]`: the
//! daemon's event log, and following it as `ceph -W cephadm` does.
//!
//! Following polls `/api/v1/events` with the id of the last event shown
//! as the cursor: no event is missed or shown twice across a slow poll or
//! a burst, which the dashboard's lossy stream does not promise.

use std::process::ExitCode;
use std::time::Duration;

use super::out;
use super::remote::{parse_ids, Remote};
use crate::client::ClientError;
use crate::clock::now_ms;
use crate::render::specs::event_lines;
use crate::wire::api::events::EventQuery;

/// How often `--follow` asks for new events.
const FOLLOW_POLL: Duration = Duration::from_secs(1);

#[derive(clap::Args, Debug)]
pub struct EventsArgs {
    /// How many of the latest events to show (then, with --follow, every new one).
    #[arg(long, default_value_t = 50)]
    pub limit: i64,
    /// Keep printing new events as they happen (`ceph -W cephadm`); Ctrl-C ends it.
    #[arg(short = 'f', long, visible_alias = "watch")]
    pub follow: bool,
    /// Only events about this host.
    #[arg(long)]
    pub host: Option<String>,
    /// Only events about this OSD (8 or osd.8).
    #[arg(long)]
    pub osd: Option<String>,
    /// Only events since then: an age (30s, 10m, 2h, 1d) or a time (2023-03-17T15:54:00Z).
    #[arg(long, value_parser = parse_since)]
    pub since: Option<i64>,
}

/// `--since` as ms since the epoch.
fn parse_since(arg: &str) -> Result<i64, String> {
    since_at(arg, now_ms())
}

fn since_at(arg: &str, now: i64) -> Result<i64, String> {
    if let Ok(t) = chrono::DateTime::parse_from_rfc3339(arg) {
        return Ok(t.timestamp_millis());
    }
    let (number, unit) = arg.char_indices().last().map(|(i, c)| (&arg[..i], c)).unwrap_or(("", ' '));
    let unit_ms = match unit {
        's' => 1_000,
        'm' => 60_000,
        'h' => 3_600_000,
        'd' => 86_400_000,
        _ => 0,
    };
    match number.parse::<u32>() {
        Ok(n) if unit_ms > 0 => Ok(now - i64::from(n) * unit_ms),
        _ => Err(format!("{arg:?} is neither an age (30s, 10m, 2h, 1d) nor an RFC 3339 time (2023-03-17T15:54:00Z)")),
    }
}

pub async fn run(r: &Remote, args: EventsArgs) -> Result<ExitCode, ClientError> {
    let osd = match &args.osd {
        Some(id) => parse_ids(std::slice::from_ref(id))?.first().copied(),
        None => None,
    };
    let c = r.client()?;
    let mut q = EventQuery { after: None, limit: Some(args.limit), host: args.host, osd, since: args.since };
    let events = c.events(&q).await?;
    if !args.follow {
        out::answer(r.format, &events, |e| event_lines(e));
        return Ok(ExitCode::SUCCESS);
    }
    // One line (or JSON document) per event, so that `| grep` and `| jq` see each at once.
    let mut last = events.last().map(|e| e.id);
    let mut batch = events;
    loop {
        for e in &batch {
            out::answer(r.format, e, |e| event_lines(std::slice::from_ref(e)));
        }
        tokio::time::sleep(FOLLOW_POLL).await;
        // From the cursor on, oldest first; with no event yet, from the start.
        q.after = Some(last.unwrap_or(0));
        q.limit = Some(1000);
        batch = c.events(&q).await?;
        last = batch.last().map(|e| e.id).or(last);
    }
}

#[cfg(test)]
mod tests {
    use super::since_at;

    #[test]
    fn since_takes_an_age_or_a_time() {
        assert_eq!(since_at("10m", 1_000_000), Ok(400_000));
        assert_eq!(since_at("2h", 10_000_000), Ok(10_000_000 - 7_200_000));
        assert_eq!(since_at("1970-01-01T00:00:05Z", 0), Ok(5_000));
        for bad in ["10", "m", "tenm", "-5m", "", "5é"] {
            assert!(since_at(bad, 0).is_err(), "{bad}");
        }
    }
}
