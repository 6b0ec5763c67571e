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
        let mut widths = self.header_widths();
        for row in &self.rows {
            fit(&mut widths, row);
        }
        let mut out = self.line(&widths, &mut self.headers.iter().map(|(h, _)| *h));
        for row in &self.rows {
            out.push_str(&self.line(&widths, &mut row.iter().map(|c| c.as_str())));
        }
        out
    }

    /// The columns' widths before any row: their headers'.
    pub fn header_widths(&self) -> Vec<usize> {
        self.headers.iter().map(|(h, _)| h.len()).collect()
    }

    /// One line of `cells` laid out in columns of `widths` (a table written as it is
    /// read, without keeping its rows: widths from a first reading, [`fit`], lines from
    /// a second).
    pub fn line(&self, widths: &[usize], cells: &mut dyn Iterator<Item = &str>) -> String {
        let mut s = String::new();
        self.push_line(&mut s, widths, cells);
        s
    }

    /// [`Self::line`], appended to `out`.
    pub fn push_line<'a>(
        &self,
        out: &mut String,
        widths: &[usize],
        cells: impl Iterator<Item = &'a str>,
    ) {
        let n = self.headers.len();
        let start = out.len();
        for (i, cell) in cells.enumerate() {
            let pad = widths[i].saturating_sub(cell.chars().count());
            let right = self.headers[i].1 == Align::Right;
            if i > 0 {
                out.push_str("  ");
            }
            if right {
                out.extend(std::iter::repeat_n(' ', pad));
            }
            out.push_str(cell);
            if !right && i + 1 < n {
                out.extend(std::iter::repeat_n(' ', pad));
            }
        }
        let kept = out[start..].trim_end().len();
        out.truncate(start + kept);
        out.push('\n');
    }

    /// The header line.
    pub fn header_line(&self, widths: &[usize]) -> String {
        self.line(widths, &mut self.headers.iter().map(|(h, _)| *h))
    }
}

/// Widens `widths` to fit `row`.
pub fn fit(widths: &mut [usize], row: &[String]) {
    fit_cells(widths, row.iter().map(String::as_str));
}

/// [`fit`] for cells that are not Strings of their own.
pub fn fit_cells<'a>(widths: &mut [usize], row: impl Iterator<Item = &'a str>) {
    for (w, cell) in widths.iter_mut().zip(row) {
        *w = (*w).max(cell.chars().count());
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
