//! From a kernel's structure to a launch: collapse the iteration space,
//! classify each source, pick the index width and (for reductions) the
//! strategy and segments, fill the parameter values, size the grid.

use super::codegen::params::{Param, Value};
use super::codegen::{Access, Kind, Strategy, Variant, GROUP};
use crate::cpu::num::Num;
use crate::dtype::{DType, Scalar};
use crate::expr::ir::{InstKind, Program};
use crate::fuse::{ReduceMode, ReducePlan};
use crate::shape::Layout;

/// Reductions whose rows are shorter than this run one row per work-item.
const ROW_PER_THREAD_MAX: usize = 256;
/// Points a work-group reduces per segment (about).
const SEGMENT_POINTS: usize = 16 * GROUP;
/// Most segments per output.
const MAX_SEGMENTS: usize = 1024;

/// The segment shape of long row reductions: `SEGMENT_POINTS` and
/// `MAX_SEGMENTS`, or `CROSSOVER_GPU_REDUCE_SEGMENTS=points,most` (read once;
/// a diagnostic knob for measuring other shapes on a real GPU, where the
/// best one depends on the device's resident work-groups).
fn segment_shape() -> (usize, usize) {
    static SHAPE: std::sync::OnceLock<(usize, usize)> = std::sync::OnceLock::new();
    *SHAPE.get_or_init(|| {
        parse_segment_shape(
            std::env::var("CROSSOVER_GPU_REDUCE_SEGMENTS")
                .ok()
                .as_deref(),
        )
    })
}

/// `points,most` (both at least 1), else the defaults.
fn parse_segment_shape(v: Option<&str>) -> (usize, usize) {
    v.and_then(|v| {
        let (p, m) = v.split_once(',')?;
        Some((p.trim().parse().ok()?, m.trim().parse().ok()?))
    })
    .filter(|&(p, m): &(usize, usize)| p >= 1 && m >= 1)
    .unwrap_or((SEGMENT_POINTS, MAX_SEGMENTS))
}

/// Segments per output above which they merge with a work-group per
/// output (one work-item walking them in order waits on each load).
const GROUP_MERGE_MIN_SEGMENTS: usize = 16;
/// Most outputs merged with a work-group each.
const GROUP_MERGE_MAX_OUTPUTS: usize = 4096;
/// Rows per work-item in a column reduction (about).
const COLUMN_ROWS: usize = 64;
/// Most work-items of a column reduction.
const COLUMN_ITEMS: usize = 1 << 22;

/// A kernel ready to launch.
#[derive(Clone, Debug)]
pub struct Launch {
    pub variant: Variant,
    /// Work-groups of each entry point, in order (an entry with 0 groups is
    /// skipped).
    pub groups: Vec<usize>,
    /// Bytes of the partial-state buffer (0: none).
    pub partial_states: usize,
    dims: Vec<usize>,
    strides: Vec<Vec<isize>>,
    offsets: Vec<usize>,
    points: usize,
    kept: usize,
    reduced: usize,
    segments: usize,
    chunk: usize,
}

/// Merges neighbouring dims that every source steps through as one, and
/// drops size-1 dims. Returns the collapsed shape and each source's strides.
fn collapse(shape: &[usize], layouts: &[&Layout]) -> (Vec<usize>, Vec<Vec<isize>>) {
    let mut dims: Vec<usize> = Vec::new();
    let mut strides: Vec<Vec<isize>> = vec![Vec::new(); layouts.len()];
    for (d, &n) in shape.iter().enumerate() {
        if n == 1 {
            continue;
        }
        let mergeable = !dims.is_empty()
            && layouts.iter().zip(&strides).all(|(l, st)| {
                let last = *st.last().expect("dims is not empty");
                last == l.strides[d] * n as isize
            });
        if mergeable {
            let k = dims.len() - 1;
            dims[k] *= n;
            for (st, l) in strides.iter_mut().zip(layouts) {
                *st.last_mut().expect("dims is not empty") = l.strides[d];
            }
        } else {
            dims.push(n);
            for (st, l) in strides.iter_mut().zip(layouts) {
                st.push(l.strides[d]);
            }
        }
    }
    (dims, strides)
}

fn classify(dims: &[usize], strides: &[isize], points: usize) -> Access {
    if points == 0 || strides.iter().all(|&s| s == 0) {
        return Access::Constant;
    }
    let mut expect = 1isize;
    for (n, s) in dims.iter().zip(strides).rev() {
        if *s != expect {
            return Access::Strided;
        }
        expect *= *n as isize;
    }
    Access::Contiguous
}

/// Largest element position a source can address (for the index width).
fn reach(offset: usize, dims: &[usize], strides: &[isize]) -> i128 {
    let mut hi = offset as i128;
    for (n, s) in dims.iter().zip(strides) {
        hi += (*n as i128 - 1).max(0) * (*s as i128).abs();
    }
    hi
}

impl Launch {
    /// Plans a fused kernel over `shape` reading sources through `layouts`
    /// (one per program source, in order), writing `outputs`.
    pub fn plan(
        program: &Program,
        layouts: &[&Layout],
        shape: &[usize],
        reduce: Option<&ReducePlan>,
        outputs: &[DType],
        max_groups: usize,
    ) -> Launch {
        let points: usize = shape.iter().product();
        let (dims, strides) = collapse(shape, layouts);
        let access: Vec<Access> = strides
            .iter()
            .map(|st| classify(&dims, st, points))
            .collect();
        let offsets: Vec<usize> = layouts.iter().map(|l| l.offset).collect();
        let limit = i32::MAX as i128;
        // Index loops step by the grid size, and unrolled reductions look a
        // few group sizes ahead: leave room so neither overflows 32 bits.
        let slack = (max_groups.max(1) * GROUP) as i128 * 2 + 8 * GROUP as i128;
        let wide = points as i128 + slack > limit
            || layouts
                .iter()
                .zip(&strides)
                .any(|(l, st)| reach(l.offset, &dims, st) > limit);
        let grid = |items: usize| items.div_ceil(GROUP).clamp(1, max_groups.max(1));
        let (kind, groups, kept, reduced, segments, chunk) = match reduce {
            None => (
                Kind::Elementwise {
                    outputs: outputs.to_vec(),
                },
                vec![if points == 0 { 0 } else { grid(points) }, 0, 0],
                0,
                0,
                1,
                0,
            ),
            Some(plan) => {
                let (k, r) = (plan.kept, plan.reduced);
                let (strategy, segs) = match plan.mode {
                    ReduceMode::Inner if r < ROW_PER_THREAD_MAX => (Strategy::RowPerThread, 1),
                    ReduceMode::Inner => {
                        let (points, most) = segment_shape();
                        (Strategy::GroupPerSegment, r.div_ceil(points).clamp(1, most))
                    }
                    ReduceMode::Outer => (
                        Strategy::ColumnPerThread,
                        r.div_ceil(COLUMN_ROWS)
                            .min((COLUMN_ITEMS / k.max(1)).max(1))
                            .max(1),
                    ),
                };
                let chunk = r.div_ceil(segs).max(1);
                let segs = if r == 0 { 1 } else { r.div_ceil(chunk) };
                let first = match strategy {
                    Strategy::RowPerThread => grid(k),
                    Strategy::ColumnPerThread => grid(k * segs),
                    Strategy::GroupPerSegment => k * segs,
                };
                // Segments merge with a work-item per output, or, for few
                // outputs of many segments, a work-group per output.
                let (merge, merge_group) = match segs {
                    0 | 1 => (0, 0),
                    s if s > GROUP_MERGE_MIN_SEGMENTS && k <= GROUP_MERGE_MAX_OUTPUTS => (0, k),
                    _ => (grid(k), 0),
                };
                (
                    Kind::Reduce {
                        ops: plan.ops.clone(),
                        outputs: outputs.to_vec(),
                        strategy,
                    },
                    vec![if k == 0 { 0 } else { first }, merge, merge_group],
                    k,
                    r,
                    segs,
                    chunk,
                )
            }
        };
        let partial_states = if groups[1] > 0 || groups[2] > 0 {
            kept * segments * super::codegen::reduce_state_bytes()
        } else {
            0
        };
        Launch {
            variant: Variant {
                program: program.key().to_string(),
                dims: dims.len(),
                access,
                wide,
                kind,
            },
            groups,
            partial_states,
            dims,
            strides,
            offsets,
            points,
            kept,
            reduced,
            segments,
            chunk,
        }
    }

    /// Points of the iteration space.
    pub fn points(&self) -> usize {
        self.points
    }

    /// The value of parameter `p` (constants, seeds and aranges from
    /// `program`, with the CPU backend's conversions).
    pub fn value(&self, program: &Program, p: Param) -> Result<Value, String> {
        let int = |v: usize| Value::I64(v as i64);
        Ok(match p {
            Param::Points => int(self.points),
            Param::Kept => int(self.kept),
            Param::Reduced => int(self.reduced),
            Param::Segments => int(self.segments),
            Param::Chunk => int(self.chunk),
            Param::Dim(d) => int(self.dims[d]),
            Param::Offset(s) => int(self.offsets[s]),
            Param::Stride(s, d) => Value::I64(self.strides[s][d] as i64),
            Param::Const(r) => {
                let inst = &program.insts[r as usize];
                let InstKind::Const(c) = inst.kind else {
                    return Err(format!("r{r} is not a constant"));
                };
                constant(c, inst.dtype)
            }
            Param::ArangeStart(r)
            | Param::ArangeStep(r)
            | Param::ArangeLastIndex(r)
            | Param::ArangeLastValue(r) => {
                let InstKind::Arange {
                    start, step, last, ..
                } = program.insts[r as usize].kind
                else {
                    return Err(format!("r{r} is not an arange"));
                };
                match p {
                    Param::ArangeStart(_) => Value::F64(start),
                    Param::ArangeStep(_) => Value::F64(step),
                    Param::ArangeLastIndex(_) => Value::I64(last.map_or(-1, |l| l.0 as i64)),
                    _ => Value::F64(last.map_or(0.0, |l| l.1)),
                }
            }
            Param::Seed(r) | Param::Stream(r) => {
                let InstKind::Random { key, .. } = program.insts[r as usize].kind else {
                    return Err(format!("r{r} is not a random source"));
                };
                Value::U64(if matches!(p, Param::Seed(_)) {
                    key.seed
                } else {
                    key.stream
                })
            }
            Param::Rows
            | Param::Cols
            | Param::Inner
            | Param::RowStride(_)
            | Param::ColStride(_)
            | Param::Lines
            | Param::Along
            | Param::AlongStride
            | Param::Extent(_)
            | Param::Span
            | Param::Inverse
            | Param::Keep
            | Param::Scale
            | Param::Chirp
            | Param::Triangle => {
                return Err(format!("{} is a library kernel's parameter", p.name()))
            }
        })
    }
}

/// A constant as the CPU interpreter splats it.
fn constant(c: Scalar, d: DType) -> Value {
    match d {
        DType::Bool => Value::I64(c.as_bool() as i64),
        // As the CPU converts a constant: a float that no integer holds
        // gives NumPy's value and its warning.
        DType::I32 => Value::I64(<i32 as Num>::from_scalar(c) as i64),
        DType::F32 => Value::F32(c.as_f64() as f32),
        DType::F64 | DType::C64 | DType::C128 => Value::F64(c.as_f64()),
        DType::I64 => Value::I64(<i64 as Num>::from_scalar(c)),
        // Refused before launching (GPU kernels have no narrow integers).
        d => Value::I64(crate::cpu::wrap_i64(d, c.as_i64())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collapse_merges_contiguous_runs_and_keeps_views() {
        let a = Layout::contiguous(&[4, 5, 6]);
        let t = Layout::contiguous(&[6, 5, 4])
            .permute("t", &[2, 1, 0])
            .unwrap();
        let (d, s) = collapse(&[4, 5, 6], &[&a]);
        assert_eq!((d, s), (vec![120], vec![vec![1]]));
        let (d, s) = collapse(&[4, 5, 6], &[&a, &t]);
        assert_eq!(d, vec![4, 5, 6]);
        assert_eq!(classify(&d, &s[0], 120), Access::Contiguous);
        assert_eq!(classify(&d, &s[1], 120), Access::Strided);
        let b = Layout::contiguous(&[1])
            .broadcast_to("b", &[4, 5, 6])
            .unwrap();
        let (d, s) = collapse(&[4, 5, 6], &[&b]);
        assert_eq!(classify(&d, &s[0], 120), Access::Constant);
    }

    #[test]
    fn segment_shape_knob_parses_or_keeps_the_defaults() {
        assert_eq!(parse_segment_shape(Some("4096,2112")), (4096, 2112));
        assert_eq!(parse_segment_shape(Some(" 1024 , 7 ")), (1024, 7));
        let defaults = (SEGMENT_POINTS, MAX_SEGMENTS);
        for bad in [
            None,
            Some(""),
            Some("4096"),
            Some("0,5"),
            Some("5,0"),
            Some("a,b"),
        ] {
            assert_eq!(parse_segment_shape(bad), defaults, "{bad:?}");
        }
    }
}
