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
    /// Tokens that take one character each (all but `*`).
    fixed: usize,
}

impl Pattern {
    pub fn new(pattern: &str) -> Pattern {
        let pat: Vec<char> = pattern.chars().collect();
        let n = pat.len();
        let mut tokens = Vec::new();
        let mut i = 0;
        // Where a search for `]` last ran off the end: any later `[` has no
        // `]` either. Without it a pattern of many `[` takes quadratic time.
        let mut unclosed_from = n;
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
                    let scan_from = j;
                    if j >= unclosed_from {
                        j = n;
                    }
                    while j < n && pat[j] != ']' {
                        j += 1;
                    }
                    if j >= n {
                        unclosed_from = unclosed_from.min(scan_from);
                        tokens.push(Token::Literal('['));
                    } else {
                        tokens.push(class_token(&pat, i, j));
                        i = j + 1;
                    }
                }
                other => tokens.push(Token::Literal(other)),
            }
        }
        let fixed = tokens.iter().filter(|t| **t != Token::Star).count();
        Pattern { tokens, fixed }
    }

    pub fn matches(&self, name: &str) -> bool {
        let text: Vec<char> = name.chars().collect();
        let toks = &self.tokens;
        // Every token but `*` takes exactly one character: a pattern of more
        // such tokens than the name has characters cannot match, and saying
        // so at once keeps a huge pattern from costing its length per host.
        if self.fixed > text.len() {
            return false;
        }
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

/// fnmatch.translate drops a backward range `z-a` by joining its chunks
/// from the right: `chunks[k-1] = chunks[k-1][:-1] + chunks[k][1:]` while
/// `chunks[k-1][-1] > chunks[k][0]`. Done in place that costs quadratic time
/// for a long class; here the chunk being joined is kept reversed, so each
/// join only appends.
fn merge_backward_ranges(chunks: Vec<Vec<char>>) -> Vec<Vec<char>> {
    let mut chunks = chunks.into_iter().rev();
    let Some(last) = chunks.next() else { return Vec::new() };
    let mut done: Vec<Vec<char>> = Vec::new();
    let mut current: Vec<char> = last.into_iter().rev().collect();
    for prev in chunks {
        let prev_last = *prev.last().expect("non-empty chunk");
        let next_first = *current.last().expect("only the first chunk can end up empty");
        if prev_last > next_first {
            current.pop();
            current.extend(prev[..prev.len() - 1].iter().rev());
        } else {
            done.push(current.into_iter().rev().collect());
            current = prev.into_iter().rev().collect();
        }
    }
    done.push(current.into_iter().rev().collect());
    done.reverse();
    done
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
        chunks = merge_backward_ranges(chunks);
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
    fn huge_patterns_cost_linear_time() {
        // Each of these took minutes: a `[` without `]` searched to the end
        // once per `[`, and backward ranges were joined by copying.
        let unclosed = "[".repeat(300_000);
        assert!(m(&unclosed, &"[".repeat(300_000)));
        assert!(!m(&unclosed, "r1-osd0001"));
        let backward = format!("[{}a]", "z-y-".repeat(100_000));
        assert!(!m(&backward, "r1-osd0001"));
        assert_eq!(Pattern::new("[]x").tokens.len(), 3, "`[` literal, then `]`, then `x`");
        assert!(m("[]x[a]", "[") && !m("[]x[a]", "]xa") && m("[!]x[a]", "y") && m("[]x[a]x[", "ax["));
    }

    /// The joining loop as fnmatch.translate writes it.
    fn merge_like_python(mut chunks: Vec<Vec<char>>) -> Vec<Vec<char>> {
        for k in (1..chunks.len()).rev() {
            if chunks[k - 1].last() > chunks[k].first() {
                let tail = chunks[k][1..].to_vec();
                chunks[k - 1].pop();
                chunks[k - 1].extend(tail);
                chunks.remove(k);
            }
        }
        chunks
    }

    #[test]
    fn joining_backward_ranges_matches_python() {
        let mut seed = 7u64;
        let mut next = |n: u64| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) % n
        };
        for _ in 0..5000 {
            // As the splitter makes them: the first and last chunk have a
            // character or more, the ones between have two or more.
            let count = 1 + next(6) as usize;
            let chunks: Vec<Vec<char>> = (0..count)
                .map(|i| {
                    let min = if i == 0 || i + 1 == count { 1 } else { 2 };
                    (0..min + next(3) as usize).map(|_| b"abcxyz-"[next(7) as usize] as char).collect()
                })
                .collect();
            assert_eq!(merge_backward_ranges(chunks.clone()), merge_like_python(chunks.clone()), "{chunks:?}");
        }
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
