//! Elementwise kernels: a grid-stride loop over the points, each computing
//! the fused program once and writing every output.
//!
//! Contiguous sources read `offset + point` (consecutive work-items read
//! consecutive elements: coalesced); strided ones (views, broadcasts,
//! pushed-down transposes) compute coordinates in the collapsed iteration
//! shape, in 32-bit arithmetic when the sizes allow.

use super::expr::{ctype, error_flags_arg, point};
use super::{source_args, Variant};
use crate::dtype::DType;
use crate::expr::ir::Program;
use std::fmt::Write;

/// Appends the kernel to `body`; returns its entry name.
pub(super) fn render(
    v: &Variant,
    program: &Program,
    id: &str,
    outputs: &[DType],
    body: &mut String,
) -> Vec<String> {
    let ix = v.index_type();
    let name = format!("{id}_ew");
    let mut outs = String::new();
    for (k, d) in outputs.iter().enumerate() {
        let _ = write!(outs, ", GLOBAL {}* out{k}", ctype(*d));
    }
    let _ = writeln!(
        body,
        "KERNEL void {name}({id}_p p{}{outs}{}) {{",
        source_args(program),
        error_flags_arg(program)
    );
    let _ = writeln!(body, "  const {ix} n = ({ix})p.n;");
    let _ = writeln!(
        body,
        "  for ({ix} i = ({ix})GLOBAL_ID; i < n; i += ({ix})GLOBAL_SIZE) {{"
    );
    point(program, v, "i", "    ", body);
    for (k, r) in program.outputs.iter().enumerate() {
        let _ = writeln!(body, "    out{k}[i] = r{r};");
    }
    body.push_str("  }\n}\n");
    vec![name]
}
