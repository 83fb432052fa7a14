//! Doc comments to the summary and description strings of a definition.
//!
//! The first paragraph is the summary; the rest is the description, with
//! soft line breaks joined as Markdown renders them: the lines of a
//! paragraph or of a list item (`- `) join with a space, list items with a
//! newline, blocks with a blank line, and a fenced code block (```) keeps
//! its lines as written.

use syn::{Attribute, Expr, Lit, Meta};

/// The text of the `#[doc = "..."]` attributes, one entry per line.
pub fn doc_lines(attrs: &[Attribute]) -> syn::Result<Vec<String>> {
    let mut out = vec![];
    for a in attrs {
        if !a.path().is_ident("doc") {
            continue;
        }
        let Meta::NameValue(nv) = &a.meta else {
            return Err(syn::Error::new_spanned(a, "expected #[doc = \"...\"]"));
        };
        let text = match &nv.value {
            Expr::Lit(l) => match &l.lit {
                Lit::Str(s) => s.value(),
                _ => return Err(syn::Error::new_spanned(&nv.value, "expected a string")),
            },
            // A string from a macro_rules fragment (`#[doc = $summary]`).
            Expr::Group(g) => match &*g.expr {
                Expr::Lit(l) => match &l.lit {
                    Lit::Str(s) => s.value(),
                    _ => return Err(syn::Error::new_spanned(&nv.value, "expected a string")),
                },
                _ => return Err(syn::Error::new_spanned(&nv.value, "expected a string")),
            },
            _ => return Err(syn::Error::new_spanned(&nv.value, "expected a string")),
        };
        for line in text.split('\n') {
            out.push(line.strip_prefix(' ').unwrap_or(line).to_string());
        }
    }
    Ok(out)
}

/// One line of text with a paragraph's soft breaks joined.
pub fn one_line(lines: &[String]) -> String {
    lines
        .iter()
        .map(|l| l.trim())
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// (summary, description) of doc lines.
pub fn summary_and_description(lines: &[String]) -> (String, String) {
    let start = lines.iter().position(|l| !l.trim().is_empty());
    let Some(start) = start else {
        return (String::new(), String::new());
    };
    let end = lines[start..]
        .iter()
        .position(|l| l.trim().is_empty())
        .map_or(lines.len(), |e| start + e);
    (one_line(&lines[start..end]), render(&lines[end..]))
}

enum Block {
    Para(Vec<String>),
    List(Vec<Vec<String>>),
    Code(Vec<String>),
}

/// Markdown text with soft line breaks joined (see the module docs).
pub fn render(lines: &[String]) -> String {
    let mut blocks: Vec<Block> = vec![];
    let mut cur: Option<Block> = None;
    let mut in_code = false;
    for line in lines {
        let t = line.trim();
        if in_code {
            if let Some(Block::Code(c)) = &mut cur {
                c.push(line.clone());
            }
            if t.starts_with("```") {
                in_code = false;
                blocks.extend(cur.take());
            }
            continue;
        }
        if t.starts_with("```") {
            blocks.extend(cur.take());
            cur = Some(Block::Code(vec![line.clone()]));
            in_code = true;
            continue;
        }
        if t.is_empty() {
            blocks.extend(cur.take());
            continue;
        }
        if let Some(item) = t.strip_prefix("- ") {
            match &mut cur {
                Some(Block::List(items)) => items.push(vec![format!("- {item}")]),
                _ => {
                    blocks.extend(cur.take());
                    cur = Some(Block::List(vec![vec![format!("- {item}")]]));
                }
            }
            continue;
        }
        match &mut cur {
            Some(Block::Para(p)) => p.push(t.to_string()),
            Some(Block::List(items)) => {
                if let Some(last) = items.last_mut() {
                    last.push(t.to_string())
                }
            }
            _ => {
                blocks.extend(cur.take());
                cur = Some(Block::Para(vec![t.to_string()]));
            }
        }
    }
    blocks.extend(cur.take());
    blocks
        .iter()
        .map(|b| match b {
            Block::Para(p) => p.join(" "),
            Block::List(items) => items
                .iter()
                .map(|i| i.join(" "))
                .collect::<Vec<_>>()
                .join("\n"),
            Block::Code(c) => c.join("\n"),
        })
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// Summary and description as one rustdoc text; fenced code is marked `text`.
pub fn for_rustdoc(summary: &str, description: &str) -> String {
    let mut out = summary.to_string();
    if !description.is_empty() {
        out.push_str("\n\n");
        let mut open = false;
        for (i, line) in description.split('\n').enumerate() {
            if i > 0 {
                out.push('\n');
            }
            if line.trim_start().starts_with("```") {
                open = !open;
                if open && line.trim() == "```" {
                    out.push_str("```text");
                    continue;
                }
            }
            out.push_str(line);
        }
    }
    out
}
