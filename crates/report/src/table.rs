//! A minimal aligned text table: left-aligned text columns, right-aligned numbers.

/// Column alignment.
#[derive(Copy, Clone, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

pub struct Table {
    headers: Vec<(&'static str, Align)>,
    rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new(headers: &[(&'static str, Align)]) -> Self {
        Table {
            headers: headers.to_vec(),
            rows: Vec::new(),
        }
    }

    pub fn push(&mut self, row: Vec<String>) {
        debug_assert_eq!(row.len(), self.headers.len());
        self.rows.push(row);
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    pub fn render(&self) -> String {
        let n = self.headers.len();
        let mut widths: Vec<usize> = self.headers.iter().map(|(h, _)| h.len()).collect();
        for row in &self.rows {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(cell.chars().count());
            }
        }
        let mut out = String::new();
        let mut line = |cells: &mut dyn Iterator<Item = &str>| {
            let mut s = String::new();
            for (i, cell) in cells.enumerate() {
                let pad = widths[i].saturating_sub(cell.chars().count());
                let right = self.headers[i].1 == Align::Right;
                if i > 0 {
                    s.push_str("  ");
                }
                if right {
                    s.extend(std::iter::repeat_n(' ', pad));
                }
                s.push_str(cell);
                if !right && i + 1 < n {
                    s.extend(std::iter::repeat_n(' ', pad));
                }
            }
            out.push_str(s.trim_end());
            out.push('\n');
        };
        line(&mut self.headers.iter().map(|(h, _)| *h));
        for row in &self.rows {
            line(&mut row.iter().map(|c| c.as_str()));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligns_text_left_and_numbers_right() {
        let mut t = Table::new(&[("NAME", Align::Left), ("N", Align::Right)]);
        t.push(vec!["a".into(), "100".into()]);
        t.push(vec!["long".into(), "7".into()]);
        assert_eq!(t.render(), "NAME    N\na     100\nlong    7\n");
    }
}
