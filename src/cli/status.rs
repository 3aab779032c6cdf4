//! `osdkeeper status`: whether the daemon runs, whether Ceph answers it,
//! the releases the cluster runs and the daemon's own warnings (`/healthz`,
//! which needs no token).

use std::process::ExitCode;

use super::out;
use super::remote::Remote;
use crate::client::ClientError;
use crate::clock::now_ms;
use crate::render::health::health_text;

pub async fn run(r: &Remote) -> Result<ExitCode, ClientError> {
    let health = r.client()?.health().await?;
    out::answer(r.format, &health, |h| health_text(h, now_ms()));
    Ok(ExitCode::SUCCESS)
}
