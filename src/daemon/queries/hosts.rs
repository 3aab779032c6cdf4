//! Hosts, filtered and paged.

use crate::daemon::{Daemon, DaemonError};
use crate::wire::api::hosts::{Host, HostQuery};
use crate::wire::api::Page;

impl Daemon {
    pub async fn hosts(&self, q: &HostQuery) -> Result<Page<Host>, DaemonError> {
        let mut hosts = self.store.hosts().await?;
        if let Some(down) = q.unreachable {
            hosts.retain(|h| h.unreachable_since.is_some() == down);
        }
        Ok(Page::of(hosts, q.offset, q.limit))
    }
}
