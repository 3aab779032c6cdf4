//! Who asked: the name of the token behind the request being served, for
//! the events the request records. The API sets it around each request it
//! lets through; `Daemon::event` stamps it on every event recorded while
//! serving that request. It travels with the request's task, so it is not
//! threaded through every operation's arguments, and work the daemon does
//! on its own (workers, the poller) records no name.

use std::future::Future;
use std::sync::Arc;

tokio::task_local! {
    static ACTOR: Arc<str>;
}

/// Runs `f` (serving one request) on behalf of the token `name`.
pub async fn acting_as<F: Future>(name: &str, f: F) -> F::Output {
    ACTOR.scope(Arc::from(name), f).await
}

/// The token on whose behalf the current task runs, if any.
pub fn actor() -> Option<String> {
    ACTOR.try_with(|a| a.to_string()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_name_holds_inside_the_scope_only() {
        assert_eq!(actor(), None);
        let inside = acting_as("ops", async {
            tokio::task::yield_now().await;
            actor()
        })
        .await;
        assert_eq!(inside.as_deref(), Some("ops"));
        assert_eq!(actor(), None);
    }
}
