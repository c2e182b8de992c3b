//! The dashboard (spec: keys "can be created and managed in a dashboard"): a page, a style
//! sheet and a script, compiled into the binary and served at /dashboard; and the live view of
//! a nest at /dashboard/nests/{RequestId}, with the official SignalR browser client. It signs in with an
//! Admin key and then uses the same HTTP API as any client; the server keeps no session.

use axum::http::{header, HeaderValue};
use axum::response::{IntoResponse, Response};

const INDEX: &str = include_str!("../../assets/dashboard/index.html");
const STYLE: &str = include_str!("../../assets/dashboard/dashboard.css");
const SCRIPT: &str = include_str!("../../assets/dashboard/dashboard.js");
const NEST_PAGE: &str = include_str!("../../assets/dashboard/nest.html");
const NEST_SCRIPT: &str = include_str!("../../assets/dashboard/nest.js");
/// The official SignalR browser client, vendored (see assets/dashboard/vendor/README.md).
pub const SIGNALR_CLIENT: &str = include_str!("../../assets/dashboard/vendor/signalr.min.js");

/// Only this server's own files, no inline script or style, no framing: the page handles an
/// Admin key, so nothing else may run in it or wrap it. Renders come back as data: images.
const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     img-src 'self' data:; connect-src 'self'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'";

fn asset(content_type: &'static str, body: &'static str) -> Response {
    let mut r = body.into_response();
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    // the assets change with the binary: revalidate rather than serve an old script
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONTENT_SECURITY_POLICY),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    r
}

pub async fn index() -> Response {
    asset("text/html; charset=utf-8", INDEX)
}

pub async fn style() -> Response {
    asset("text/css; charset=utf-8", STYLE)
}

pub async fn script() -> Response {
    asset("text/javascript; charset=utf-8", SCRIPT)
}

/// The live view of one nest (/dashboard/nests/{RequestId}): the page reads the id from its
/// own address, so the server does not look at it.
pub async fn nest_page() -> Response {
    asset("text/html; charset=utf-8", NEST_PAGE)
}

pub async fn nest_script() -> Response {
    asset("text/javascript; charset=utf-8", NEST_SCRIPT)
}

pub async fn signalr_client() -> Response {
    asset("text/javascript; charset=utf-8", SIGNALR_CLIENT)
}
