//! JSON bodies for the errors hyper answers by itself.
//!
//! A request hyper cannot parse (a malformed request line or header: 400; a
//! URI longer than 64 KiB: 414; a head larger than its buffer: 431) never
//! reaches the router: hyper writes a bodiless answer and closes the
//! connection, and it has no hook to change that answer. Every other error
//! of the API is `{"error": ...}`, so the connection is wrapped: a response
//! head with one of these statuses, `content-length: 0` and nothing after it
//! can only be hyper's own (every error of the router has a JSON body), and
//! it is written out with a JSON body instead. Everything else passes
//! through untouched.

use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use crate::wire::api::error::ErrorBody;

pub struct JsonErrors<S> {
    inner: S,
    /// A rewritten answer, and how much of it is written.
    pending: Vec<u8>,
    written: usize,
}

impl<S> JsonErrors<S> {
    /// Wraps one connection (plain, or the decrypted side of TLS).
    pub fn new(inner: S) -> JsonErrors<S> {
        JsonErrors { inner, pending: Vec::new(), written: 0 }
    }
}

impl<S: AsyncWrite + Unpin> JsonErrors<S> {
    fn poll_pending(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while self.written < self.pending.len() {
            let n = ready!(Pin::new(&mut self.inner).poll_write(cx, &self.pending[self.written..]))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            self.written += n;
        }
        self.pending.clear();
        self.written = 0;
        Poll::Ready(Ok(()))
    }

    /// Takes `buf` as written, if it is one of hyper's own answers, and
    /// starts writing its JSON version.
    fn replace(&mut self, cx: &mut Context<'_>, buf: &[u8]) -> Option<Poll<io::Result<usize>>> {
        let json = with_json_body(buf)?;
        self.pending = json;
        self.written = 0;
        Some(match self.poll_pending(cx) {
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            // The rest goes out on the next write, flush or shutdown.
            _ => Poll::Ready(Ok(buf.len())),
        })
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for JsonErrors<S> {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for JsonErrors<S> {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        ready!(this.poll_pending(cx))?;
        if let Some(done) = this.replace(cx, buf) {
            return done;
        }
        Pin::new(&mut this.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        ready!(this.poll_pending(cx))?;
        let mut filled = bufs.iter().filter(|b| !b.is_empty());
        if let (Some(only), None) = (filled.next(), filled.next()) {
            if let Some(done) = this.replace(cx, only) {
                return done;
            }
        }
        Pin::new(&mut this.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_pending(cx))?;
        Pin::new(&mut this.inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_pending(cx))?;
        Pin::new(&mut this.inner).poll_shutdown(cx)
    }
}

/// `head` with a JSON body, if it is a whole bodiless 400, 414 or 431.
fn with_json_body(head: &[u8]) -> Option<Vec<u8>> {
    let text = std::str::from_utf8(head).ok()?;
    let lines = text.strip_suffix("\r\n\r\n")?;
    let mut lines = lines.split("\r\n");
    let status_line = lines.next()?;
    let mut words = status_line.splitn(3, ' ');
    let (version, code) = (words.next()?, words.next()?);
    if !version.starts_with("HTTP/1.") {
        return None;
    }
    let error = match code {
        "400" => "the request cannot be read as HTTP (a malformed request line or header)",
        "414" => "the URI is too long (at most 65534 bytes)",
        "431" => "the request's header fields are too large",
        _ => return None,
    };
    let headers: Vec<&str> = lines.collect();
    let bodiless = headers
        .iter()
        .any(|h| h.split_once(':').is_some_and(|(k, v)| k.eq_ignore_ascii_case("content-length") && v.trim() == "0"));
    if !bodiless {
        return None;
    }
    let body = serde_json::to_string(&ErrorBody { error: error.into(), errors: Vec::new() }).ok()?;
    let mut out = format!("{status_line}\r\n");
    for h in headers.iter().filter(|h| !h.to_ascii_lowercase().starts_with("content-length:")) {
        out.push_str(h);
        out.push_str("\r\n");
    }
    out.push_str(&format!("content-type: application/json\r\ncontent-length: {}\r\n\r\n{body}", body.len()));
    Some(out.into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_bodiless_parse_errors_are_rewritten() {
        let hyper414 = b"HTTP/1.1 414 URI Too Long\r\ncontent-length: 0\r\ndate: Mon, 01 Jan 2024 00:00:00 GMT\r\n\r\n";
        let out = String::from_utf8(with_json_body(hyper414).unwrap()).unwrap();
        let (head, body) = out.split_once("\r\n\r\n").unwrap();
        assert!(head.starts_with("HTTP/1.1 414 URI Too Long\r\n") && head.contains("date: Mon"), "{out}");
        assert!(head.contains(&format!("content-length: {}", body.len())), "{out}");
        let v: serde_json::Value = serde_json::from_str(body).unwrap();
        assert!(v["error"].as_str().unwrap().contains("URI is too long"), "{out}");
        for kept in [
            &b"HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: 12\r\n\r\n"[..],
            b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n{}",
            b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n",
            b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n",
            b"not http at all",
        ] {
            assert_eq!(with_json_body(kept), None, "{}", String::from_utf8_lossy(kept));
        }
    }
}
