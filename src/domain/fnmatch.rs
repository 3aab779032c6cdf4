//! Shell-style host patterns exactly as Python's `fnmatch` reads them
//! (cephadm matches `host_pattern` with `fnmatch.filter`): `*`, `?`, `[...]`,
//! `[!...]`, no escaping, case-sensitive, a `[` without `]` is literal, and
//! ranges written backwards (`[z-a]`) are dropped the way Python 3.11 drops them.

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Literal(char),
    AnyChar,
    Star,
    Never,
    Class { negated: bool, singles: Vec<char>, ranges: Vec<(char, char)> },
}

/// A compiled pattern.
#[derive(Debug, Clone, PartialEq)]
pub struct Pattern {
    tokens: Vec<Token>,
}

impl Pattern {
    pub fn new(pattern: &str) -> Pattern {
        let pat: Vec<char> = pattern.chars().collect();
        let n = pat.len();
        let mut tokens = Vec::new();
        let mut i = 0;
        while i < n {
            let c = pat[i];
            i += 1;
            match c {
                '*' => {
                    if tokens.last() != Some(&Token::Star) {
                        tokens.push(Token::Star);
                    }
                }
                '?' => tokens.push(Token::AnyChar),
                '[' => {
                    let mut j = i;
                    if j < n && pat[j] == '!' {
                        j += 1;
                    }
                    if j < n && pat[j] == ']' {
                        j += 1;
                    }
                    while j < n && pat[j] != ']' {
                        j += 1;
                    }
                    if j >= n {
                        tokens.push(Token::Literal('['));
                    } else {
                        tokens.push(class_token(&pat, i, j));
                        i = j + 1;
                    }
                }
                other => tokens.push(Token::Literal(other)),
            }
        }
        Pattern { tokens }
    }

    pub fn matches(&self, name: &str) -> bool {
        let text: Vec<char> = name.chars().collect();
        let toks = &self.tokens;
        let (mut t, mut p) = (0usize, 0usize);
        let mut backtrack: Option<(usize, usize)> = None;
        while t < text.len() {
            if p < toks.len() {
                match &toks[p] {
                    Token::Star => {
                        backtrack = Some((p, t));
                        p += 1;
                        continue;
                    }
                    tok if single_matches(tok, text[t]) => {
                        p += 1;
                        t += 1;
                        continue;
                    }
                    _ => {}
                }
            }
            match backtrack {
                Some((sp, st)) => {
                    p = sp + 1;
                    t = st + 1;
                    backtrack = Some((sp, st + 1));
                }
                None => return false,
            }
        }
        toks[p..].iter().all(|tok| *tok == Token::Star)
    }
}

fn single_matches(tok: &Token, c: char) -> bool {
    match tok {
        Token::Literal(l) => *l == c,
        Token::AnyChar => true,
        Token::Never | Token::Star => false,
        Token::Class { negated, singles, ranges } => {
            let inside = singles.contains(&c) || ranges.iter().any(|(lo, hi)| *lo <= c && c <= *hi);
            inside != *negated
        }
    }
}

/// `pat[i..j]` is the text between `[` and `]`.
fn class_token(pat: &[char], start: usize, j: usize) -> Token {
    let stuff = &pat[start..j];
    // Chunks are separated by hyphens that form ranges; hyphens inside a chunk
    // are literal. This mirrors how fnmatch.translate splits the set.
    let mut chunks: Vec<Vec<char>> = Vec::new();
    if !stuff.contains(&'-') {
        chunks.push(stuff.to_vec());
    } else {
        let mut i = start;
        let mut k = if pat[i] == '!' { i + 2 } else { i + 1 };
        loop {
            let found = (k..j).find(|&x| pat[x] == '-');
            let Some(h) = found else { break };
            chunks.push(pat[i..h].to_vec());
            i = h + 1;
            k = h + 3;
        }
        let rest = pat[i.min(j)..j].to_vec();
        if rest.is_empty() {
            chunks.last_mut().expect("a chunk before the trailing hyphen").push('-');
        } else {
            chunks.push(rest);
        }
        let mut k = chunks.len();
        while k > 1 {
            k -= 1;
            let prev_last = *chunks[k - 1].last().expect("non-empty chunk");
            let next_first = chunks[k][0];
            if prev_last > next_first {
                let tail: Vec<char> = chunks[k][1..].to_vec();
                chunks[k - 1].pop();
                chunks[k - 1].extend(tail);
                chunks.remove(k);
            }
        }
    }
    let flat: Vec<char> = chunks.iter().flatten().copied().collect();
    if flat.is_empty() {
        return Token::Never;
    }
    if flat == ['!'] && chunks.len() == 1 {
        return Token::AnyChar;
    }
    let negated = flat[0] == '!';
    let mut singles = Vec::new();
    let mut ranges = Vec::new();
    for (idx, chunk) in chunks.iter().enumerate() {
        let mut chars: &[char] = chunk;
        if idx == 0 && negated {
            chars = &chars[1..];
        }
        // The last char of a chunk and the first of the next form a range.
        let starts_range = idx + 1 < chunks.len();
        let ends_range = idx > 0;
        let from = usize::from(ends_range);
        let to = chars.len().saturating_sub(usize::from(starts_range));
        if from < to {
            singles.extend_from_slice(&chars[from..to]);
        }
        if starts_range {
            if let (Some(&lo), Some(&hi)) = (chars.last(), chunks[idx + 1].first()) {
                ranges.push((lo, hi));
            }
        }
    }
    Token::Class { negated, singles, ranges }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(p: &str, n: &str) -> bool {
        Pattern::new(p).matches(n)
    }

    #[test]
    fn basics() {
        assert!(m("f5-422-*", "f5-422-01"));
        assert!(!m("f5-422-*", "f5-421-01"));
        assert!(m("*", ""));
        assert!(m("r?-osd00*", "r1-osd0012"));
        assert!(!m("host*", "Host2"), "case-sensitive");
        assert!(m("*-osd000[0-4]", "r1-osd0003"));
        assert!(!m("*-osd000[0-4]", "r1-osd0005"));
        assert!(m("r[12]-*", "r2-x"));
        assert!(m("[!a]x", "bx"));
        assert!(!m("[!a]x", "ax"));
        assert!(m("a[b", "a[b"), "unclosed [ is literal");
        assert!(m("*a*b*", "xxaxxbxx"));
        assert!(!m("*a*b", "xxaxxbxx"));
    }

    #[test]
    fn odd_classes_follow_python() {
        assert!(m("[]]", "]"));
        assert!(m("[!]]", "a"));
        assert!(!m("[!]]", "]"));
        assert!(m("[a-]", "-"));
        assert!(!m("[z-a]x", "zx") && !m("[z-a]x", "ax"), "backwards range is dropped");
        assert!(m("[!-x]", "a"));
        assert!(!m("[!-x]", "-"));
        assert!(!m("[a-c-e]", "d") && m("[a-c-e]", "-") && m("[a-c-e]", "e"));
    }
}
