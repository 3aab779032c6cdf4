//! Every OSD with its host, devices, weight, state and removal, filtered
//! and paged, from the read model (`read_model/osds.rs`).

use crate::daemon::{Daemon, DaemonError};
use crate::wire::api::osds::{OsdQuery, OsdRow};
use crate::wire::api::Page;

impl Daemon {
    pub async fn osds(&self, q: &OsdQuery) -> Result<Page<OsdRow>, DaemonError> {
        Ok(self.osds_view().await?.snapshot.value.page(q))
    }
}
