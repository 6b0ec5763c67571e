//! Pretty JSON as `serde_json::to_writer_pretty` writes it (two-space indentation), with
//! each line break and its indentation written in one piece.
//!
//! serde_json's `PrettyFormatter` writes the indentation one level at a time: a row of
//! `flows --format json` at depth 4 made a line break and four 2-byte writes before each
//! key, 9 million small writes (and `memcpy` calls) for 13,000 rows — a third of `flows`'
//! instructions went to its JSON (callgrind, 1 M packets of the mixed bench capture). The
//! output is byte for byte the same: only how it reaches the writer changes.

use serde::Serialize;
use serde_json::ser::Formatter;
use std::io::{self, Write};

/// `,` then a line break then indentation for up to [`PREFIX_LEVELS`] levels, sliced
/// to what one line needs; deeper levels (no tcpwhy document has them) go on level by level.
const PREFIX: &[u8] = b",\n                                                                ";
/// Indentation levels `PREFIX` holds: its spaces ÷ 2.
const PREFIX_LEVELS: usize = (PREFIX.len() - 2) / 2;
const INDENT: &[u8] = b"  ";

/// serde_json's `PrettyFormatter` with its default indent, writing whole lines' prefixes.
#[derive(Default)]
struct Pretty {
    depth: usize,
    has_value: bool,
}

impl Pretty {
    /// A line break (after a comma when `comma`) and the current indentation.
    fn new_line<W: ?Sized + Write>(&self, w: &mut W, comma: bool) -> io::Result<()> {
        let start = usize::from(!comma);
        let levels = self.depth.min(PREFIX_LEVELS);
        w.write_all(&PREFIX[start..2 + 2 * levels])?;
        for _ in levels..self.depth {
            w.write_all(INDENT)?;
        }
        Ok(())
    }
}

impl Formatter for Pretty {
    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.depth += 1;
        self.has_value = false;
        w.write_all(b"[")
    }

    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.depth = self.depth.saturating_sub(1);
        if self.has_value {
            self.new_line(w, false)?;
        }
        w.write_all(b"]")
    }

    fn begin_array_value<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.new_line(w, !first)
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.depth += 1;
        self.has_value = false;
        w.write_all(b"{")
    }

    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.depth = self.depth.saturating_sub(1);
        if self.has_value {
            self.new_line(w, false)?;
        }
        w.write_all(b"}")
    }

    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.new_line(w, !first)
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

/// `serde_json::to_writer_pretty`, faster (see the module doc).
pub(crate) fn to_writer_pretty<W: Write, T: ?Sized + Serialize>(
    out: W,
    value: &T,
) -> serde_json::Result<()> {
    to_writer_pretty_at(out, value, 0)
}

/// `value` as `to_writer_pretty` writes it when it sits `depth` levels deep in a
/// document (a row inside an array inside objects), so that pieces of one document can
/// be written separately, and in parallel, and joined.
pub(crate) fn to_writer_pretty_at<W: Write, T: ?Sized + Serialize>(
    out: W,
    value: &T,
    depth: usize,
) -> serde_json::Result<()> {
    let f = Pretty {
        depth,
        has_value: false,
    };
    value.serialize(&mut serde_json::Serializer::with_formatter(out, f))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Nesting deeper than the prefix holds, empty containers after values, arrays of
    /// objects: every case the two formatters could disagree on.
    #[test]
    fn same_bytes_as_serde_json_pretty() {
        let mut deep = serde_json::json!({"leaf": [1, {}, []]});
        for i in 0..40 {
            deep =
                serde_json::json!({ format!("k{i}"): deep, "empty": {}, "list": [{"a": []}, 2] });
        }
        let doc = serde_json::json!({"a": [], "b": {}, "c": [[], {}], "d": deep, "e": "x\"y"});
        let mut ours = Vec::new();
        to_writer_pretty(&mut ours, &doc).unwrap();
        let theirs = serde_json::to_vec_pretty(&doc).unwrap();
        assert_eq!(
            String::from_utf8(ours).unwrap(),
            String::from_utf8(theirs).unwrap()
        );
    }
}
