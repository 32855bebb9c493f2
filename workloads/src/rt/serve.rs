//! What [`super::Spawner::serve_http`] serves, and the one function every
//! runtime's glue runs a connection through: hyper's HTTP/1.1 or HTTP/2
//! state machine. The service itself (the `http` workload's handler) is
//! the workload's; this module knows only its bound.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::rt::bounds::Http2ServerConnExec;
use hyper::rt::{Read, Timer, Write};
use hyper::server::conn::{http1, http2};
use hyper::Response;

/// A response as a served service makes it.
pub type HttpResponse = Response<Full<Bytes>>;
/// A served service's future (boxed: the same allocation on every runtime).
pub type ServiceFuture = Pin<Box<dyn Future<Output = Result<HttpResponse, Infallible>> + Send>>;

/// A hyper service that [`super::Spawner::serve_http`] can serve: one per
/// connection, answering every request with a full body.
pub trait ServeHttp:
    hyper::service::Service<
        hyper::Request<Incoming>,
        Response = HttpResponse,
        Error = Infallible,
        Future = ServiceFuture,
    > + Send
    + 'static
{
    /// Whether its connections speak HTTP/2 (many streams each); otherwise
    /// HTTP/1.1 with keep-alive.
    fn http2(&self) -> bool;
}

/// Serves one accepted connection until the client closes it: HTTP/1.1
/// keep-alive or HTTP/2, with `timer` as hyper's timer (HTTP/1.1 header
/// read timeout, HTTP/2 keep-alive) and `exec` for HTTP/2 streams.
pub(crate) async fn serve_connection<I, E, T, S>(io: I, exec: E, timer: T, svc: S) -> hyper::Result<()>
where
    I: Read + Write + Unpin + Send + 'static,
    E: Http2ServerConnExec<ServiceFuture, Full<Bytes>>,
    T: Timer + Send + Sync + 'static,
    S: ServeHttp,
{
    if svc.http2() {
        http2::Builder::new(exec).timer(timer).serve_connection(io, svc).await
    } else {
        drop(exec);
        http1::Builder::new().timer(timer).keep_alive(true).serve_connection(io, svc).await
    }
}
