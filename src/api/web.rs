//! The dashboard: one page and its scripts and styles, embedded in the
//! binary (no CDN, no network). It talks to the same API with the same
//! token as the CLI. Assets are served from a fixed list: nothing else
//! under `/assets/` exists.

use axum::extract::Path;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};

use super::error::ApiError;

const INDEX: &str = include_str!("../web/index.html");

const JS: &str = "text/javascript; charset=utf-8";
const CSS: &str = "text/css; charset=utf-8";

/// (name under /assets/, content type, content).
const ASSETS: &[(&str, &str, &str)] = &[
    ("common.js", JS, include_str!("../web/common.js")),
    ("app.js", JS, include_str!("../web/app.js")),
    ("app.css", CSS, include_str!("../web/app.css")),
];

pub async fn index() -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "text/html; charset=utf-8"), (header::CACHE_CONTROL, "no-cache")], INDEX)
}

pub async fn asset(Path(name): Path<String>) -> Response {
    match ASSETS.iter().find(|(n, _, _)| *n == name) {
        Some((_, content_type, body)) => {
            ([(header::CONTENT_TYPE, *content_type), (header::CACHE_CONTROL, "no-cache")], *body).into_response()
        }
        None => ApiError::Status(StatusCode::NOT_FOUND, format!("no asset {name:?}")).into_response(),
    }
}
