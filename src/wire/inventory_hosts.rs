//! The `hosts` mapping of an inventory file, read a window of the file at a
//! time on a few threads.
//!
//! Where one host's list ends is only known by reading it, so a window is
//! cut at guessed host boundaries (`],` then a key whose value opens a list
//! of mappings) and each part is read on its own thread. A guess is checked,
//! not trusted: a part counts only if the part before it ended exactly
//! where it begins, so a wrong guess (the pattern inside a string, say)
//! costs time and never a wrong host. What the byte scanner is unsure of is
//! read by the serde visitor; a host that fails, or a part that ended early,
//! is read again in order by the stream reader, whose errors carry the
//! position in the file.

use std::io::Read;

use memchr::{memchr, memrchr};

use super::ceph_volume::{finish, parse_device_list};
use super::ceph_volume_scan::{device_list, Cursor};
use super::json_stream::{value_len, JsonStream, StreamError};
use crate::domain::inventory::Device;

/// Bytes per part of a window: large enough that a thread's start costs
/// little, small enough to keep the buffer small.
const PART: usize = 512 << 10;

type Host = (String, Vec<Device>);

/// What one thread made of one part.
struct Part {
    hosts: Vec<Host>,
    /// The window offset up to which `hosts` reach: the next member's key,
    /// or just past the `}` that closes the mapping.
    done_to: usize,
    closed: bool,
}

/// Reads the members of the `hosts` mapping (its `{` consumed, not empty)
/// up to and with its `}`; `slow` reads one member in order, the way that
/// reports errors with their position.
pub(super) fn read_members<R: Read, E: From<StreamError>>(
    s: &mut JsonStream<R>,
    threads: usize,
    mut slow: impl FnMut(&mut JsonStream<R>) -> Result<Host, E>,
) -> Result<Vec<Host>, E> {
    let threads = threads.max(1);
    let mut out = Vec::new();
    loop {
        let at_end = s.fill_to(PART * threads)?;
        let window = s.buffered();
        let cuts = cuts(window, threads, at_end);
        let parts: Vec<Part> = if cuts.len() == 2 {
            vec![read_part(window, cuts[0], cuts[1])]
        } else {
            std::thread::scope(|scope| {
                let others: Vec<_> = cuts[1..]
                    .windows(2)
                    .map(|c| {
                        let (from, to) = (c[0], c[1]);
                        scope.spawn(move || read_part(window, from, to))
                    })
                    .collect();
                let mut parts = vec![read_part(window, cuts[0], cuts[1])];
                parts.extend(others.into_iter().map(|h| h.join().expect("inventory reader thread")));
                parts
            })
        };
        let mut consumed = 0;
        let mut closed = false;
        for (part, &from) in parts.into_iter().zip(&cuts) {
            if from != consumed {
                break;
            }
            out.extend(part.hosts);
            consumed = part.done_to;
            if part.closed {
                closed = true;
                break;
            }
        }
        s.consume(consumed);
        if closed {
            return Ok(out);
        }
        if consumed < *cuts.last().expect("two cuts") || consumed == 0 {
            // A part stopped short: the next host in order, the careful way.
            out.push(slow(s)?);
            if !s.next_member(b'}')? {
                return Ok(out);
            }
        }
    }
}

/// Where the window's parts begin, and where the last one ends: a guessed
/// member start each, or the window's end where the input ends in it.
fn cuts(window: &[u8], threads: usize, at_end: bool) -> Vec<usize> {
    let end = if at_end { window.len() } else { guess_before(window, window.len()).unwrap_or(window.len()) };
    let mut cuts = vec![0];
    for k in 1..threads {
        match guess_after(window, end * k / threads) {
            Some(c) if c < end && c > *cuts.last().expect("a cut") => cuts.push(c),
            _ => {}
        }
    }
    cuts.push(end);
    cuts
}

/// The key of a host member that seems to start right after the `]` at
/// `close`: `],` then `"name": [` and a device or `]`.
fn member_after(w: &[u8], close: usize) -> Option<usize> {
    let mut c = Cursor::new(w, close + 1);
    c.eat(b',')?;
    c.ws();
    let start = c.i;
    c.string()?;
    c.eat(b':')?;
    c.eat(b'[')?;
    matches!(c.peek()?, b'{' | b']').then_some(start)
}

fn guess_after(w: &[u8], from: usize) -> Option<usize> {
    let mut at = from;
    while let Some(off) = memchr(b']', &w[at..]) {
        if let Some(start) = member_after(w, at + off) {
            return Some(start);
        }
        at += off + 1;
    }
    None
}

fn guess_before(w: &[u8], before: usize) -> Option<usize> {
    let mut to = before;
    while let Some(close) = memrchr(b']', &w[..to]) {
        if let Some(start) = member_after(w, close).filter(|&s| s > 0 && s < before) {
            return Some(start);
        }
        to = close;
    }
    None
}

/// Reads the members in `window[from..to]`, stopping at the first it is
/// unsure of or that does not end inside the part.
fn read_part(window: &[u8], from: usize, to: usize) -> Part {
    let mut c = Cursor::new(&window[..to], from);
    let mut part = Part { hosts: Vec::new(), done_to: from, closed: false };
    while let Some(host) = member(&mut c) {
        match c.peek() {
            Some(b',') => {
                c.i += 1;
                c.ws();
            }
            Some(b'}') => {
                c.i += 1;
                part.closed = true;
            }
            _ => return part,
        }
        part.hosts.push(host);
        part.done_to = c.i;
        if part.closed || c.i == to {
            return part;
        }
    }
    part
}

/// One `"host": [devices]` member, or `None` to leave it to the stream.
fn member(c: &mut Cursor<'_>) -> Option<Host> {
    let name = c.text()?.to_string();
    c.eat(b':')?;
    c.ws();
    let start = c.i;
    let devices = match device_list(c) {
        Some(devices) => devices,
        None => {
            // Unsure: the visitor reads this list (the end is found leniently).
            let len = value_len(&c.b[start..])?;
            c.i = start + len;
            return parse_device_list(&c.b[start..c.i]).ok().map(|d| (name, d));
        }
    };
    let devices = finish(devices).ok()?;
    Some((name, devices.into_iter().map(Device::from).collect()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::json_stream::JsonStream;

    fn hosts(n: usize) -> String {
        let dev = |h: usize, i: usize| {
            format!(
                r#"{{"path": "/dev/sd{i}", "sys_api": {{"model": "M{h}", "vendor": "V", "rotational": "1",
                "size": 1.0, "human_readable_size": "1.00 B"}}, "available": true, "lvs": [], "rejected_reasons": []}}"#
            )
        };
        let members: Vec<String> = (0..n).map(|h| format!(r#""h{h}": [{}, {}]"#, dev(h, 0), dev(h, 1))).collect();
        format!("{{{}}}", members.join(",\n"))
    }

    fn read(doc: &str, threads: usize) -> Vec<Host> {
        let mut s = JsonStream::new(doc.as_bytes());
        s.expect(b'{').unwrap();
        let slow = |s: &mut JsonStream<&[u8]>| -> Result<Host, StreamError> {
            let name = s.string()?;
            s.expect(b':')?;
            let raw = s.value()?;
            Ok((name, parse_device_list(raw).expect("valid in these tests")))
        };
        read_members(&mut s, threads, slow).unwrap()
    }

    #[test]
    fn every_split_reads_the_same_hosts() {
        let doc = hosts(300);
        let one = read(&doc, 1);
        assert_eq!(one.len(), 300);
        assert_eq!(one[299].0, "h299");
        for threads in [2, 3, 7] {
            assert_eq!(read(&doc, threads), one, "{threads} threads");
        }
    }

    #[test]
    fn a_wrong_guess_costs_nothing_but_time() {
        // A reason that looks like the end of a host, in every device.
        let doc = hosts(50).replace(r#""rejected_reasons": []"#, r#""rejected_reasons": [], "x": [{}]"#);
        let guessed = cuts(doc.as_bytes(), 4, true);
        assert!(guessed.len() > 2, "{guessed:?}");
        assert_eq!(read(&doc, 4), read(&doc, 1));
    }
}
