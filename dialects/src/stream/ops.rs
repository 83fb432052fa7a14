//! The ops of the `stream` dialect.

use crate::memory::ops::View;
use crate::memory::{
    arena_info, arena_type, byte_size_bound, check_place, is_arena, nth_operand, nth_result,
    ArenaInfo,
};
use ge_ir::body::{BlockId, Body, OpId, ValueDef, ValueId};
use ge_ir::def_op;
use ge_ir::interp::SemCtx;
use ge_ir::location::Location;
use ge_ir::opdef::{AttrKind, CustomSyntax, InferCtx, OpDef, OpError, Trait};
use ge_ir::parser::{OpParser, PResult};
use ge_ir::printer::OpPrinter;
use ge_ir::tensor::Tensor;
use ge_ir::DType;
use std::collections::HashMap;

/// `line L` of a location, for messages that point at a second op.
pub(crate) fn at_line(l: Location) -> String {
    match l.file_line_col() {
        Some((_, line, _)) => format!("line {line}"),
        None => format!("{l}"),
    }
}

/// The stream a task op runs on (`stream`, which every task op but
/// `stream.end` has); `None` when missing or mistyped.
fn stream_of(d: &ge_ir::OpData) -> Option<i64> {
    d.attr("stream").and_then(|a| a.as_int())
}

/// Check that id attributes (`None`: missing or mistyped, which the generic
/// attribute check reports) are not negative.
fn non_negative(ids: &[(&str, Option<i64>)]) -> Result<(), OpError> {
    for &(n, v) in ids {
        let Some(v) = v else {
            continue;
        };
        if v < 0 {
            return Err(format!("has negative {n} id {v}").into());
        }
    }
    Ok(())
}

/// Task ops run only as part of a `stream.program`.
fn sem_task(cx: &SemCtx, _: &[&Tensor]) -> Result<Vec<Tensor>, String> {
    Err(format!(
        "'{}' runs only inside a stream.program",
        cx.body.op(cx.op).name
    ))
}

// ---- stream.program ------------------------------------------------------------------

fn parse_program(p: &mut OpParser<'_, '_, '_>) -> PResult<()> {
    p.expect_punct("(")?;
    let refs = p.parse_operand_list()?;
    p.expect_punct(")")?;
    for (kw, attr) in [("streams", "num_streams"), ("events", "num_events")] {
        p.expect_keyword(kw)?;
        let span = p.here();
        let v = p.parse_attr_value(AttrKind::I64)?;
        p.add_attr(attr, v, span)?;
    }
    p.parse_optional_attr_dict_with_keyword()?;
    let types = vec![arena_type(); refs.len()];
    p.operands = p.resolve_operands(&refs, &types)?;
    p.parse_region(&[])?;
    p.result_types = Some(types);
    Ok(())
}

fn print_program(pr: &mut OpPrinter<'_, '_>, op: OpId) {
    let d = pr.body.op(op);
    let operands = d.operands().to_vec();
    let a = Program::attrs(d);
    let (ns, ne) = (a.num_streams(), a.num_events());
    pr.write("(");
    pr.value_list(&operands);
    pr.write(&format!(") streams {ns} events {ne}"));
    pr.attr_dict(op, &["num_streams", "num_events"], true);
    if let Some(&r) = pr.body.op(op).regions().first() {
        pr.write(" ");
        pr.region(op, r, true);
    }
}

/// Which arena argument (of the program's entry block `entry`) a view views.
fn view_arena_arg(inner: &Body, view: OpId, entry: BlockId) -> Option<usize> {
    let v = *inner.op(view).operands().first()?;
    match inner.value(v).def {
        ValueDef::BlockArg { block, index } if block == entry => Some(index as usize),
        _ => None,
    }
}

/// Whether `v` is defined by an op of the program's own task list.
fn defined_in(inner: &Body, v: ValueId, entry: BlockId) -> bool {
    inner
        .defining_op(v)
        .is_some_and(|o| inner.op(o).parent_block() == Some(entry))
}

/// Whether `v` is a constant (a `ConstantLike` op with a `value`), wherever it
/// is defined: passes may hoist or merge constants out of the program.
pub(crate) fn is_constant(body: &Body, v: ValueId) -> bool {
    body.defining_op(v).is_some_and(|o| {
        let d = body.op(o);
        d.has_trait(Trait::ConstantLike) && d.attr("value").is_some()
    })
}

fn def_name(inner: &Body, v: ValueId) -> &'static str {
    match inner.defining_op(v) {
        Some(o) => match inner.op(o).def {
            Some(d) => d.name,
            None => "an unregistered op",
        },
        None => "a block argument",
    }
}

fn verify_program(body: &Body, op: OpId) -> Result<(), OpError> {
    let d = body.op(op);
    let (ns, ne) = verify_program_signature(body, d)?;
    let inner = d.region_body(body);
    let Some(&region) = d.regions().first() else {
        return Err("has no region".into());
    };
    let Some(entry) = inner.entry_block(region) else {
        return Err("has an empty region: expected a task list ending in stream.end".into());
    };
    let args = &inner.block(entry).args;
    if args.len() != d.operands().len() || args.iter().any(|&a| !is_arena(inner.value_type(a))) {
        return Err(format!(
            "region must take one !memory.arena argument per operand ({} operands, {} arguments)",
            d.operands().len(),
            args.len()
        )
        .into());
    }
    let infos: Vec<Option<ArenaInfo>> = d.operands().iter().map(|&v| arena_info(body, v)).collect();
    let tasks = TaskList {
        inner,
        entry,
        ops: inner.block_ops(entry).collect(),
    };
    // Labels first: jumps may go forward.
    let labels = tasks.labels()?;
    let mut recorded: HashMap<i64, Vec<i64>> = HashMap::new();
    for (pos, &o) in tasks.ops.iter().enumerate() {
        let od = inner.op(o);
        let name = od.name.as_str();
        // Negative ids are the op's own verifier's business.
        if tasks.stream(o).is_some_and(|s| s < 0) || tasks.event(o).is_some_and(|e| e < 0) {
            continue;
        }
        if let Some(s) = tasks.stream(o) {
            if s >= ns {
                return Err(tasks.at(
                    o,
                    format!("'{name}' uses stream {s}, but the program has num_streams = {ns}"),
                ));
            }
        }
        match name {
            "memory.view" => tasks.check_view(o, &infos)?,
            "memory.weight" | "data.constant" | "stream.end" | "stream.label" => {}
            "stream.launch" => tasks.check_launch(o)?,
            "stream.memcpy" => tasks.check_memcpy(o)?,
            "stream.record" | "stream.wait" => tasks.check_event(o, ne, &mut recorded)?,
            "stream.switch" | "stream.goto" => tasks.check_jump(o, pos, &labels)?,
            other => {
                return Err(tasks.at(
                    o,
                    format!(
                        "'{other}' cannot appear in a stream.program (only memory.view, memory.weight, data.constant and stream task ops)"
                    ),
                ))
            }
        }
    }
    Ok(())
}

/// A stream.program's operands and results (one arena each), and its stream
/// and event counts, which it returns.
fn verify_program_signature(body: &Body, d: &ge_ir::OpData) -> Result<(i64, i64), OpError> {
    for (i, &v) in d.operands().iter().enumerate() {
        let t = body.value_type(v);
        if !is_arena(t) {
            return Err(format!("operand #{i} must be !memory.arena, but got '{t}'").into());
        }
    }
    if d.results().len() != d.operands().len()
        || d.results().iter().any(|&r| !is_arena(body.value_type(r)))
    {
        return Err(format!(
            "must have one !memory.arena result per arena operand ({} operands, {} results)",
            d.operands().len(),
            d.results().len()
        )
        .into());
    }
    let a = Program::attrs(d);
    let (ns, ne) = (a.num_streams(), a.num_events());
    if ns < 1 {
        return Err(format!("num_streams must be at least 1, but is {ns}").into());
    }
    if ne < 0 {
        return Err(format!("num_events must not be negative, but is {ne}").into());
    }
    Ok((ns, ne))
}

/// The task list of a stream.program (the ops of its entry block), which
/// `verify_program` checks task by task.
struct TaskList<'a> {
    inner: &'a Body,
    entry: BlockId,
    ops: Vec<OpId>,
}

impl TaskList<'_> {
    fn stream(&self, o: OpId) -> Option<i64> {
        stream_of(self.inner.op(o))
    }

    fn event(&self, o: OpId) -> Option<i64> {
        self.inner.op(o).attr("event").and_then(|a| a.as_int())
    }

    /// An error at task `o`.
    fn at(&self, o: OpId, msg: String) -> OpError {
        OpError {
            msg,
            loc: Some(self.inner.op(o).loc),
        }
    }

    /// Whether `v` is a memory.view of the program's own task list.
    fn is_program_view(&self, v: ValueId) -> bool {
        defined_in(self.inner, v, self.entry) && def_name(self.inner, v) == "memory.view"
    }

    /// What defines `v`, for messages: its op, or "outside the program".
    fn origin(&self, v: ValueId) -> &'static str {
        if defined_in(self.inner, v, self.entry) {
            def_name(self.inner, v)
        } else {
            "outside the program"
        }
    }

    /// Every stream.label: its id → (position in the list, stream).
    fn labels(&self) -> Result<HashMap<i64, (usize, i64)>, OpError> {
        let mut labels: HashMap<i64, (usize, i64)> = HashMap::new();
        for (pos, &o) in self.ops.iter().enumerate() {
            if self.inner.op(o).name.as_str() == "stream.label" {
                let Some(id) = Label::attrs(self.inner.op(o)).label() else {
                    continue;
                };
                let s = self.stream(o).unwrap_or(0);
                if let Some((p0, _)) = labels.insert(id, (pos, s)) {
                    return Err(self.at(
                        o,
                        format!(
                            "has label {id} twice (first at {})",
                            at_line(self.inner.op(self.ops[p0]).loc)
                        ),
                    ));
                }
            }
        }
        Ok(labels)
    }

    /// A memory.view views one of the program's arena arguments, inside it.
    fn check_view(&self, o: OpId, infos: &[Option<ArenaInfo>]) -> Result<(), OpError> {
        let Some(k) = view_arena_arg(self.inner, o, self.entry) else {
            return Err(self.at(
                o,
                "views in a stream.program must view one of the program's arena arguments".into(),
            ));
        };
        if let Some(Some(info)) = infos.get(k) {
            let off = View::attrs(self.inner.op(o)).offset().unwrap_or(0);
            if let Some(r) = nth_result(self.inner, o, 0) {
                let t = self.inner.value_type(r);
                check_place("view", t, off, info).map_err(|m| self.at(o, m))?;
            }
        }
        Ok(())
    }

    /// A launch's inputs are views of the program or constants, its outputs views.
    fn check_launch(&self, o: OpId) -> Result<(), OpError> {
        let od = self.inner.op(o);
        let segs = od
            .attr("operand_segment_sizes")
            .and_then(|a| a.as_i64_array())
            .unwrap_or_else(|| vec![od.operands().len() as i64, 0]);
        let n_in = segs.first().copied().unwrap_or(0).max(0) as usize;
        for (i, &v) in od.operands().iter().enumerate() {
            let ok = self.is_program_view(v) || (i < n_in && is_constant(self.inner, v));
            if !ok {
                let def = if is_constant(self.inner, v) {
                    def_name(self.inner, v)
                } else {
                    self.origin(v)
                };
                let what = if i < n_in {
                    format!("input #{i} must be a memory.view of the program or a constant (memory.weight, data.constant)")
                } else {
                    format!("output #{} must be a memory.view of the program", i - n_in)
                };
                return Err(self.at(o, format!("'stream.launch' {what}, but comes from {def}")));
            }
        }
        Ok(())
    }

    /// A memcpy copies between views of the program.
    fn check_memcpy(&self, o: OpId) -> Result<(), OpError> {
        for (i, &v) in self.inner.op(o).operands().iter().enumerate() {
            if !self.is_program_view(v) {
                return Err(self.at(
                    o,
                    format!(
                        "'stream.memcpy' {} must be a memory.view of the program, but comes from {}",
                        if i == 0 { "source" } else { "destination" },
                        self.origin(v)
                    ),
                ));
            }
        }
        Ok(())
    }

    /// An event is in range, and a wait waits for an event an earlier record
    /// on another stream records (which `recorded`, event → streams, collects).
    fn check_event(
        &self,
        o: OpId,
        ne: i64,
        recorded: &mut HashMap<i64, Vec<i64>>,
    ) -> Result<(), OpError> {
        let Some(e) = self.event(o) else {
            return Ok(());
        };
        let name = self.inner.op(o).name.as_str();
        let s = self.stream(o).unwrap_or(0);
        if e >= ne {
            return Err(self.at(
                o,
                format!("'{name}' uses event {e}, but the program has num_events = {ne}"),
            ));
        }
        if name == "stream.record" {
            recorded.entry(e).or_default().push(s);
        } else if !recorded.get(&e).is_some_and(|v| v.iter().any(|&x| x != s)) {
            return Err(self.at(
                o,
                format!(
                    "'stream.wait' on stream {s} waits for event {e}, which no earlier stream.record on another stream records"
                ),
            ));
        }
        Ok(())
    }

    /// A switch reads a view of the program; every jump target exists, is on
    /// the jump's stream, and no task of another stream lies in between.
    fn check_jump(
        &self,
        o: OpId,
        pos: usize,
        labels: &HashMap<i64, (usize, i64)>,
    ) -> Result<(), OpError> {
        let od = self.inner.op(o);
        let name = od.name.as_str();
        let s = self.stream(o).unwrap_or(0);
        if let Some(&v) = od.operands().first() {
            if !self.is_program_view(v) {
                return Err(self.at(
                    o,
                    "'stream.switch' must read its value from a memory.view of the program".into(),
                ));
            }
        }
        let targets = match name {
            "stream.goto" => Goto::attrs(od).label().into_iter().collect(),
            _ => Switch::attrs(od).targets().unwrap_or_default(),
        };
        for t in targets {
            let Some(&(lp, ls)) = labels.get(&t) else {
                return Err(self.at(
                    o,
                    format!("'{name}' jumps to label {t}, which does not exist"),
                ));
            };
            if ls != s {
                return Err(self.at(
                    o,
                    format!("'{name}' on stream {s} jumps to label {t}, which is on stream {ls}"),
                ));
            }
            let (lo, hi) = (pos.min(lp), pos.max(lp));
            if let Some(&other) = self.ops[lo..=hi]
                .iter()
                .find(|&&x| self.stream(x).is_some_and(|xs| xs != s))
            {
                return Err(self.at(
                    o,
                    format!(
                        "'{name}' on stream {s} jumps over '{}' on stream {} (at {}): every task between a jump and its label must be on the jump's stream",
                        self.inner.op(other).name,
                        self.stream(other).unwrap_or(0),
                        at_line(self.inner.op(other).loc)
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// One arena result per arena operand.
fn infer_program(cx: &InferCtx) -> Result<Vec<ge_ir::Type>, String> {
    Ok(vec![arena_type(); cx.operand_types.len()])
}

def_op! {
    /// The task program: tasks on streams in program order
    ///
    /// `%a1 = stream.program(%a0) streams 2 events 1 { ^bb0(%arena: !memory.arena): …
    /// stream.end }` holds the tasks of a model. The operands are the arenas the tasks work on;
    /// inside, they are the entry block's arguments and `memory.view`s of them are the buffers
    /// tasks read and write. The results are the arenas' final contents. The verifier checks
    /// stream ids < `num_streams`, event ids < `num_events`, that every `stream.wait` follows a
    /// `stream.record` of its event on another stream in program order, and that jumps stay on
    /// one stream. The interpreter runs the tasks in program order (a valid schedule by those
    /// rules) and reports data races: accesses to the same bytes from two streams that no
    /// record/wait chain orders.
    pub Program = "stream.program" {
        operands { arenas: Variadic<Any> },
        results { results: Variadic<Any> },
        attrs {
            /// number of streams
            num_streams: I64 = 1,
            /// number of events
            num_events: I64 = 0,
        },
        regions {
            /// the task list (arena arguments, views, constants, tasks, stream.end)
            tasks,
        },
        traits [SingleBlock],
        syntax: CustomSyntax {
            parse: parse_program,
            print: print_program,
        },
        verify: verify_program,
        infer: infer_program,
        semantics: super::exec::sem_program,
    }
}

// ---- stream.launch -----------------------------------------------------------------------

fn verify_launch(body: &Body, op: OpId) -> Result<(), OpError> {
    let d = body.op(op);
    let a = Launch::attrs(d);
    non_negative(&[("stream", a.stream())])?;
    if a.engine().is_none_or(|e| e.is_empty()) {
        return Err("needs a non-empty engine name".into());
    }
    let segs = d
        .attr("operand_segment_sizes")
        .and_then(|a| a.as_i64_array())
        .unwrap_or_default();
    if segs.get(1).copied().unwrap_or(0) == 0 {
        return Err("has no outputs: a launch writes at least one buffer".into());
    }
    Ok(())
}

def_op! {
    /// Launch a kernel on a stream and engine
    ///
    /// `stream.launch @conv_relu_3 on 0 engine "AICore" ins(%b0, %w1 : T0, T1) outs(%b3 : T3)`
    /// runs kernel function `@conv_relu_3` (a function of the module taking the `ins` types and
    /// returning the `outs` types) on stream 0 of engine AICore: it reads the tensors in the
    /// `ins` buffers and writes its results into the `outs` buffers.
    pub Launch = "stream.launch" {
        operands { ins: Variadic<AnyTensor>, outs: Variadic<AnyTensor> },
        attrs {
            /// the kernel function
            kernel: Symbol,
            /// the stream id
            stream: I64,
            /// the engine: AICore, VectorCore, AICPU, …
            engine: Str,
        },
        traits [],
        format: "$kernel `on` $stream `engine` $engine `ins` `(` ($ins `:` type($ins))? `)` `outs` `(` ($outs `:` type($outs))? `)` attr-dict",
        verify: verify_launch,
        semantics: sem_task,
    }
}

// ---- stream.record / stream.wait -----------------------------------------------------------

def_op! {
    /// Record an event on a stream
    ///
    /// `stream.record 2 on 0`: event 2 fires once every earlier task of stream 0 has finished.
    /// Event ids may be reused after the event was waited for.
    pub Record = "stream.record" {
        attrs {
            /// the event id
            event: I64,
            /// the stream id
            stream: I64,
        },
        traits [],
        format: "$event `on` $stream attr-dict",
        verify: |body, op| non_negative(&[("event", Record::attrs(body.op(op)).event()), ("stream", Record::attrs(body.op(op)).stream())]),
        semantics: sem_task,
    }
}

def_op! {
    /// Make a stream wait for an event
    ///
    /// `stream.wait 2 on 1`: later tasks of stream 1 start only after event 2 (recorded on
    /// another stream, earlier in program order) has fired.
    pub Wait = "stream.wait" {
        attrs {
            /// the event id
            event: I64,
            /// the stream id
            stream: I64,
        },
        traits [],
        format: "$event `on` $stream attr-dict",
        verify: |body, op| non_negative(&[("event", Wait::attrs(body.op(op)).event()), ("stream", Wait::attrs(body.op(op)).stream())]),
        semantics: sem_task,
    }
}

// ---- stream.memcpy ---------------------------------------------------------------------------

fn verify_memcpy(body: &Body, op: OpId) -> Result<(), OpError> {
    non_negative(&[("stream", Memcpy::attrs(body.op(op)).stream())])?;
    let (Some(s), Some(d)) = (nth_operand(body, op, 0), nth_operand(body, op, 1)) else {
        return Ok(());
    };
    let (s, d) = (body.value_type(s), body.value_type(d));
    if s == d {
        return Ok(());
    }
    let none = HashMap::new();
    match (byte_size_bound(s, &none), byte_size_bound(d, &none)) {
        (Ok(a), Ok(b)) if a == b => Ok(()),
        (Ok(a), Ok(b)) => Err(format!(
            "copies '{s}' ({a} bytes) into '{d}' ({b} bytes): the sizes must match"
        )
        .into()),
        _ => Err(format!(
            "copies '{s}' into '{d}': buffers of different symbolic types cannot be shown to have the same size"
        )
        .into()),
    }
}

def_op! {
    /// Copy a buffer on a stream
    ///
    /// `stream.memcpy %src to %dst on 0 : tensor<4xf32>, tensor<4xf32>` copies the bytes of
    /// buffer `%src` into `%dst` (same byte size) as a task of stream 0 — a host/device
    /// transfer when the views are of arenas in different spaces.
    pub Memcpy = "stream.memcpy" {
        operands { source: AnyTensor, dest: AnyTensor },
        attrs {
            /// the stream id
            stream: I64,
        },
        traits [],
        format: "$source `to` $dest `on` $stream attr-dict `:` type($source) `,` type($dest)",
        verify: verify_memcpy,
        semantics: sem_task,
    }
}

// ---- control flow ------------------------------------------------------------------------------

def_op! {
    /// A jump target on a stream
    ///
    /// `stream.label 3 on 0` marks a position in stream 0's task list that `stream.switch` and
    /// `stream.goto` on stream 0 jump to. Label ids are unique in a program.
    pub Label = "stream.label" {
        attrs {
            /// the label id
            label: I64,
            /// the stream id
            stream: I64,
        },
        traits [],
        format: "$label `on` $stream attr-dict",
        verify: |body, op| non_negative(&[("label", Label::attrs(body.op(op)).label()), ("stream", Label::attrs(body.op(op)).stream())]),
        semantics: sem_task,
    }
}

const SWITCH_TYPES: &[DType] = &[DType::I1, DType::I32, DType::I64, DType::Index];

fn verify_switch(body: &Body, op: OpId) -> Result<(), OpError> {
    let a = Switch::attrs(body.op(op));
    non_negative(&[("stream", a.stream())])?;
    let Some(v) = nth_operand(body, op, 0) else {
        return Ok(());
    };
    let t = body.value_type(v);
    if t.as_tensor()
        .and_then(|tt| tt.num_elements())
        .is_some_and(|n| n != 1)
    {
        return Err(format!("switches on '{t}', which must hold exactly one element").into());
    }
    let targets = a.targets().unwrap_or_default();
    if targets.is_empty() {
        return Err("needs at least one target label".into());
    }
    Ok(())
}

def_op! {
    /// Jump to one of several labels by a value in memory
    ///
    /// `stream.switch %c on 0 to [4, 7] : tensor<i1>` reads the single element of buffer `%c`
    /// (i1, i32, i64 or index) when the task runs and jumps to label `targets[value]` (for i1:
    /// false → first, true → second), like GE's LabelSwitchByIndex. A value outside `[0,
    /// len(targets))` is a run-time error.
    pub Switch = "stream.switch" {
        operands { value: TensorOf(SWITCH_TYPES) },
        attrs {
            /// the stream id
            stream: I64,
            /// label ids, indexed by the value
            targets: I64Array,
        },
        traits [],
        format: "$value `on` $stream `to` $targets attr-dict `:` type($value)",
        verify: verify_switch,
        semantics: sem_task,
    }
}

def_op! {
    /// Jump to a label
    ///
    /// `stream.goto 3 on 0` continues stream 0 at label 3 (GE's LabelGoto); with
    /// `stream.switch` it forms loops.
    pub Goto = "stream.goto" {
        attrs {
            /// the target label id
            label: I64,
            /// the stream id
            stream: I64,
        },
        traits [],
        format: "$label `on` $stream attr-dict",
        verify: |body, op| non_negative(&[("label", Goto::attrs(body.op(op)).label()), ("stream", Goto::attrs(body.op(op)).stream())]),
        semantics: sem_task,
    }
}

def_op! {
    /// End of the task program
    ///
    /// `stream.end` terminates a `stream.program` (GE's end-of-graph task): the program's
    /// results are its arenas' contents at this point.
    pub End = "stream.end" {
        traits [Terminator],
        format: "attr-dict",
    }
}

pub static OPS: &[&OpDef] = &[
    &PROGRAM, &LAUNCH, &RECORD, &WAIT, &MEMCPY, &LABEL, &SWITCH, &GOTO, &END,
];
