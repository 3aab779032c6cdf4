//! `osdkeeper osd replace ID... --with HOST:DEV[,DEV...] [--in-place]
//! [--accept-single-copy] [--accept-inactive] [--method raw|lvm] [--encrypted]
//! [--dry-run]`, and `swap ls`,
//! `swap status N`, `swap stop N` (docs/cli.md, docs/design/swap.md).

use std::process::ExitCode;

use super::out;
use super::remote::{parse_ids, Remote};
use crate::client::ClientError;
use crate::domain::spec::Method;
use crate::domain::swap::Way;
use crate::render::swaps::{preview_text, swap_table};
use crate::wire::api::swaps::{SwapBody, SwapQuery};

/// `osd replace`'s arguments.
#[derive(clap::Args, Debug)]
pub struct ReplaceArgs {
    /// The OSDs to take out (N or osd.N), all on one host.
    #[arg(required = true, num_args = 1..)]
    pub ids: Vec<String>,
    /// The new disks, on the OSDs' host: HOST:DEV[,DEV...]. With --in-place, the slot the new
    /// disk goes in (the old disk's when not given).
    #[arg(long = "with", value_name = "HOST:DEV[,DEV...]")]
    pub with: Option<String>,
    /// No free bay: stop the OSD under noout, destroy it keeping its id, and rebuild its data
    /// on the new disk from the other copies (PGs run a copy short meanwhile).
    #[arg(long)]
    pub in_place: bool,
    /// In place: accept PGs left with one copy while the new disk backfills.
    #[arg(long)]
    pub accept_single_copy: bool,
    /// In place: accept PGs below their pool's min_size (client I/O to them stops) meanwhile.
    #[arg(long)]
    pub accept_inactive: bool,
    /// How the new OSDs are made, `raw` or `lvm`: as the old OSDs were when not given.
    #[arg(long, value_name = "raw|lvm")]
    pub method: Option<String>,
    /// Encrypt the new OSDs (dm-crypt), as a spec's `encrypted: true`.
    #[arg(long)]
    pub encrypted: bool,
    /// Show what each way costs (bytes, receivers, time, degraded PGs) and change nothing.
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(clap::Subcommand, Debug)]
pub enum SwapCmd {
    /// The swaps running, and the latest finished ones.
    Ls {
        /// How many finished swaps to show.
        #[arg(long, default_value_t = 20)]
        history: i64,
    },
    /// One swap with the actions it logged, each with its outcome.
    Status { swap_id: i64 },
    /// Stop a swap: what was handed over stays where it is, what was set is put back.
    Stop { swap_id: i64 },
}

/// `HOST:DEV[,DEV...]`.
fn parse_with(with: &str) -> Result<(String, Vec<String>), ClientError> {
    let usage = || ClientError::Usage(format!("--with {with}: give HOST:DEV[,DEV...], e.g. f5-422-03:/dev/sdg"));
    let (host, devs) = with.split_once(':').ok_or_else(usage)?;
    let devs: Vec<String> = devs.split(',').filter(|d| !d.is_empty()).map(str::to_string).collect();
    if host.is_empty() || devs.is_empty() {
        return Err(usage());
    }
    Ok((host.to_string(), devs))
}

pub async fn replace(r: &Remote, a: ReplaceArgs) -> Result<ExitCode, ClientError> {
    let c = r.client()?;
    let (host, devices) = match &a.with {
        Some(w) => {
            let (h, d) = parse_with(w)?;
            (Some(h), d)
        }
        None if a.in_place => (None, Vec::new()),
        None => return Err(ClientError::Usage("osd replace needs --with HOST:DEV (or --in-place)".into())),
    };
    let method = match a.method.as_deref() {
        None => None,
        Some(m) => Some(Method::parse(m).ok_or_else(|| ClientError::Usage(format!("--method {m}: give raw or lvm")))?),
    };
    let body = SwapBody {
        osds: parse_ids(&a.ids)?,
        host,
        devices,
        way: if a.in_place { Way::InPlace } else { Way::FreeBay },
        accept_single_copy: a.accept_single_copy,
        accept_inactive: a.accept_inactive,
        method,
        encrypted: a.encrypted,
    };
    if a.dry_run {
        out::answer(r.format, &c.preview_swap(&body).await?, preview_text);
        return Ok(ExitCode::SUCCESS);
    }
    let status = c.schedule_swap(&body).await?;
    if !out::structured(r.format, &status) {
        out::line(format!("Scheduled swap {}; follow with `osdkeeper swap status {}`", status.swap_id, status.swap_id));
    }
    Ok(ExitCode::SUCCESS)
}

pub async fn run(r: &Remote, cmd: SwapCmd) -> Result<ExitCode, ClientError> {
    let c = r.client()?;
    match cmd {
        SwapCmd::Ls { history } => {
            let rows = c.swaps(&SwapQuery { history: Some(history) }).await?;
            out::answer(r.format, &rows, |rows| swap_table(rows));
        }
        SwapCmd::Status { swap_id } => {
            let detail = c.swap(swap_id).await?;
            out::answer(r.format, &detail, |d| {
                let mut text = swap_table(std::slice::from_ref(&d.status));
                for a in &d.actions {
                    text.push_str(&format!(
                        "  {}: {} ({})\n",
                        a.effect,
                        a.detail,
                        a.outcome.as_deref().unwrap_or("under way")
                    ));
                }
                text
            });
        }
        SwapCmd::Stop { swap_id } => {
            let status = c.stop_swap(swap_id).await?;
            if !out::structured(r.format, &status) {
                out::line(format!("Stopping swap {swap_id}: what was handed over stays, what was set is put back"));
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    #[test]
    fn with_names_a_host_and_its_disks() {
        assert_eq!(
            super::parse_with("f5-422-03:/dev/sdg,/dev/sdh").unwrap(),
            ("f5-422-03".into(), vec!["/dev/sdg".into(), "/dev/sdh".into()])
        );
        assert!(super::parse_with("/dev/sdg").is_err());
        assert!(super::parse_with("f5-422-03:").is_err());
    }
}
