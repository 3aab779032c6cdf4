//! The agent's HTTP edge: the routes and their handlers (`http`), the
//! bearer-token check (`auth`) and the JSON error answer with its code
//! (`error`). Only here are requests read and answers written.

pub mod auth;
pub mod error;
pub mod http;
