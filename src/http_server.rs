//! Serving HTTP and HTTPS, for the daemon's API and the agent alike, with
//! the bounds a server reachable from the network needs: a client that
//! opens connections and sends nothing, sends a request's head a byte at a
//! time, or never finishes its body must not hold a connection, a
//! descriptor and a task for ever.
//!
//! * **Head** (`header_read_timeout`): a request's head must arrive whole
//!   within this time of the connection being ready for it: opened (the
//!   TLS handshake included), or its previous answer sent. hyper starts
//!   that clock when it waits for a head, so it is also how long a
//!   kept-alive connection may stay idle between requests: one timer, two
//!   names for it would be one too many.
//! * **Body** (`request_timeout`): once its head is read, a request's body
//!   must arrive whole within this time (`DeadlineBody`). A request thus
//!   arrives within the two together. How long answering it takes is each
//!   operation's own bound (an agent's ceph-volume may run for half an
//!   hour), not the server's.
//! * **Connections** (`max_connections`): served at once; the next ones
//!   wait in the kernel's accept queue until one closes. It stays below
//!   the process's descriptor limit (the units' `LimitNOFILE`).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::either::Either;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// How long a client may take and how many may be served at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServerLimits {
    pub header_read_timeout: Duration,
    pub request_timeout: Duration,
    pub max_connections: usize,
}

/// A head has a few hundred bytes: ten seconds is ample on any link a
/// cluster is managed over, and short enough that a client holding
/// connections open must keep opening new ones.
pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// The largest body (the daemon's 1 MiB spec file) at 20 KB/s.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

impl ServerLimits {
    /// The defaults with at most `max_connections` served at once.
    pub fn with_max_connections(max_connections: usize) -> ServerLimits {
        ServerLimits {
            header_read_timeout: DEFAULT_HEADER_READ_TIMEOUT,
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            max_connections,
        }
    }
}

/// A connection as accepted: plain TCP, or the decrypted side of TLS.
pub type Stream = Either<TcpStream, tokio_rustls::server::TlsStream<TcpStream>>;

/// Serves `app` on `listener` (over TLS when `tls` is given) within
/// `limits` until `shutdown` completes; requests in flight finish first.
/// Each connection is passed through `wrap` before hyper reads it (the
/// daemon gives hyper's own bodiless error answers a JSON body there).
pub async fn serve<W, F>(
    listener: TcpListener,
    app: Router,
    tls: Option<Arc<rustls::ServerConfig>>,
    limits: ServerLimits,
    shutdown: impl Future<Output = ()> + Send + 'static,
    wrap: F,
) -> std::io::Result<()>
where
    F: Fn(Stream) -> W + Clone + Send + Sync + 'static,
    W: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let app = app.layer(axum::middleware::map_request_with_state(limits.request_timeout, with_body_deadline));
    let tls = tls.map(tokio_rustls::TlsAcceptor::from);
    let slots = Arc::new(tokio::sync::Semaphore::new(limits.max_connections.max(1)));
    let stop = CancellationToken::new();
    let connections = TaskTracker::new();
    tokio::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            biased;
            () = &mut shutdown => break,
            accepted = accept_within_slots(&listener, &slots) => accepted,
        };
        let Some((tcp, slot)) = accepted else { continue };
        let connection = Connection { app: app.clone(), tls: tls.clone(), limits, wrap: wrap.clone() };
        let stop = stop.clone();
        connections.spawn(async move {
            connection.serve(tcp, stop).await;
            drop(slot);
        });
    }
    drop(listener);
    stop.cancel();
    connections.close();
    connections.wait().await;
    Ok(())
}

/// The next connection once a slot is free; None after an accept error
/// (logged; after one that is not the client's, such as running out of
/// descriptors, a second's pause first, as the accept would fail again).
async fn accept_within_slots(
    listener: &TcpListener,
    slots: &Arc<tokio::sync::Semaphore>,
) -> Option<(TcpStream, tokio::sync::OwnedSemaphorePermit)> {
    let slot = slots.clone().acquire_owned().await.expect("the semaphore is never closed");
    match listener.accept().await {
        Ok((tcp, _)) => Some((tcp, slot)),
        Err(e) if is_the_clients(&e) => {
            tracing::debug!("a connection failed as it was accepted: {e}");
            None
        }
        Err(e) => {
            tracing::error!("cannot accept connections: {e}");
            tokio::time::sleep(Duration::from_secs(1)).await;
            None
        }
    }
}

fn is_the_clients(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::*;
    matches!(e.kind(), ConnectionRefused | ConnectionAborted | ConnectionReset)
}

/// What serving one connection needs.
struct Connection<F> {
    app: Router,
    tls: Option<tokio_rustls::TlsAcceptor>,
    limits: ServerLimits,
    wrap: F,
}

impl<W, F> Connection<F>
where
    F: Fn(Stream) -> W,
    W: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    async fn serve(self, tcp: TcpStream, stop: CancellationToken) {
        let stream = match &self.tls {
            None => Either::Left(tcp),
            // The handshake counts against the first head's time.
            Some(tls) => match tokio::time::timeout(self.limits.header_read_timeout, tls.accept(tcp)).await {
                Ok(Ok(stream)) => Either::Right(stream),
                Ok(Err(e)) => {
                    tracing::debug!("TLS handshake failed: {e}");
                    return;
                }
                Err(_) => {
                    tracing::debug!("TLS handshake not done within the header read timeout");
                    return;
                }
            },
        };
        let io = TokioIo::new((self.wrap)(stream));
        let mut http = hyper::server::conn::http1::Builder::new();
        http.timer(TokioTimer::new()).header_read_timeout(self.limits.header_read_timeout);
        let connection = http.serve_connection(io, TowerToHyperService::new(self.app));
        tokio::pin!(connection);
        let served = tokio::select! {
            served = connection.as_mut() => served,
            () = stop.cancelled() => {
                connection.as_mut().graceful_shutdown();
                connection.await
            }
        };
        if let Err(e) = served {
            // A client gone, a head too slow or malformed: the client's doing.
            tracing::debug!("connection ended: {e}");
        }
    }
}

/// Middleware: a request's body must arrive within `after` of its head.
async fn with_body_deadline(axum::extract::State(after): axum::extract::State<Duration>, request: Request) -> Request {
    use http_body::Body as _;
    if request.body().is_end_stream() {
        return request;
    }
    request.map(|body| Body::new(DeadlineBody { body, deadline: Box::pin(tokio::time::sleep(after)), after }))
}

/// A request body that fails once its deadline passes before its end.
struct DeadlineBody {
    body: Body,
    deadline: Pin<Box<tokio::time::Sleep>>,
    after: Duration,
}

/// Why a body was cut off; axum's extractors answer 400 with it.
#[derive(Debug, thiserror::Error)]
#[error("the request's body did not arrive within {} s of its head", .0.as_secs())]
struct BodyTooSlow(Duration);

impl http_body::Body for DeadlineBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, axum::Error>>> {
        let this = &mut *self;
        if let Poll::Ready(frame) = Pin::new(&mut this.body).poll_frame(cx) {
            return Poll::Ready(frame);
        }
        match this.deadline.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Some(Err(axum::Error::new(BodyTooSlow(this.after))))),
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}
