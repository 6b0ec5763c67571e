//! Diagnostics: what a parser did not understand, with the file, line number and text,
//! so partial success is explicit (style.md habit 8).

use std::fmt;

/// Longest excerpt of a line kept in a diagnostic (bytes, cut on a char boundary).
/// A bundle from a hostile or broken host can have megabyte lines; the excerpt is for a
/// human, who needs the start.
pub const MAX_DIAG_TEXT: usize = 160;

/// Most diagnostics one parser call keeps. Past this only the count grows: a file in an
/// unknown format would otherwise give one diagnostic per line.
pub const MAX_DIAGNOSTICS: usize = 64;

/// One thing a parser skipped or could not read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// The input: a bundle file name (`ss.txt`, `after/netstat.txt`) or a parser name
    /// when the text did not come from a file.
    pub source: String,
    /// 1-based line number, when the problem is on one line.
    pub line: Option<usize>,
    /// The line (or an excerpt of it, at most [`MAX_DIAG_TEXT`] bytes).
    pub text: String,
    /// What went wrong.
    pub message: String,
}

impl Diagnostic {
    /// A diagnostic about line `line` (1-based) whose text is `text`.
    pub fn at_line(source: &str, line: usize, text: &str, message: impl Into<String>) -> Self {
        Diagnostic {
            source: source.to_string(),
            line: Some(line),
            text: excerpt(text),
            message: message.into(),
        }
    }

    /// A diagnostic about a whole input (missing file, bad JSON, …).
    pub fn whole(source: &str, message: impl Into<String>) -> Self {
        Diagnostic {
            source: source.to_string(),
            line: None,
            text: String::new(),
            message: message.into(),
        }
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(l) => write!(f, "{}:{}: {}", self.source, l, self.message)?,
            None => write!(f, "{}: {}", self.source, self.message)?,
        }
        if !self.text.is_empty() {
            write!(f, " ({:?})", self.text)?;
        }
        Ok(())
    }
}

/// The first [`MAX_DIAG_TEXT`] bytes of `s`, cut on a char boundary.
pub(crate) fn excerpt(s: &str) -> String {
    if s.len() <= MAX_DIAG_TEXT {
        return s.to_string();
    }
    format!("{}…", truncate_to(s, MAX_DIAG_TEXT))
}

/// The first `max` bytes of `s` (fewer to end on a char boundary).
pub(crate) fn truncate_to(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// A parser's result: the facts it read, and what it skipped.
#[derive(Clone, Debug, Default)]
pub struct Parsed<T> {
    pub value: T,
    pub diagnostics: Vec<Diagnostic>,
}

/// Collects diagnostics up to [`MAX_DIAGNOSTICS`], then counts the rest into one summary.
#[derive(Debug)]
pub(crate) struct Diags {
    source: String,
    list: Vec<Diagnostic>,
    dropped: usize,
}

impl Diags {
    pub(crate) fn new(source: &str) -> Self {
        Diags {
            source: source.to_string(),
            list: Vec::new(),
            dropped: 0,
        }
    }

    pub(crate) fn line(&mut self, line: usize, text: &str, message: impl Into<String>) {
        if self.list.len() < MAX_DIAGNOSTICS {
            self.list
                .push(Diagnostic::at_line(&self.source, line, text, message));
        } else {
            self.dropped = self.dropped.saturating_add(1);
        }
    }

    pub(crate) fn whole(&mut self, message: impl Into<String>) {
        if self.list.len() < MAX_DIAGNOSTICS {
            self.list.push(Diagnostic::whole(&self.source, message));
        } else {
            self.dropped = self.dropped.saturating_add(1);
        }
    }

    /// The whole text as JSON, or a diagnostic saying why not.
    pub(crate) fn json(&mut self, text: &str) -> Option<serde_json::Value> {
        match serde_json::from_str(text) {
            Ok(v) => Some(v),
            Err(e) => {
                self.whole(format!("not JSON: {e}"));
                None
            }
        }
    }

    /// The whole text as a JSON array (what `ip -j` prints), or a diagnostic.
    pub(crate) fn json_array(&mut self, text: &str) -> Option<Vec<serde_json::Value>> {
        match self.json(text)? {
            serde_json::Value::Array(a) => Some(a),
            _ => {
                self.whole("not a JSON array");
                None
            }
        }
    }

    pub(crate) fn finish(mut self) -> Vec<Diagnostic> {
        if self.dropped > 0 {
            self.list.push(Diagnostic::whole(
                &self.source,
                format!("{} more diagnostics not kept", self.dropped),
            ));
        }
        self.list
    }

    pub(crate) fn wrap<T>(self, value: T) -> Parsed<T> {
        Parsed {
            value,
            diagnostics: self.finish(),
        }
    }
}
