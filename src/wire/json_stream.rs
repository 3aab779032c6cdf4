//! Splits a large JSON document into its values without holding the whole
//! file in memory: the preview reads inventories of thousands of hosts
//! (40 MB and more), and each host's device list is parsed on its own.

use std::io::Read;

use memchr::{memchr2, memchr3, memchr_iter, memrchr};

const CHUNK: usize = 256 * 1024;

/// A forward-only reader over JSON tokens of a byte stream.
pub struct JsonStream<R> {
    src: R,
    /// Allocated once; `buf[pos..len]` is read but not yet consumed.
    buf: Vec<u8>,
    len: usize,
    pos: usize,
    eof: bool,
    /// Bytes dropped from the front of `buf`, for error offsets.
    dropped: u64,
    /// Lines are counted lazily: every byte before offset `counted` has
    /// been looked at; `line` is the line at `counted` and `line_start` the
    /// offset where that line begins.
    counted: u64,
    line: u64,
    line_start: u64,
}

/// A place in the whole input, as an editor shows it (1-based; the column
/// counts bytes, as serde_json's do).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    pub offset: u64,
    pub line: u64,
    pub column: u64,
}

impl std::fmt::Display for Position {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}, column {}", self.line, self.column)
    }
}

impl Position {
    /// Where an error that serde_json found in `value`, which starts here,
    /// lies in the whole input (serde_json counts from the value's start).
    pub fn of_error_in_value(self, e: &serde_json::Error, value: &[u8]) -> Option<Position> {
        if e.line() == 0 {
            return None;
        }
        let (line, column) = (e.line() as u64, e.column() as u64);
        if line == 1 {
            let column = column.saturating_sub(1);
            return Some(Position { offset: self.offset + column, line: self.line, column: self.column + column });
        }
        let line_start = memchr_iter(b'\n', value).nth(e.line() - 2).map_or(value.len(), |i| i + 1) as u64;
        let offset = self.offset + line_start + column.saturating_sub(1);
        Some(Position { offset, line: self.line + line - 1, column: column.max(1) })
    }
}

#[derive(Debug, thiserror::Error)]
pub enum StreamError {
    #[error("cannot read: {0}")]
    Io(#[from] std::io::Error),
    #[error("invalid JSON at {at} (byte {}): {message}", at.offset)]
    Syntax { at: Position, message: String },
}

impl<R: Read> JsonStream<R> {
    pub fn new(src: R) -> Self {
        JsonStream {
            src,
            buf: vec![0; CHUNK],
            len: 0,
            pos: 0,
            eof: false,
            dropped: 0,
            counted: 0,
            line: 1,
            line_start: 0,
        }
    }

    /// Counts the lines up to `offset`, which must still be buffered.
    fn count_lines_to(&mut self, offset: u64) {
        if offset <= self.counted {
            return;
        }
        let from = (self.counted - self.dropped) as usize;
        let to = (offset - self.dropped) as usize;
        let span = &self.buf[from..to];
        // The file has a newline every 30 bytes or so, too many to visit
        // one by one; a count into bytes, 255 at a time, is vector code.
        let lines: usize =
            span.chunks(255).map(|c| usize::from(c.iter().fold(0u8, |n, &b| n + u8::from(b == b'\n')))).sum();
        if let Some(last) = memrchr(b'\n', span) {
            self.line += lines as u64;
            self.line_start = self.dropped + (from + last) as u64 + 1;
        }
        self.counted = offset;
    }

    /// The position of the next unconsumed byte.
    pub fn position(&mut self) -> Position {
        let offset = self.dropped + self.pos as u64;
        self.count_lines_to(offset);
        Position { offset, line: self.line, column: offset - self.line_start + 1 }
    }

    fn syntax(&mut self, message: impl Into<String>) -> StreamError {
        StreamError::Syntax { at: self.position(), message: message.into() }
    }

    /// Reads more input behind what is buffered, first moving the unread
    /// part (from `pos`) to the front; false at end of input. Offsets into
    /// the buffer taken before a fill must be re-based by `moved`.
    fn fill(&mut self) -> Result<Option<usize>, StreamError> {
        if self.eof {
            return Ok(None);
        }
        let moved = self.pos;
        if moved > 0 {
            self.count_lines_to(self.dropped + moved as u64);
            self.buf.copy_within(moved..self.len, 0);
            self.len -= moved;
            self.dropped += moved as u64;
            self.pos = 0;
        }
        if self.len == self.buf.len() {
            // A single value larger than the buffer: grow it.
            self.buf.resize(self.buf.len() * 2, 0);
        }
        let n = loop {
            match self.src.read(&mut self.buf[self.len..]) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e.into()),
            }
        };
        self.len += n;
        if n == 0 {
            self.eof = true;
            return Ok(None);
        }
        Ok(Some(moved))
    }

    /// The next non-whitespace byte, not consumed.
    pub fn peek(&mut self) -> Result<Option<u8>, StreamError> {
        loop {
            while self.pos < self.len {
                let b = self.buf[self.pos];
                if matches!(b, b' ' | b'\n' | b'\r' | b'\t') {
                    self.pos += 1;
                } else {
                    return Ok(Some(b));
                }
            }
            if self.fill()?.is_none() {
                return Ok(None);
            }
        }
    }

    pub fn expect(&mut self, want: u8) -> Result<(), StreamError> {
        match self.peek()? {
            Some(b) if b == want => {
                self.pos += 1;
                Ok(())
            }
            Some(b) => Err(self.syntax(format!("expected '{}', found '{}'", want as char, b as char))),
            None => Err(self.syntax(format!("expected '{}', found the end of the file", want as char))),
        }
    }

    /// After a member: true if another one follows (`,`), false at `close`.
    pub fn next_member(&mut self, close: u8) -> Result<bool, StreamError> {
        match self.peek()? {
            Some(b',') => {
                self.pos += 1;
                Ok(true)
            }
            Some(b) if b == close => {
                self.pos += 1;
                Ok(false)
            }
            _ => Err(self.syntax(format!("expected ',' or '{}'", close as char))),
        }
    }

    /// True (and consumed) if the next byte is `close`.
    pub fn at_close(&mut self, close: u8) -> Result<bool, StreamError> {
        if self.peek()? == Some(close) {
            self.pos += 1;
            return Ok(true);
        }
        Ok(false)
    }

    /// The raw bytes of the next value; the slice is valid until the next call.
    ///
    /// Only finds where the value ends; serde_json validates it afterwards.
    pub fn value(&mut self) -> Result<&[u8], StreamError> {
        let Some(first) = self.peek()? else {
            return Err(self.syntax("expected a value, found the end of the file"));
        };
        // `pos` stays at the value's start while scanning, so a refill keeps
        // the value; the scan's offsets are relative to `pos`.
        let mut scan = EndScan::new(first);
        let len = loop {
            let avail = self.len - self.pos;
            if let Some(n) = scan.run(&self.buf[self.pos..self.len]) {
                break n;
            }
            if self.fill()?.is_none() {
                if scan.scalar {
                    break avail;
                }
                let inside = if scan.i < avail { "a string" } else { "a value" };
                return Err(self.syntax(format!("the file ends inside {inside}")));
            }
        };
        let start = self.pos;
        self.pos += len;
        Ok(&self.buf[start..start + len])
    }

    /// Buffers at least `want` unconsumed bytes (fewer only where the input
    /// ends); true if the input ends within them.
    pub fn fill_to(&mut self, want: usize) -> Result<bool, StreamError> {
        if self.buf.len() < want {
            self.buf.resize(want, 0);
        }
        while self.len - self.pos < want {
            if self.fill()?.is_none() {
                return Ok(true);
            }
        }
        Ok(self.eof)
    }

    /// The bytes buffered and not consumed yet.
    pub fn buffered(&self) -> &[u8] {
        &self.buf[self.pos..self.len]
    }

    /// Consumes `n` buffered bytes (read by other means).
    pub fn consume(&mut self, n: usize) {
        assert!(n <= self.len - self.pos, "only buffered bytes can be consumed");
        self.pos += n;
    }

    /// The next value, which must be a JSON string.
    pub fn string(&mut self) -> Result<String, StreamError> {
        self.peek()?;
        let start = self.position();
        let raw = self.value()?;
        serde_json::from_slice::<String>(raw).map_err(|e| StreamError::Syntax {
            at: start.of_error_in_value(&e, raw).unwrap_or(start),
            message: format!("expected a string: {}", serde_message(&e)),
        })
    }
}

/// The length of the value at the start of `b` (no whitespace before it),
/// or `None` if it does not end within `b`. Like `JsonStream::value`, it
/// only finds the end.
pub fn value_len(b: &[u8]) -> Option<usize> {
    EndScan::new(*b.first()?).run(b)
}

/// Where a value ends, found a buffer at a time. Inside an object only
/// quotes and braces can move the end (brackets there are balanced in valid
/// JSON), so those stretches are skipped with memchr; brackets are counted
/// only outside every object.
struct EndScan {
    /// Scanned so far, from the value's start.
    i: usize,
    braces: usize,
    brackets: usize,
    in_string: bool,
    /// A number or literal, which ends where the input ends.
    scalar: bool,
}

impl EndScan {
    fn new(first: u8) -> Self {
        EndScan { i: 0, braces: 0, brackets: 0, in_string: false, scalar: !matches!(first, b'{' | b'[' | b'"') }
    }

    /// Goes on over `v` (the value from its start, as far as it is known):
    /// the value's length, or `None` if more input is needed.
    fn run(&mut self, v: &[u8]) -> Option<usize> {
        loop {
            let at = self.i;
            if at >= v.len() {
                return None;
            }
            if self.in_string {
                match memchr2(b'"', b'\\', &v[at..]) {
                    None => self.i = v.len(),
                    Some(off) if v[at + off] == b'\\' => {
                        if at + off + 1 >= v.len() {
                            // The escaped byte is not known yet: look again with more.
                            self.i = at + off;
                            return None;
                        }
                        self.i = at + off + 2;
                    }
                    Some(off) => {
                        self.in_string = false;
                        self.i = at + off + 1;
                        if self.braces == 0 && self.brackets == 0 {
                            return Some(self.i);
                        }
                    }
                }
                continue;
            }
            if self.braces > 0 {
                match memchr3(b'"', b'{', b'}', &v[at..]) {
                    None => self.i = v.len(),
                    Some(off) => {
                        self.i = at + off + 1;
                        match v[at + off] {
                            b'"' => self.in_string = true,
                            b'{' => self.braces += 1,
                            _ => {
                                self.braces -= 1;
                                if self.braces == 0 && self.brackets == 0 {
                                    return Some(self.i);
                                }
                            }
                        }
                    }
                }
                continue;
            }
            match v[at] {
                b'"' => self.in_string = true,
                b'{' => self.braces += 1,
                b'[' => self.brackets += 1,
                b'}' | b']' if self.brackets == 0 => return Some(at),
                b']' => {
                    self.brackets -= 1;
                    if self.brackets == 0 {
                        return Some(at + 1);
                    }
                }
                b',' | b' ' | b'\n' | b'\r' | b'\t' if self.brackets == 0 => return Some(at),
                _ => {}
            }
            self.i = at + 1;
        }
    }
}

/// serde_json's message without its position (which counts from the start
/// of the value, not of the file), quoting at most an excerpt of any string.
pub fn serde_message(e: &serde_json::Error) -> String {
    let full = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    shorten_quoted(full.strip_suffix(&suffix).unwrap_or(&full))
}

/// `text` with every double-quoted string in it (serde quotes the values
/// it did not expect, escaped like Rust's `{:?}`) cut to an excerpt.
pub fn shorten_quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len().min(512));
    let mut rest = text;
    while let Some(open) = rest.find('"') {
        out.push_str(&rest[..=open]);
        let body = &rest[open + 1..];
        let mut escaped = false;
        let close = body.char_indices().find_map(|(i, c)| {
            let end = c == '"' && !escaped;
            escaped = c == '\\' && !escaped;
            end.then_some(i)
        });
        let Some(close) = close else {
            out.push_str(&crate::domain::value::excerpt(body));
            return out;
        };
        out.push_str(&crate::domain::value::excerpt(&body[..close]));
        out.push('"');
        rest = &body[close + 1..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that hands out one byte at a time, to cross every boundary.
    struct Trickle<'a>(&'a [u8]);
    impl Read for Trickle<'_> {
        fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
            if self.0.is_empty() || out.is_empty() {
                return Ok(0);
            }
            out[0] = self.0[0];
            self.0 = &self.0[1..];
            Ok(1)
        }
    }

    #[test]
    fn splits_members_across_chunk_boundaries() {
        let doc = br#" { "a" : [1, {"x": "}\"]"}], "b": "s\\", "c": 12 , "d": null }"#;
        let mut s = JsonStream::new(Trickle(doc));
        s.expect(b'{').unwrap();
        let mut seen = Vec::new();
        loop {
            let k = s.string().unwrap();
            s.expect(b':').unwrap();
            let v = String::from_utf8(s.value().unwrap().to_vec()).unwrap();
            seen.push((k, v));
            if !s.next_member(b'}').unwrap() {
                break;
            }
        }
        assert_eq!(
            seen,
            vec![
                ("a".into(), r#"[1, {"x": "}\"]"}]"#.into()),
                ("b".into(), r#""s\\""#.into()),
                ("c".into(), "12".into()),
                ("d".into(), "null".into()),
            ]
        );
    }

    #[test]
    fn truncated_input_is_an_error() {
        let mut s = JsonStream::new(&br#"{"a": [1, 2"#[..]);
        s.expect(b'{').unwrap();
        s.string().unwrap();
        s.expect(b':').unwrap();
        assert!(s.value().is_err());
    }
}
