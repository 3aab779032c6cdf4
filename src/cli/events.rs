//! `osdkeeper events`: the daemon's event log.

use std::process::ExitCode;

use super::remote::{print_json, Remote};
use super::Format;
use crate::client::ClientError;
use crate::render::specs::event_lines;
use crate::wire::api::events::EventQuery;

#[derive(clap::Args, Debug)]
pub struct EventsArgs {
    #[arg(long, default_value_t = 50)]
    pub limit: i64,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

pub async fn run(r: &Remote, args: EventsArgs) -> Result<ExitCode, ClientError> {
    let events = r.client()?.events(&EventQuery { after: None, limit: Some(args.limit) }).await?;
    match args.format {
        Format::Json => print_json(&events),
        Format::Table => print!("{}", event_lines(&events)),
    }
    Ok(ExitCode::SUCCESS)
}
