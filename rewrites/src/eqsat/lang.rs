//! The e-graph language: a function's dataflow with attributes as children.
//!
//! Design choice (issue 5 asks us to pick and document): an op node carries
//! its name and the *names* of its attributes; the attribute *values* are
//! children, each an `Attr` leaf e-class. Rules therefore capture attributes
//! exactly like operands (`?p` in `{perm = ?p}` binds the class of the perm
//! leaf), every rule compiles to an ordinary egg pattern, and attribute
//! arithmetic on the right side simply adds new `Attr` leaves.

use egg::{Id, Language};
use ge_ir::attributes::Attribute;
use ge_ir::Ident;
use std::cmp::Ordering;
use std::hash::{Hash, Hasher};

/// An attribute ordered by identity (interned pointers are stable in a run).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AttrKey(pub Attribute);

impl PartialOrd for AttrKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for AttrKey {
    fn cmp(&self, other: &Self) -> Ordering {
        let h = |a: &AttrKey| {
            let mut s = std::collections::hash_map::DefaultHasher::new();
            a.0.hash(&mut s);
            s.finish()
        };
        if self.0 == other.0 {
            Ordering::Equal
        } else {
            h(self)
                .cmp(&h(other))
                .then_with(|| format!("{}", self.0).cmp(&format!("{}", other.0)))
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Node {
    /// An op: `children` are its operands followed by one `Attr` leaf per
    /// name in `attrs` (sorted). Multi-result ops produce a tuple consumed by `Proj`.
    Op {
        name: Ident,
        attrs: Box<[Ident]>,
        children: Box<[Id]>,
    },
    /// Result `index` of a multi-result op.
    Proj { index: u32, child: Id },
    /// Function argument `n`.
    Arg(u32),
    /// An attribute value (as an op child, or the value of a constant).
    Attr(AttrKey),
    /// An op the e-graph does not model (a call, an op with regions, an
    /// unregistered or effectful op, one whose types its `infer` hook does not
    /// reproduce): kept as it is, with its operands still optimised. `id`
    /// indexes the translation's opaque ops. `children` are the op's operands,
    /// then the values its regions use from the function body, then — if
    /// `ordered` — the class of the opaque op before it, so extraction keeps
    /// every opaque op and their program order.
    Opaque {
        id: u32,
        ordered: bool,
        children: Box<[Id]>,
    },
}

impl Node {
    pub fn op(name: Ident, attrs: Vec<Ident>, children: Vec<Id>) -> Node {
        Node::Op {
            name,
            attrs: attrs.into(),
            children: children.into(),
        }
    }

    /// Number of operand children (attribute children excluded).
    pub fn num_operands(&self) -> usize {
        match self {
            Node::Op {
                attrs, children, ..
            } => children.len() - attrs.len(),
            Node::Proj { .. } => 1,
            Node::Opaque {
                ordered, children, ..
            } => children.len() - usize::from(*ordered),
            _ => 0,
        }
    }
}

impl Language for Node {
    type Discriminant = (u8, Option<Ident>, usize);

    fn discriminant(&self) -> Self::Discriminant {
        match self {
            Node::Op {
                name,
                attrs,
                children,
            } => (0, Some(*name), attrs.len() * 1000 + children.len()),
            Node::Proj { index, .. } => (1, None, *index as usize),
            Node::Arg(n) => (2, None, *n as usize),
            Node::Attr(_) => (3, None, 0),
            Node::Opaque { id, .. } => (4, None, *id as usize),
        }
    }

    fn matches(&self, other: &Self) -> bool {
        match (self, other) {
            (
                Node::Op {
                    name: a,
                    attrs: aa,
                    children: ac,
                },
                Node::Op {
                    name: b,
                    attrs: ba,
                    children: bc,
                },
            ) => a == b && aa == ba && ac.len() == bc.len(),
            (Node::Proj { index: a, .. }, Node::Proj { index: b, .. }) => a == b,
            (Node::Arg(a), Node::Arg(b)) => a == b,
            (Node::Attr(a), Node::Attr(b)) => a == b,
            (Node::Opaque { id: a, .. }, Node::Opaque { id: b, .. }) => a == b,
            _ => false,
        }
    }

    fn children(&self) -> &[Id] {
        match self {
            Node::Op { children, .. } | Node::Opaque { children, .. } => children,
            Node::Proj { child, .. } => std::slice::from_ref(child),
            Node::Arg(_) | Node::Attr(_) => &[],
        }
    }

    fn children_mut(&mut self) -> &mut [Id] {
        match self {
            Node::Op { children, .. } | Node::Opaque { children, .. } => children,
            Node::Proj { child, .. } => std::slice::from_mut(child),
            Node::Arg(_) | Node::Attr(_) => &mut [],
        }
    }
}

impl std::fmt::Display for Node {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Node::Op { name, .. } => write!(f, "{name}"),
            Node::Proj { index, .. } => write!(f, "#{index}"),
            Node::Arg(n) => write!(f, "arg{n}"),
            Node::Attr(a) => write!(f, "{}", a.0),
            Node::Opaque { id, .. } => write!(f, "opaque{id}"),
        }
    }
}
