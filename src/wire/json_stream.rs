//! Splits a large JSON document into its values without holding the whole
//! file in memory: the preview reads inventories of thousands of hosts
//! (40 MB and more), and each host's device list is parsed on its own.

use std::io::Read;

use memchr::memchr2;

const CHUNK: usize = 256 * 1024;

/// A forward-only reader over JSON tokens of a byte stream.
pub struct JsonStream<R> {
    src: R,
    buf: Vec<u8>,
    pos: usize,
    eof: bool,
    /// Bytes dropped from the front of `buf`, for error offsets.
    dropped: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum StreamError {
    #[error("cannot read: {0}")]
    Io(#[from] std::io::Error),
    #[error("invalid JSON near byte {offset}: {message}")]
    Syntax { offset: u64, message: String },
}

impl<R: Read> JsonStream<R> {
    pub fn new(src: R) -> Self {
        JsonStream {
            src,
            buf: Vec::with_capacity(CHUNK),
            pos: 0,
            eof: false,
            dropped: 0,
        }
    }

    fn syntax(&self, message: impl Into<String>) -> StreamError {
        StreamError::Syntax {
            offset: self.dropped + self.pos as u64,
            message: message.into(),
        }
    }

    /// Appends the next chunk; false at end of input.
    fn fill(&mut self) -> Result<bool, StreamError> {
        if self.eof {
            return Ok(false);
        }
        let old = self.buf.len();
        self.buf.resize(old + CHUNK, 0);
        let n = loop {
            match self.src.read(&mut self.buf[old..]) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e.into()),
            }
        };
        self.buf.truncate(old + n);
        if n == 0 {
            self.eof = true;
        }
        Ok(n > 0)
    }

    /// Forgets consumed bytes once they make up most of the buffer.
    fn compact(&mut self) {
        if self.pos > CHUNK && self.pos * 2 > self.buf.len() {
            self.buf.drain(..self.pos);
            self.dropped += self.pos as u64;
            self.pos = 0;
        }
    }

    /// The next non-whitespace byte, not consumed.
    pub fn peek(&mut self) -> Result<Option<u8>, StreamError> {
        loop {
            while self.pos < self.buf.len() {
                let b = self.buf[self.pos];
                if matches!(b, b' ' | b'\n' | b'\r' | b'\t') {
                    self.pos += 1;
                } else {
                    return Ok(Some(b));
                }
            }
            self.compact();
            if !self.fill()? {
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
            Some(b) => Err(self.syntax(format!(
                "expected '{}', found '{}'",
                want as char, b as char
            ))),
            None => Err(self.syntax(format!(
                "expected '{}', found the end of the file",
                want as char
            ))),
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
    pub fn value(&mut self) -> Result<&[u8], StreamError> {
        self.compact();
        let first = self
            .peek()?
            .ok_or_else(|| self.syntax("expected a value, found the end of the file"))?;
        let start = self.pos;
        let mut i = start;
        let mut depth: usize = 0;
        let mut in_string = false;
        loop {
            if i >= self.buf.len() {
                if !self.fill()? {
                    if depth == 0 && !in_string && !matches!(first, b'{' | b'[' | b'"') {
                        break;
                    }
                    return Err(self.syntax("the file ends inside a value"));
                }
                continue;
            }
            if in_string {
                match memchr2(b'"', b'\\', &self.buf[i..]) {
                    None => i = self.buf.len(),
                    Some(off) => {
                        let at = i + off;
                        if self.buf[at] == b'\\' {
                            if at + 1 >= self.buf.len() {
                                i = at;
                                if !self.fill()? {
                                    return Err(self.syntax("the file ends inside a string"));
                                }
                                continue;
                            }
                            i = at + 2;
                        } else {
                            in_string = false;
                            i = at + 1;
                            if depth == 0 {
                                break;
                            }
                        }
                    }
                }
                continue;
            }
            let b = self.buf[i];
            match b {
                b'"' => in_string = true,
                b'{' | b'[' => depth += 1,
                b'}' | b']' => {
                    if depth == 0 {
                        break;
                    }
                    depth -= 1;
                    if depth == 0 {
                        i += 1;
                        break;
                    }
                }
                b',' | b' ' | b'\n' | b'\r' | b'\t' if depth == 0 => break,
                _ => {}
            }
            i += 1;
        }
        self.pos = i;
        Ok(&self.buf[start..i])
    }

    /// The next value, which must be a JSON string.
    pub fn string(&mut self) -> Result<String, StreamError> {
        let raw = self.value()?;
        serde_json::from_slice::<String>(raw).map_err(|e| StreamError::Syntax {
            offset: self.dropped + self.pos as u64,
            message: format!("expected a string: {e}"),
        })
    }
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
