//! The hyper service every runtime serves (each runtime's glue runs it
//! through `rt::serve::serve_connection`).

use std::convert::Infallible;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_lite::FutureExt;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::{Response, StatusCode};
use rand::rngs::SmallRng;
use rand::SeedableRng;

use super::{Http, Proto};
use crate::client::proto::{body, Meta, FLAG_HELLO, FLAG_MEASURED, FLAG_PANIC, META_HEADER};
use crate::loadgen::Request;
use crate::micro::{fan_out, maybe_panic};
use crate::openloop::Outcome;
use crate::recorders::Collector;
use crate::rt::{HttpResponse, ServeHttp, ServiceFuture, Spawner};
use crate::spin::spin_ns;

/// What the server side records, shared by every connection.
pub(crate) struct ServerSide {
    /// The instant `intended_ns` counts from (in-process runs only); `None`
    /// for `wsbench serve`, which then records no queue wait.
    pub base: Option<Instant>,
    pub collector: Arc<Collector>,
}

/// The hyper service: one per connection, cheap to clone.
pub(crate) struct HttpService<S: Spawner> {
    sp: S,
    cfg: Http,
    body: Bytes,
    side: Arc<ServerSide>,
}

impl<S: Spawner> Clone for HttpService<S> {
    fn clone(&self) -> Self {
        HttpService { sp: self.sp.clone(), cfg: self.cfg, body: self.body.clone(), side: Arc::clone(&self.side) }
    }
}

impl<S: Spawner> HttpService<S> {
    pub(crate) fn new(sp: S, cfg: Http, side: Arc<ServerSide>) -> Self {
        HttpService { sp, cfg, body: Bytes::from(body(cfg.body_bytes)), side }
    }
}

impl<S: Spawner> ServeHttp for HttpService<S> {
    fn http2(&self) -> bool {
        self.cfg.proto == Proto::H2
    }
}

impl<S: Spawner> hyper::service::Service<hyper::Request<Incoming>> for HttpService<S> {
    type Response = HttpResponse;
    type Error = Infallible;
    type Future = ServiceFuture;

    fn call(&self, req: hyper::Request<Incoming>) -> ServiceFuture {
        let meta = req.headers().get(META_HEADER).and_then(|v| Meta::parse(v.as_bytes())).unwrap_or_default();
        let this = self.clone();
        Box::pin(async move { Ok(this.respond(meta).await) })
    }
}

impl<S: Spawner> HttpService<S> {
    async fn respond(self, meta: Meta) -> HttpResponse {
        let first_poll = Instant::now();
        let intended = self.side.base.map(|b| b + Duration::from_nanos(meta.intended_ns));
        let req = Request {
            id: meta.id,
            intended: intended.unwrap_or(first_poll),
            sent: first_poll,
            seed: meta.seed,
            measured: meta.flags & FLAG_MEASURED != 0,
            must_panic: meta.flags & FLAG_PANIC != 0,
        };
        let out = if meta.flags & FLAG_HELLO != 0 {
            Outcome::OK
        } else {
            AssertUnwindSafe(handle(&self.sp, &req, self.cfg)).catch_unwind().await.unwrap_or(Outcome::FAILED)
        };
        let done = Instant::now();
        if req.measured {
            self.side.collector.with_local(|h| match intended {
                Some(intended) => h.record_server(intended, first_poll, done),
                None => {
                    h.service.saturating_record(crate::recorders::nanos(done - first_poll));
                }
            });
        }
        if meta.flags & FLAG_HELLO == 0 {
            self.side.collector.with_local(|h| if out.ok { h.completed += 1 } else { h.failed += 1 });
        }
        let mut resp =
            if out.ok { Response::new(Full::new(self.body.clone())) } else { Response::new(Full::default()) };
        if !out.ok {
            *resp.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
        }
        resp
    }
}

/// The handler: `rpc-fanout`'s model (see the module doc).
async fn handle<S: Spawner>(sp: &S, req: &Request, cfg: Http) -> Outcome {
    let mut rng = SmallRng::seed_from_u64(req.seed);
    if cfg.fanout == 0 {
        maybe_panic(req);
        spin_ns(cfg.service.sample(&mut rng));
        return Outcome::OK;
    }
    if fan_out(sp, req, cfg.fanout, cfg.service, &mut rng).await {
        Outcome::OK
    } else {
        Outcome::FAILED
    }
}
