//! `// -----` splitting (`--split-input-file`).

/// One chunk of a split file: its text, byte offset and first line (1-based).
#[derive(Debug, Clone, PartialEq)]
pub struct Chunk<'a> {
    pub text: &'a str,
    pub offset: usize,
    pub first_line: usize,
}

/// Split at lines consisting of `// -----` (MLIR's marker).
pub fn split_input(text: &str) -> Vec<Chunk<'_>> {
    let mut out = vec![];
    let (mut start, mut line, mut first_line) = (0usize, 1usize, 1usize);
    let mut pos = 0usize;
    for l in text.split_inclusive('\n') {
        if l.trim_end() == "// -----" {
            out.push(Chunk {
                text: &text[start..pos],
                offset: start,
                first_line,
            });
            start = pos + l.len();
            first_line = line + 1;
        }
        pos += l.len();
        line += 1;
    }
    out.push(Chunk {
        text: &text[start..],
        offset: start,
        first_line,
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_keep_offsets_and_lines() {
        let t = "a\n// -----\nb\nc\n// -----\nd";
        let cs = split_input(t);
        assert_eq!(cs.len(), 3);
        assert_eq!(cs[1].text, "b\nc\n");
        assert_eq!(cs[1].first_line, 3);
        assert_eq!(&t[cs[2].offset..], "d");
        assert_eq!(cs[2].first_line, 6);
    }
}
