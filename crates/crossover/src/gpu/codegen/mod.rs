//! Codegen: the fused IR ([`Program`]) and a reduction plan, rendered once
//! as kernel bodies in the macro dialect of [`dialect`].
//!
//! A [`Variant`] is everything that changes the source text of a kernel:
//! the program's structure (its key, never its constants, seeds or
//! aranges' values: those are [`params`]), how each source is read
//! (contiguous, one position, strided), the number of collapsed dims, the
//! index width and, for reductions, the strategy. Sizes, offsets and
//! strides are parameters too, so one compiled variant serves every shape
//! of its kind.

mod bluestein;
pub mod dialect;
mod elementwise;
pub mod expr;
mod fft;
pub mod gemm;
pub mod matcopy;
pub mod params;
mod reduce;
pub mod scan;
mod spgemm;
mod spmm;

pub use dialect::{prelude, Dialect, Features};

use crate::dtype::DType;
use crate::expr::ir::Program;
use crate::op::ReduceOp;
use params::{Param, ParamLayout, Slot};

/// Version of the generated code: part of every compiled-kernel cache key.
pub const CODEGEN_VERSION: u32 = 2;

/// Work-items per work-group, for every kernel (one fixed size: pocl builds
/// one specialisation per local size, and the reductions' local arrays are
/// sized by it).
pub const GROUP: usize = 256;

/// How a source's element position follows the iteration point.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Access {
    /// `offset + point`.
    Contiguous,
    /// `offset` at every point (a broadcast scalar).
    Constant,
    /// `offset + sum(coordinate[d] * stride[d])` over the collapsed dims.
    Strided,
}

/// How a reduction kernel walks its points (chosen from the sizes alone,
/// never the device, so results are the same bits on every run).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Strategy {
    /// Inner layout, short rows: one work-item reduces one output's row.
    RowPerThread,
    /// Inner layout, long rows: each row is cut into segments, one
    /// work-group per segment (tree in local memory), then a merge kernel.
    GroupPerSegment,
    /// Outer layout (reduced axes lead): one work-item per kept column and
    /// row segment (coalesced reads), then a merge kernel.
    ColumnPerThread,
}

/// What kind of kernel a variant is.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// Writes each program output at every point.
    Elementwise { outputs: Vec<DType> },
    /// Reduces `program.outputs[0]` with `ops` (one output each).
    Reduce {
        ops: Vec<ReduceOp>,
        outputs: Vec<DType>,
        strategy: Strategy,
    },
    /// The core's matrix product of `dtype` operands ([`gemm`]); its
    /// variant has no program.
    Gemm { dtype: DType },
    /// The core's CSR-times-dense product ([`spmm`]); no program either.
    Spmm { dtype: DType },
    /// The core's CSR-times-CSR product ([`spgemm`]: count, then fill); no
    /// program.
    Spgemm { dtype: DType },
    /// The core's batched matrix copy ([`matcopy`]: packs, transposes,
    /// triangles, identities around vendor solvers); no program. `conj`:
    /// the conjugating copy (complex `dtype` only).
    MatCopy { dtype: DType, conj: bool },
    /// The core's cumulative sum or product ([`scan`]) of `dtype` values,
    /// the input read through `line_dims` collapsed other axes.
    Scan {
        kind: crate::array::scan::ScanKind,
        dtype: DType,
        line_dims: usize,
    },
    /// The core's FFT steps ([`fft`]) on `precision` (f32 or f64) work
    /// arrays, loading a `rank`-dim input (complex or real).
    Fft {
        precision: DType,
        complex_input: bool,
        rank: usize,
    },
}

/// The structure of one kernel: what its source text depends on.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Variant {
    /// [`Program::key`]: the program without constant values.
    pub program: String,
    /// Collapsed iteration dims (used by strided sources).
    pub dims: usize,
    /// Per program source.
    pub access: Vec<Access>,
    /// 64-bit index arithmetic (else 32-bit: faster division on GPUs).
    pub wide: bool,
    pub kind: Kind,
}

/// The rendered body of a variant (no prelude) and how to call it.
#[derive(Clone, Debug)]
pub struct Rendered {
    /// Stable identifier (names the entry points and the params struct).
    pub id: String,
    pub body: String,
    /// Entry points, in launch order (reductions: stage 1 then, when the
    /// launch has several segments, the merge).
    pub entries: Vec<String>,
    pub params: ParamLayout,
}

/// FNV-1a over a string: a stable short identifier for names.
pub fn stable_hash(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

impl Variant {
    /// The matrix product of `dtype` operands (one variant per dtype: sizes,
    /// strides and batch offsets are parameters).
    pub fn gemm(dtype: DType) -> Variant {
        Variant {
            program: "gemm".into(),
            dims: 0,
            access: Vec::new(),
            wide: true,
            kind: Kind::Gemm { dtype },
        }
    }

    /// The CSR-times-dense product of `dtype` values.
    pub fn spmm(dtype: DType) -> Variant {
        Variant {
            program: "spmm".into(),
            kind: Kind::Spmm { dtype },
            ..Variant::gemm(dtype)
        }
    }

    /// The CSR-times-CSR product of `dtype` values.
    pub fn spgemm(dtype: DType) -> Variant {
        Variant {
            program: "spgemm".into(),
            kind: Kind::Spgemm { dtype },
            ..Variant::gemm(dtype)
        }
    }

    /// The batched matrix copy of `dtype` values; `conj`: conjugating
    /// (ignored for real dtypes, whose conjugate is the plain copy).
    pub fn matcopy(dtype: DType, conj: bool) -> Variant {
        Variant {
            program: "matcopy".into(),
            kind: Kind::MatCopy {
                dtype,
                conj: conj && dtype.is_complex(),
            },
            ..Variant::gemm(dtype)
        }
    }

    /// The scan of `dtype` values whose input has `line_dims` collapsed
    /// axes besides the scanned one.
    pub fn scan(kind: crate::array::scan::ScanKind, dtype: DType, line_dims: usize) -> Variant {
        Variant {
            program: "scan".into(),
            kind: Kind::Scan {
                kind,
                dtype,
                line_dims,
            },
            ..Variant::gemm(dtype)
        }
    }

    /// The FFT steps of `precision` work arrays loading a `rank`-dim input.
    pub fn fft(precision: DType, complex_input: bool, rank: usize) -> Variant {
        Variant {
            program: "fft".into(),
            kind: Kind::Fft {
                precision,
                complex_input,
                rank,
            },
            ..Variant::gemm(precision)
        }
    }

    /// The C type of index arithmetic.
    pub fn index_type(&self) -> &'static str {
        if self.wide {
            "i64"
        } else {
            "i32"
        }
    }

    /// A stable id of this variant.
    pub fn id(&self) -> String {
        format!("xo{:016x}", stable_hash(&format!("{self:?}")))
    }

    /// The parameter struct this variant's kernels take.
    pub fn params(&self, program: &Program) -> ParamLayout {
        let mut l = ParamLayout::default();
        // A matrix operand's rows, columns, inner extent and strides.
        const MATRIX: [Param; 5] = [
            Param::Rows,
            Param::Cols,
            Param::Inner,
            Param::RowStride(0),
            Param::ColStride(0),
        ];
        let ints = |l: &mut ParamLayout, ps: &[Param]| {
            for p in ps {
                l.push(*p, Slot::I64);
            }
        };
        match &self.kind {
            Kind::Elementwise { .. } => l.push(Param::Points, Slot::I64),
            Kind::Reduce { .. } => ints(
                &mut l,
                &[Param::Kept, Param::Reduced, Param::Segments, Param::Chunk],
            ),
            Kind::Gemm { .. } => {
                ints(&mut l, &MATRIX);
                ints(&mut l, &[Param::RowStride(1), Param::ColStride(1)]);
                return l;
            }
            Kind::Spmm { .. } => {
                ints(
                    &mut l,
                    &[
                        Param::Rows,
                        Param::Cols,
                        Param::Offset(1),
                        Param::RowStride(1),
                        Param::ColStride(1),
                    ],
                );
                return l;
            }
            Kind::Spgemm { .. } => {
                // Rows of `c`, columns of `b` (no column reaches it) and
                // non-zeros of `a` (the scratch's half).
                ints(&mut l, &[Param::Rows, Param::Cols, Param::Inner]);
                return l;
            }
            Kind::MatCopy { .. } => {
                ints(&mut l, &MATRIX);
                l.push(Param::Triangle, Slot::I64);
                return l;
            }
            Kind::Scan { line_dims, .. } => {
                ints(
                    &mut l,
                    &[
                        Param::Lines,
                        Param::Along,
                        Param::Segments,
                        Param::Chunk,
                        Param::Inner,
                        Param::Offset(0),
                        Param::AlongStride,
                    ],
                );
                for d in 0..*line_dims {
                    ints(&mut l, &[Param::Dim(d), Param::Stride(0, d)]);
                }
                return l;
            }
            Kind::Fft { rank, .. } => {
                ints(
                    &mut l,
                    &[
                        Param::Points,
                        Param::Rows,
                        Param::Along,
                        Param::Inner,
                        Param::Span,
                        Param::Inverse,
                        Param::Keep,
                        Param::Chirp,
                        Param::Offset(0),
                    ],
                );
                l.push(Param::Scale, Slot::F64);
                for d in 0..*rank {
                    ints(
                        &mut l,
                        &[Param::Dim(d), Param::Extent(d), Param::Stride(0, d)],
                    );
                }
                return l;
            }
        }
        let strided = self.access.contains(&Access::Strided);
        if strided {
            for d in 0..self.dims {
                l.push(Param::Dim(d), Slot::I64);
            }
        }
        for (s, a) in self.access.iter().enumerate() {
            l.push(Param::Offset(s), Slot::I64);
            if *a == Access::Strided {
                for d in 0..self.dims {
                    l.push(Param::Stride(s, d), Slot::I64);
                }
            }
        }
        expr::program_params(program, &mut l);
        l
    }

    /// Renders the kernels of this variant. `program` must be the program
    /// whose key the variant holds.
    pub fn render(&self, program: &Program) -> Rendered {
        let id = self.id();
        let params = self.params(program);
        let mut body = params.render(&format!("{id}_p"));
        let entries = match &self.kind {
            Kind::Elementwise { outputs } => {
                elementwise::render(self, program, &id, outputs, &mut body)
            }
            Kind::Reduce {
                ops,
                outputs,
                strategy,
            } => reduce::render(self, program, &id, ops, outputs, *strategy, &mut body),
            Kind::Gemm { dtype } => gemm::render(&id, *dtype, &mut body),
            Kind::Spmm { dtype } => spmm::render(&id, *dtype, &mut body),
            Kind::Spgemm { dtype } => spgemm::render(&id, *dtype, &mut body),
            Kind::MatCopy { dtype, conj } => matcopy::render(&id, *dtype, *conj, &mut body),
            Kind::Scan {
                kind,
                dtype,
                line_dims,
            } => scan::render(&id, *kind, *dtype, *line_dims, &mut body),
            Kind::Fft {
                precision,
                complex_input,
                rank,
            } => fft::render(&id, *precision, *complex_input, *rank, &mut body),
        };
        Rendered {
            id,
            body,
            entries,
            params,
        }
    }

    /// Whether the device needs double precision for this variant.
    pub fn needs_fp64(&self, program: &Program) -> bool {
        match self.kind {
            Kind::Gemm { dtype }
            | Kind::Spmm { dtype }
            | Kind::Spgemm { dtype }
            | Kind::MatCopy { dtype, .. } => matches!(dtype, DType::F64 | DType::C128),
            // Floats accumulate in double precision.
            Kind::Scan { dtype, .. } => dtype.is_float(),
            Kind::Fft { precision, .. } => precision == DType::F64,
            Kind::Reduce { .. } => true,
            Kind::Elementwise { .. } => expr::needs_fp64(program),
        }
    }
}

/// The kernel parameters of the program's sources, as pointers.
fn source_args(program: &Program) -> String {
    use crate::expr::ir::SourceKind;
    let mut s = String::new();
    for (i, src) in program.sources.iter().enumerate() {
        if let SourceKind::Buffer(d) = src {
            s.push_str(&format!(", GLOBAL const {}* in{i}", expr::ctype(*d)));
        }
    }
    s
}

/// Upper bound of a reduction's partial state in bytes (the host sizes the
/// partials buffer with it).
pub fn reduce_state_bytes() -> usize {
    reduce::state_bytes_bound()
}
