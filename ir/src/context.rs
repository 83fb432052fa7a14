//! The registry a tool is built from: dialects and their ops, passes and named
//! pipelines. Built once at start-up, then shared read-only (it is `Sync`).

use crate::interfaces::{InterfaceTable, OpInterface};
use crate::opdef::{Dialect, OpDef};
use crate::pass::PassRegistry;
use std::collections::HashMap;

pub struct Context {
    ops: HashMap<&'static str, &'static OpDef>,
    dialects: Vec<&'static Dialect>,
    /// Accept ops of unknown dialects in generic form (`--allow-unregistered-dialect`).
    pub allow_unregistered: bool,
    /// Use rayon's threads where work splits (parsing a module's functions);
    /// `ge-opt --disable-threading` turns it off.
    pub threading: bool,
    pub passes: PassRegistry,
    /// The op that materialises constants (a `ConstantLike` op with a `value`
    /// attribute), e.g. `data.constant`; folding needs it.
    pub constant_op: Option<&'static str>,
    /// Data other crates attach (e.g. rule files loaded with `--rewrite-rules`).
    pub extensions: Vec<std::sync::Arc<dyn std::any::Any + Send + Sync>>,
    /// Op interfaces registered at run time (plugins), by op.
    pub interfaces: InterfaceTable,
}

impl Default for Context {
    fn default() -> Self {
        Context::new()
    }
}

/// A context with only the builtin dialect (for parsing types and attributes alone).
pub fn bare() -> &'static Context {
    static BARE: std::sync::OnceLock<Context> = std::sync::OnceLock::new();
    BARE.get_or_init(|| {
        let mut c = Context {
            ops: HashMap::new(),
            dialects: vec![],
            allow_unregistered: true,
            threading: true,
            passes: PassRegistry::default(),
            constant_op: None,
            extensions: vec![],
            interfaces: InterfaceTable::default(),
        };
        c.register_dialect(&crate::builtin::BUILTIN);
        c
    })
}

impl Context {
    /// A context with the builtin dialect and the core passes registered.
    pub fn new() -> Context {
        let mut c = Context {
            ops: HashMap::new(),
            dialects: vec![],
            allow_unregistered: false,
            threading: true,
            passes: PassRegistry::default(),
            constant_op: None,
            extensions: vec![],
            interfaces: InterfaceTable::default(),
        };
        c.register_dialect(&crate::builtin::BUILTIN);
        crate::passes::register_core_passes(&mut c.passes);
        c
    }

    pub fn register_dialect(&mut self, d: &'static Dialect) {
        if self.dialects.iter().any(|x| x.name == d.name) {
            return;
        }
        for op in d.ops() {
            self.ops.insert(op.name, op);
        }
        self.dialects.push(d);
    }

    /// Attach interface `iface` to op `def` at run time (a plugin extending
    /// an op); it wins over an interface of the same type in the declaration.
    pub fn register_interface(&self, def: &'static OpDef, iface: Box<dyn OpInterface>) {
        self.interfaces.register(def, iface);
    }

    /// Interface `T` of op `def`: a run-time registration, else the declaration's.
    pub fn op_interface<T: OpInterface>(&self, def: &'static OpDef) -> Option<&'static T> {
        self.interfaces
            .get::<T>(def)
            .or_else(|| def.interface::<T>())
    }

    /// The names of the interfaces op `def` implements, declared and registered.
    pub fn interface_names(&self, def: &'static OpDef) -> Vec<&'static str> {
        let mut names: Vec<&'static str> =
            def.interfaces.iter().map(|i| i.interface_name()).collect();
        for i in self.interfaces.of(def) {
            if !names.contains(&i.interface_name()) {
                names.push(i.interface_name());
            }
        }
        names
    }

    /// The first extension of type `T`.
    pub fn extension<T: 'static>(&self) -> Option<&T> {
        self.extensions.iter().find_map(|e| e.downcast_ref::<T>())
    }

    pub fn op_def(&self, name: &str) -> Option<&'static OpDef> {
        self.ops.get(name).copied()
    }

    pub fn is_dialect_registered(&self, name: &str) -> bool {
        self.dialects.iter().any(|d| d.name == name)
    }

    pub fn dialects(&self) -> &[&'static Dialect] {
        &self.dialects
    }

    /// All registered ops sorted by name.
    pub fn ops(&self) -> Vec<&'static OpDef> {
        let mut v: Vec<_> = self.ops.values().copied().collect();
        v.sort_by_key(|d| d.name);
        v
    }
}
