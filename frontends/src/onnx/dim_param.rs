//! `dim_param`s that are expressions over other dims.
//!
//! torch.onnx names the dims it derives: a Hugging Face decoder exported with
//! a KV cache declares `attention_mask` as `[batch, past_sequence + sequence]`
//! and its `present.*` outputs likewise. Read as one opaque name, that dim
//! would be a fresh symbol unrelated to `PAST_SEQUENCE` and `SEQUENCE`, and
//! the mask could not be added to scores of shape `[…, PAST_SEQUENCE +
//! SEQUENCE]`. So a `dim_param` made only of names, integers, `+`, `-`, `*`
//! and parentheses, with at least one operator, becomes that expression over
//! the names' symbols (the runtime checks such an input dim against the
//! value of the expression). Anything else — `seq-len` included, where the
//! `-` is part of a name because no space surrounds it — stays one symbol.

use super::graph::Symbols;
use ge_ir::Dim;

#[derive(Clone, Debug, PartialEq)]
enum Token {
    Name(String),
    Int(i64),
    Op(char),
}

impl Symbols {
    /// The dim of a `dim_param`: an expression over other params when it is
    /// one (see the module docs), else the param's own symbol.
    /// Symbols equated by [`Symbols::equal`] are replaced by their expression.
    pub fn dim(&mut self, param: &str) -> Dim {
        let d = self.dim_unresolved(param);
        self.equal.resolve_dim(d)
    }

    fn dim_unresolved(&mut self, param: &str) -> Dim {
        match tokens(param) {
            Some(tokens)
                if tokens
                    .iter()
                    .any(|t| matches!(t, Token::Op(c) if "+-*".contains(*c))) =>
            {
                let mut parser = Parser {
                    tokens: &tokens,
                    at: 0,
                    symbols: self,
                };
                match parser.sum() {
                    Some(d) if parser.at == tokens.len() => d,
                    _ => Dim::sym(&self.symbol(param)),
                }
            }
            _ => Dim::sym(&self.symbol(param)),
        }
    }
}

/// Split into names, integers and operators; `None` for any other character,
/// or a `-` not surrounded by spaces (then it belongs to a name like `seq-len`).
fn tokens(text: &str) -> Option<Vec<Token>> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = vec![];
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == ' ' {
            i += 1;
        } else if c.is_ascii_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push(Token::Name(chars[start..i].iter().collect()));
        } else if c.is_ascii_digit() {
            let start = i;
            while i < chars.len() && chars[i].is_ascii_digit() {
                i += 1;
            }
            let digits: String = chars[start..i].iter().collect();
            out.push(Token::Int(digits.parse().ok()?));
        } else if c == '-' {
            let spaced = |j: Option<usize>| j.and_then(|j| chars.get(j)).is_none_or(|c| *c == ' ');
            if !spaced(i.checked_sub(1)) || !spaced(Some(i + 1)) {
                return None;
            }
            out.push(Token::Op(c));
            i += 1;
        } else if "+*()".contains(c) {
            out.push(Token::Op(c));
            i += 1;
        } else {
            return None;
        }
    }
    Some(out)
}

/// `sum := product (('+' | '-') product)*`, `product := atom ('*' atom)*`,
/// `atom := name | int | '(' sum ')'`.
struct Parser<'a> {
    tokens: &'a [Token],
    at: usize,
    symbols: &'a mut Symbols,
}

impl Parser<'_> {
    fn peek_op(&self) -> Option<char> {
        match self.tokens.get(self.at) {
            Some(Token::Op(c)) => Some(*c),
            _ => None,
        }
    }

    fn sum(&mut self) -> Option<Dim> {
        let mut d = self.product()?;
        while let Some(op @ ('+' | '-')) = self.peek_op() {
            self.at += 1;
            let rhs = self.product()?;
            d = if op == '+' { d.add(rhs) } else { d.sub(rhs) };
        }
        Some(d)
    }

    fn product(&mut self) -> Option<Dim> {
        let mut d = self.atom()?;
        while self.peek_op() == Some('*') {
            self.at += 1;
            d = d.mul(self.atom()?);
        }
        Some(d)
    }

    fn atom(&mut self) -> Option<Dim> {
        let token = self.tokens.get(self.at)?.clone();
        self.at += 1;
        match token {
            Token::Name(name) => Some(Dim::sym(&self.symbols.symbol(&name))),
            Token::Int(n) => Some(Dim::Static(n)),
            Token::Op('(') => {
                let d = self.sum()?;
                (self.tokens.get(self.at) == Some(&Token::Op(')'))).then(|| self.at += 1)?;
                Some(d)
            }
            Token::Op(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dim(s: &mut Symbols, p: &str) -> String {
        s.dim(p).to_string()
    }

    #[test]
    fn expressions_over_params_become_dim_expressions() {
        let mut s = Symbols::default();
        assert_eq!(
            dim(&mut s, "past_sequence + sequence"),
            "(PAST_SEQUENCE+SEQUENCE)"
        );
        assert_eq!(dim(&mut s, "sequence"), "SEQUENCE");
        assert_eq!(
            dim(&mut s, "past_sequence_length + 1"),
            "(PAST_SEQUENCE_LENGTH+1)"
        );
        assert_eq!(dim(&mut s, "2 * (batch + 1)"), dim(&mut s, "2*batch + 2"));
        assert_eq!(dim(&mut s, "total - 1"), "(TOTAL-1)");
    }

    #[test]
    fn other_params_stay_one_symbol() {
        let mut s = Symbols::default();
        assert_eq!(dim(&mut s, "seq-len"), "SEQ_LEN");
        assert_eq!(dim(&mut s, "batch"), "BATCH");
        // Not an expression: unbalanced, dangling operator, other characters.
        assert_eq!(dim(&mut s, "(a + b"), "S_A___B");
        assert_eq!(dim(&mut s, "a +"), "A__");
        assert_eq!(dim(&mut s, "a / 2"), "A___2");
    }
}
