//! Byte offset → line/column arithmetic.

use super::Span;

/// Start offsets of every line, for O(log n) offset → (line, col) lookups.
#[derive(Debug)]
pub struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    /// Indexes the line starts of `text`.
    #[must_use]
    pub fn new(text: &str) -> Self {
        let mut starts = vec![0];
        starts.extend(
            text.bytes()
                .enumerate()
                .filter(|&(_, b)| b == b'\n')
                .map(|(i, _)| i + 1),
        );
        Self { starts }
    }

    /// 1-based (line, column) of a byte offset; the column counts bytes.
    #[must_use]
    pub fn position(&self, offset: usize) -> (usize, usize) {
        let line = self.starts.partition_point(|&s| s <= offset) - 1;
        (line + 1, offset - self.starts[line] + 1)
    }

    /// The span of `start..end`. The end line is that of the last byte, so a span ending in a
    /// newline does not spill onto the next line.
    #[must_use]
    pub fn span(&self, start: usize, end: usize) -> Span {
        let (line_start, col_start) = self.position(start);
        let last = if end > start { end - 1 } else { start };
        let (line_end, col_last) = self.position(last);
        Span {
            byte_start: start,
            byte_end: end,
            line_start,
            col_start,
            line_end,
            col_end: col_last + usize::from(end > start),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_and_spans() {
        let text = "ab\ncd\n\nef";
        let index = LineIndex::new(text);
        assert_eq!(index.position(0), (1, 1));
        assert_eq!(index.position(3), (2, 1));
        assert_eq!(index.position(7), (4, 1));
        let span = index.span(3, 6);
        assert_eq!((span.line_start, span.line_end, span.col_end), (2, 2, 4));
    }
}
