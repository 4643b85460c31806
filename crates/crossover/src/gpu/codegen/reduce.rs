//! Reduction kernels: the fused program's value at each point feeds an
//! accumulator state that is never written to memory (map-reduce in one
//! pass), with the CPU backend's numerics: float sums in float64, variance
//! by Welford updates merged with Chan's formula, NaN-propagating min/max
//! with the first index on ties, wrapping integer sums.
//!
//! The work split ([`Strategy`]) and the merge order depend only on the
//! sizes, so a result is the same bits on every run. Trees in local memory
//! keep their barriers at the top level of loops whose trip count is the
//! same for every work-item.

use super::expr::{ctype, error_flags_arg, point};
use super::{source_args, Strategy, Variant, GROUP};
use crate::dtype::DType;
use crate::expr::ir::Program;
use crate::op::ReduceOp;
use std::fmt::Write;

/// Which state fields the ops need.
#[derive(Clone, Copy, Debug, Default)]
struct Needs {
    sum: bool,
    isum: bool,
    prod: bool,
    iprod: bool,
    moments: bool,
    min: bool,
    max: bool,
}

impl Needs {
    fn of(ops: &[ReduceOp], value: DType) -> Needs {
        let mut n = Needs::default();
        for op in ops {
            match op {
                ReduceOp::Sum if !value.is_float() => n.isum = true,
                ReduceOp::Sum | ReduceOp::Mean => n.sum = true,
                ReduceOp::Prod if !value.is_float() => n.iprod = true,
                ReduceOp::Prod => n.prod = true,
                ReduceOp::Var { .. } | ReduceOp::Std { .. } => {
                    n.sum = true;
                    n.moments = true;
                }
                ReduceOp::Min | ReduceOp::ArgMin => n.min = true,
                ReduceOp::Max | ReduceOp::ArgMax => n.max = true,
            }
        }
        n
    }
}

/// Upper bound of the state struct's size in bytes (the host sizes the
/// partials buffer with it).
pub fn state_bytes_bound() -> usize {
    11 * 8
}

fn state_type(id: &str, t: &str, n: Needs, s: &mut String) {
    let st = format!("{id}_st");
    s.push_str("typedef struct {\n  i64 n;\n");
    if n.sum {
        s.push_str("  f64 sum;\n");
    }
    if n.isum {
        s.push_str("  i64 isum;\n");
    }
    if n.prod {
        s.push_str("  f64 prod;\n");
    }
    if n.iprod {
        s.push_str("  i64 iprod;\n");
    }
    if n.moments {
        s.push_str("  f64 mean; f64 m2;\n");
    }
    if n.min {
        let _ = writeln!(s, "  {t} mn; i64 mni;");
    }
    if n.max {
        let _ = writeln!(s, "  {t} mx; i64 mxi;");
    }
    let _ = writeln!(s, "}} {st};");

    // The empty state and the state of one value at reduced index `at`.
    let _ = writeln!(s, "XO_FN {st} {id}_empty(void) {{\n  {st} r;\n  r.n = 0;");
    let zero = |s: &mut String, v: &str| {
        if n.sum {
            let _ = writeln!(s, "  r.sum = {v};");
        }
        if n.isum {
            let _ = writeln!(s, "  r.isum = (i64){v};");
        }
        if n.moments {
            let _ = writeln!(s, "  r.mean = (f64){v}; r.m2 = 0.0;");
        }
        if n.min {
            let _ = writeln!(s, "  r.mn = ({t}){v}; r.mni = at;");
        }
        if n.max {
            let _ = writeln!(s, "  r.mx = ({t}){v}; r.mxi = at;");
        }
    };
    s.push_str("  const i64 at = 0;\n");
    zero(s, "0");
    // The empty product is 1.
    if n.prod {
        s.push_str("  r.prod = 1.0;\n");
    }
    if n.iprod {
        s.push_str("  r.iprod = 1;\n");
    }
    s.push_str("  return r;\n}\n");
    let _ = writeln!(
        s,
        "XO_FN {st} {id}_unit({t} x, i64 at) {{\n  {st} r;\n  r.n = 1;"
    );
    if n.sum {
        s.push_str("  r.sum = (f64)x;\n");
    }
    if n.isum {
        s.push_str("  r.isum = (i64)x;\n");
    }
    if n.prod {
        s.push_str("  r.prod = (f64)x;\n");
    }
    if n.iprod {
        s.push_str("  r.iprod = (i64)x;\n");
    }
    if n.moments {
        s.push_str("  r.mean = (f64)x; r.m2 = 0.0;\n");
    }
    if n.min {
        s.push_str("  r.mn = x; r.mni = at;\n");
    }
    if n.max {
        s.push_str("  r.mx = x; r.mxi = at;\n");
    }
    s.push_str("  return r;\n}\n");

    // Merge: Chan's formula for the moments; NaN wins min/max, ties keep
    // the smaller index (order-independent, so any tree shape agrees).
    let _ = writeln!(
        s,
        "XO_FN {st} {id}_merge({st} a, {st} b) {{\n  if (b.n == 0) return a;\n  if (a.n == 0) return b;\n  {st} r = a;\n  r.n = a.n + b.n;"
    );
    if n.sum {
        s.push_str("  r.sum = a.sum + b.sum;\n");
    }
    if n.isum {
        s.push_str("  r.isum = (i64)((u64)a.isum + (u64)b.isum);\n");
    }
    if n.prod {
        s.push_str("  r.prod = a.prod * b.prod;\n");
    }
    if n.iprod {
        s.push_str("  r.iprod = (i64)((u64)a.iprod * (u64)b.iprod);\n");
    }
    if n.moments {
        s.push_str(
            "  {\n    const f64 na = (f64)a.n, nb = (f64)b.n, nn = na + nb;\n    const f64 d = b.mean - a.mean;\n    r.mean = a.mean + d * nb / nn;\n    r.m2 = a.m2 + b.m2 + d * d * na * nb / nn;\n  }\n",
        );
    }
    for (on, f, cmp) in [(n.min, "mn", "<"), (n.max, "mx", ">")] {
        if on {
            let _ = writeln!(
                s,
                "  {{\n    const int an = a.{f} != a.{f}, bn = b.{f} != b.{f};\n    const int tb = an ? (bn && b.{f}i < a.{f}i) : (bn || b.{f} {cmp} a.{f} || (b.{f} == a.{f} && b.{f}i < a.{f}i));\n    if (tb) {{ r.{f} = b.{f}; r.{f}i = b.{f}i; }}\n  }}"
            );
        }
    }
    s.push_str("  return r;\n}\n");
}

/// Statements writing the final value of each op for output position `k`.
fn finalize(ops: &[ReduceOp], outputs: &[DType], st: &str, k: &str, ind: &str) -> String {
    let mut s = String::new();
    for (j, (op, d)) in ops.iter().zip(outputs).enumerate() {
        let t = ctype(*d);
        let var = |ddof: u32| {
            format!("({st}.m2 / (((f64){st}.n - {ddof}.0) > 0.0 ? ((f64){st}.n - {ddof}.0) : 0.0))")
        };
        let e = match op {
            ReduceOp::Sum if *d == DType::I64 => format!("{st}.isum"),
            ReduceOp::Sum => format!("({t}){st}.sum"),
            ReduceOp::Prod if *d == DType::I64 => format!("{st}.iprod"),
            ReduceOp::Prod => format!("({t}){st}.prod"),
            ReduceOp::Mean => format!("({t})({st}.sum / (f64){st}.n)"),
            ReduceOp::Var { ddof } => format!("({t}){}", var(*ddof)),
            ReduceOp::Std { ddof } => format!("({t})xo_sqrt_f64({})", var(*ddof)),
            ReduceOp::Min => format!("{st}.mn"),
            ReduceOp::Max => format!("{st}.mx"),
            ReduceOp::ArgMin => format!("{st}.mni"),
            ReduceOp::ArgMax => format!("{st}.mxi"),
        };
        let _ = writeln!(s, "{ind}out{j}[{k}] = {e};");
    }
    s
}

/// Points each work-item reads per step of an unrolled reduction loop.
const UNROLL: usize = 4;

/// The main loop of a reduction, [`UNROLL`] points per trip: every point's
/// value is computed (its loads issued) before any is merged, so each
/// work-item keeps several loads in flight. With one load per trip the
/// H200 reached a third of its bandwidth on a sum (each trip waited on its
/// load); the states of the points merge in a fixed tree (the same bits
/// on every run), then into the accumulator (one division per trip for
/// the moments instead of one per point). `at(u)` is the reduced index of
/// the trip's point `u`, `pt(r)` its point for reduced index `r`; the loop
/// runs while the trip's last point is below `end`, with `last` the offset
/// of that point (`UNROLL - 1` when points are adjacent) and `advance` the
/// step statement. The caller's tail loop finishes the segment.
#[allow(clippy::too_many_arguments)]
fn unrolled(
    program: &Program,
    v: &Variant,
    id: &str,
    t: &str,
    end: &str,
    advance: &str,
    last: &str,
    at: &dyn Fn(usize) -> String,
    pt: &dyn Fn(&str) -> String,
    ind: &str,
    body: &mut String,
) {
    let ix = v.index_type();
    let out_reg = program.outputs[0];
    let last = if last.is_empty() {
        format!("{}", UNROLL - 1)
    } else {
        last.replace("UNROLL", &UNROLL.to_string())
    };
    let advance = advance.replace("UNROLL", &UNROLL.to_string());
    let _ = writeln!(body, "{ind}for (; r + {last} < {end}; {advance}) {{");
    for u in 0..UNROLL {
        let _ = writeln!(
            body,
            "{ind}  {t} x{u};\n{ind}  {{\n{ind}    const {ix} pt = {};",
            pt(&at(u))
        );
        point(program, v, "pt", &format!("{ind}    "), body);
        let _ = writeln!(body, "{ind}    x{u} = r{out_reg};\n{ind}  }}");
    }
    // A balanced tree over the trip's points.
    let mut level: Vec<String> = (0..UNROLL)
        .map(|u| format!("{id}_unit(x{u}, (i64){})", at(u)))
        .collect();
    while level.len() > 1 {
        level = level
            .chunks(2)
            .map(|c| {
                if c.len() == 2 {
                    format!("{id}_merge({}, {})", c[0], c[1])
                } else {
                    c[0].clone()
                }
            })
            .collect();
    }
    let _ = writeln!(body, "{ind}  acc = {id}_merge(acc, {});\n{ind}}}", level[0]);
}

/// Appends the reduction kernels to `body`; returns the entry names (the
/// stage that reads the points, then the merge of segments with a
/// work-item per output, then the same merge with a work-group per
/// output; a launch runs one of the two merges).
pub(super) fn render(
    v: &Variant,
    program: &Program,
    id: &str,
    ops: &[ReduceOp],
    outputs: &[DType],
    strategy: Strategy,
    body: &mut String,
) -> Vec<String> {
    let value_dtype = program.dtype(program.outputs[0]);
    let t = ctype(value_dtype);
    let needs = Needs::of(ops, value_dtype);
    state_type(id, t, needs, body);
    let st = format!("{id}_st");
    let ix = v.index_type();
    let mut outs = String::new();
    for (j, d) in outputs.iter().enumerate() {
        let _ = write!(outs, ", GLOBAL {}* out{j}", ctype(*d));
    }
    let out_reg = program.outputs[0];
    let srcs = source_args(program);
    let stage1 = format!("{id}_r1");
    let _ = writeln!(
        body,
        "KERNEL void {stage1}({id}_p p{srcs}, GLOBAL {st}* part{outs}{}) {{",
        error_flags_arg(program)
    );
    let _ = writeln!(
        body,
        "  const {ix} kept = ({ix})p.kept, red = ({ix})p.red, segs = ({ix})p.segs, chunk = ({ix})p.chunk;"
    );
    // Writes a finished state: the outputs when there is one segment, the
    // partials otherwise.
    let emit = |body: &mut String, k: &str, part_index: &str, ind: &str| {
        let _ = writeln!(body, "{ind}if (segs == 1) {{");
        body.push_str(&finalize(ops, outputs, "acc", k, &format!("{ind}  ")));
        let _ = writeln!(
            body,
            "{ind}}} else {{\n{ind}  part[{part_index}] = acc;\n{ind}}}"
        );
    };
    match strategy {
        Strategy::RowPerThread => {
            let _ = writeln!(
                body,
                "  for ({ix} k = ({ix})GLOBAL_ID; k < kept; k += ({ix})GLOBAL_SIZE) {{\n    {st} acc = {id}_empty();\n    for ({ix} r = 0; r < red; ++r) {{\n      const {ix} pt = k * red + r;"
            );
            point(program, v, "pt", "      ", body);
            let _ = writeln!(
                body,
                "      acc = {id}_merge(acc, {id}_unit(r{out_reg}, (i64)r));\n    }}"
            );
            emit(body, "k", "k", "    ");
            body.push_str("  }\n}\n");
        }
        Strategy::ColumnPerThread => {
            // Work-item w: column k = w % kept, row segment s = w / kept.
            let _ = writeln!(
                body,
                "  const {ix} total = kept * segs;\n  for ({ix} w = ({ix})GLOBAL_ID; w < total; w += ({ix})GLOBAL_SIZE) {{\n    const {ix} k = w % kept, s = w / kept;\n    const {ix} r0 = s * chunk;\n    const {ix} r1 = (r0 + chunk < red) ? r0 + chunk : red;\n    {st} acc = {id}_empty();\n    {ix} r = r0;"
            );
            let at = |u: usize| format!("(r + {u})");
            unrolled(
                program,
                v,
                id,
                t,
                "r1",
                "r += UNROLL",
                "",
                &at,
                &|r| format!("{r} * kept + k"),
                "    ",
                body,
            );
            let _ = writeln!(
                body,
                "    for (; r < r1; ++r) {{\n      const {ix} pt = r * kept + k;"
            );
            point(program, v, "pt", "      ", body);
            let _ = writeln!(
                body,
                "      acc = {id}_merge(acc, {id}_unit(r{out_reg}, (i64)r));\n    }}"
            );
            emit(body, "k", "k * segs + s", "    ");
            body.push_str("  }\n}\n");
        }
        Strategy::GroupPerSegment => {
            // Group g: output k = g / segs, segment s = g % segs; its
            // work-items stride through the segment, then a tree.
            let _ = writeln!(
                body,
                "  LOCAL_ARRAY({st}, tree, {GROUP});\n  const {ix} g = ({ix})GROUP_ID;\n  const {ix} k = g / segs, s = g - (g / segs) * segs;\n  const {ix} r0 = s * chunk;\n  const {ix} r1 = (r0 + chunk < red) ? r0 + chunk : red;\n  {st} acc = {id}_empty();\n  const {ix} step = ({ix})LOCAL_SIZE;\n  {ix} r = r0 + ({ix})LOCAL_ID;"
            );
            let at = |u: usize| format!("(r + {u} * step)");
            unrolled(
                program,
                v,
                id,
                t,
                "r1",
                "r += UNROLL * step",
                "(UNROLL - 1) * step",
                &at,
                &|r| format!("k * red + {r}"),
                "  ",
                body,
            );
            let _ = writeln!(
                body,
                "  for (; r < r1; r += step) {{\n    const {ix} pt = k * red + r;"
            );
            point(program, v, "pt", "    ", body);
            let _ = writeln!(
                body,
                "    acc = {id}_merge(acc, {id}_unit(r{out_reg}, (i64)r));\n  }}\n  tree[LOCAL_ID] = acc;\n  BARRIER();\n  for (int h = {half}; h > 0; h >>= 1) {{\n    if (LOCAL_ID < h) tree[LOCAL_ID] = {id}_merge(tree[LOCAL_ID], tree[LOCAL_ID + h]);\n    TREE_BARRIER(h);\n  }}\n  if (LOCAL_ID == 0 && k < kept) {{\n    acc = tree[0];",
                half = GROUP / 2
            );
            emit(body, "k", "k * segs + s", "    ");
            body.push_str("  }\n}\n");
        }
    }
    // The merge of each output's segments, in segment order.
    let merge = format!("{id}_r2");
    let _ = writeln!(
        body,
        "KERNEL void {merge}({id}_p p, GLOBAL const {st}* part{outs}) {{\n  const {ix} kept = ({ix})p.kept, segs = ({ix})p.segs;\n  for ({ix} k = ({ix})GLOBAL_ID; k < kept; k += ({ix})GLOBAL_SIZE) {{\n    {st} acc = part[k * segs];\n    for ({ix} s = 1; s < segs; ++s) acc = {id}_merge(acc, part[k * segs + s]);"
    );
    body.push_str(&finalize(ops, outputs, "acc", "k", "    "));
    body.push_str("  }\n}\n");
    // The same merge with a work-group per output, for few outputs of many
    // segments: one work-item walking 1,024 partial states one load after
    // another took 137 us on an H100 (each load waits for the last), more
    // than the sum of 16M points it finished. Work-item t merges segments
    // t, t + LOCAL_SIZE, ... in order, then a tree: the order depends only
    // on the sizes.
    let merge_group = format!("{id}_r2g");
    let _ = writeln!(
        body,
        "KERNEL void {merge_group}({id}_p p, GLOBAL const {st}* part{outs}) {{\n  LOCAL_ARRAY({st}, tree, {GROUP});\n  const {ix} kept = ({ix})p.kept, segs = ({ix})p.segs;\n  const {ix} k = ({ix})GROUP_ID;\n  {st} acc = {id}_empty();\n  for ({ix} s = ({ix})LOCAL_ID; s < segs; s += ({ix})LOCAL_SIZE) acc = {id}_merge(acc, part[k * segs + s]);\n  tree[LOCAL_ID] = acc;\n  BARRIER();\n  for (int h = {half}; h > 0; h >>= 1) {{\n    if (LOCAL_ID < h) tree[LOCAL_ID] = {id}_merge(tree[LOCAL_ID], tree[LOCAL_ID + h]);\n    TREE_BARRIER(h);\n  }}\n  if (LOCAL_ID == 0 && k < kept) {{\n    acc = tree[0];",
        half = GROUP / 2
    );
    body.push_str(&finalize(ops, outputs, "acc", "k", "    "));
    body.push_str("  }\n}\n");
    vec![stage1, merge, merge_group]
}
