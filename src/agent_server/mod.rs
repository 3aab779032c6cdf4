//! `osdkeeper agent`: the small HTTP server that runs on each storage host.
//! (Being written.)
