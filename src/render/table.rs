//! Plain-text tables in the two styles cephadm prints: bordered
//! (`orch apply --dry-run`) and borderless (`orch device ls`, `orch osd rm status`).

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

/// `text` padded with spaces to `width` characters. Padding is built by
/// hand because `format!("{:w$}")` panics for widths past 65535 (a device
/// path can be that long); renderers outside tables should use this too.
pub fn pad(text: &str, width: usize, align: Align) -> String {
    let fill = " ".repeat(width.saturating_sub(text.chars().count()));
    match align {
        Align::Left => format!("{text}{fill}"),
        Align::Right => format!("{fill}{text}"),
    }
}

pub struct Table {
    headers: Vec<String>,
    align: Vec<Align>,
    rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new<S: Into<String>>(headers: impl IntoIterator<Item = S>) -> Table {
        let headers: Vec<String> = headers.into_iter().map(Into::into).collect();
        let align = vec![Align::Left; headers.len()];
        Table { headers, align, rows: Vec::new() }
    }

    pub fn align(mut self, column: usize, align: Align) -> Table {
        self.align[column] = align;
        self
    }

    pub fn row<S: Into<String>>(&mut self, cells: impl IntoIterator<Item = S>) {
        let mut cells: Vec<String> = cells.into_iter().map(Into::into).collect();
        cells.resize(self.headers.len(), String::new());
        self.rows.push(cells);
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    fn widths(&self) -> Vec<usize> {
        let mut w: Vec<usize> = self.headers.iter().map(|h| h.chars().count()).collect();
        for r in &self.rows {
            for (i, c) in r.iter().enumerate() {
                w[i] = w[i].max(c.chars().count());
            }
        }
        w
    }

    /// PrettyTable-like, as in cephadm's OSDSPEC PREVIEWS (no left padding,
    /// two spaces on the right).
    pub fn boxed(&self) -> String {
        let w = self.widths();
        let rule: String = w.iter().map(|n| format!("+{}", "-".repeat(n + 2))).collect::<String>() + "+\n";
        let line = |cells: &[String]| -> String {
            cells.iter().enumerate().map(|(i, c)| format!("|{}  ", pad(c, w[i], self.align[i]))).collect::<String>()
                + "|\n"
        };
        let mut out = rule.clone();
        out.push_str(&line(&self.headers));
        out.push_str(&rule);
        for r in &self.rows {
            out.push_str(&line(r));
        }
        out.push_str(&rule);
        out
    }

    /// Borderless, columns separated by two spaces, trailing spaces trimmed.
    pub fn plain(&self) -> String {
        let w = self.widths();
        let line = |cells: &[String]| -> String {
            let s: Vec<String> = cells.iter().enumerate().map(|(i, c)| pad(c, w[i], self.align[i])).collect();
            s.join("  ").trim_end().to_string() + "\n"
        };
        let mut out = line(&self.headers);
        for r in &self.rows {
            out.push_str(&line(r));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boxed_matches_cephadm_layout() {
        let mut t = Table::new(["SERVICE", "NAME", "DB"]);
        t.row(["osd", "osd_spec_F5-422_SSDs", "-"]);
        let text = t.boxed();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "+---------+----------------------+----+");
        assert_eq!(lines[1], "|SERVICE  |NAME                  |DB  |");
        assert_eq!(lines[3], "|osd      |osd_spec_F5-422_SSDs  |-   |");
    }

    #[test]
    fn cells_of_any_width_render() {
        let wide = "/dev/".to_string() + &"x".repeat(70_000);
        let mut t = Table::new(["PATH", "SIZE"]).align(1, Align::Right);
        t.row([wide.as_str(), "1G"]);
        t.row(["/dev/sdb", "2G"]);
        assert!(t.boxed().contains(&wide));
        let plain = t.plain();
        assert_eq!(plain.lines().nth(2).map(|l| l.chars().count()), Some(wide.len() + 2 + "SIZE".len()));
        assert_eq!(pad("ab", 70_000, Align::Right).len(), 70_000);
    }

    #[test]
    fn plain_right_aligns_on_request() {
        let mut t = Table::new(["HOST", "SIZE"]).align(1, Align::Right);
        t.row(["a", "3726G"]);
        t.row(["bb", " 349G"]);
        assert_eq!(t.plain(), "HOST   SIZE\na     3726G\nbb     349G\n");
    }
}
