//! Kernel parameters: one description that renders the C struct a kernel
//! takes by value and packs the matching bytes on the host.
//!
//! Every field occupies one 8-byte slot (a 4-byte `f32` is followed by a
//! 4-byte pad), so the layout is the same under every C compiler and needs
//! no alignment rules; the CUDA rendering also `static_assert`s the size
//! and each offset, so NVRTC catches any drift at compile time.

use std::fmt::Write;

/// The C type of a parameter slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Slot {
    I64,
    U64,
    F64,
    /// An `f32` and 4 bytes of padding.
    F32,
}

/// What a parameter holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Param {
    /// Points of an elementwise kernel.
    Points,
    /// Output positions of a reduction.
    Kept,
    /// Points reduced into each output.
    Reduced,
    /// Segments each output's points are split into (reductions).
    Segments,
    /// Points per segment.
    Chunk,
    /// Size of collapsed iteration dim `d`.
    Dim(usize),
    /// Offset (elements) of source `s`.
    Offset(usize),
    /// Stride (elements) of source `s` along collapsed dim `d`.
    Stride(usize, usize),
    /// The constant of instruction `r`.
    Const(u32),
    /// Arange instruction `r`: start, step, the index of the exact last
    /// element (-1: none) and its value.
    ArangeStart(u32),
    ArangeStep(u32),
    ArangeLastIndex(u32),
    ArangeLastValue(u32),
    /// Random instruction `r`: seed and stream.
    Seed(u32),
    Stream(u32),
    /// Matrix products: rows and columns of the result, and the inner
    /// dimension.
    Rows,
    Cols,
    Inner,
    /// Row and column strides (elements) of operand `o` (0: `a`, 1: `b`).
    RowStride(u8),
    ColStride(u8),
    /// Scans: lines scanned, their length and the input's stride along them.
    Lines,
    Along,
    AlongStride,
    /// FFTs: the input's size along dim `d` (the work array crops or pads
    /// it), the half-size of a pass's sub-transforms, the direction (1:
    /// inverse), outputs kept along the axis and the scale (f64).
    Extent(usize),
    Span,
    Inverse,
    Keep,
    Scale,
    /// FFTs by Bluestein's algorithm: the length of the transform whose
    /// chirp a kernel applies (the work array is padded past it).
    Chirp,
    /// Matrix copies: which triangle is kept ([`super::matcopy::Tri`]).
    Triangle,
}

impl Param {
    /// The field name in C.
    pub fn name(self) -> String {
        match self {
            Param::Points => "n".into(),
            Param::Kept => "kept".into(),
            Param::Reduced => "red".into(),
            Param::Segments => "segs".into(),
            Param::Chunk => "chunk".into(),
            Param::Dim(d) => format!("dim{d}"),
            Param::Offset(s) => format!("off{s}"),
            Param::Stride(s, d) => format!("str{s}_{d}"),
            Param::Const(r) => format!("c{r}"),
            Param::ArangeStart(r) => format!("a{r}_start"),
            Param::ArangeStep(r) => format!("a{r}_step"),
            Param::ArangeLastIndex(r) => format!("a{r}_lastj"),
            Param::ArangeLastValue(r) => format!("a{r}_last"),
            Param::Seed(r) => format!("k{r}_seed"),
            Param::Stream(r) => format!("k{r}_stream"),
            Param::Rows => "m".into(),
            Param::Cols => "n".into(),
            Param::Inner => "k".into(),
            Param::RowStride(o) => format!("{}_rs", ["a", "b"][o as usize & 1]),
            Param::ColStride(o) => format!("{}_cs", ["a", "b"][o as usize & 1]),
            Param::Lines => "lines".into(),
            Param::Along => "len".into(),
            Param::AlongStride => "axis_str".into(),
            Param::Extent(d) => format!("ext{d}"),
            Param::Span => "span".into(),
            Param::Inverse => "inv".into(),
            Param::Keep => "keep".into(),
            Param::Scale => "scale".into(),
            Param::Chirp => "chirp".into(),
            Param::Triangle => "tri".into(),
        }
    }
}

/// A value for one slot.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    I64(i64),
    U64(u64),
    F64(f64),
    F32(f32),
}

/// The parameter struct of one kernel variant.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ParamLayout {
    pub fields: Vec<(Param, Slot)>,
}

impl ParamLayout {
    /// Adds a field (once).
    pub fn push(&mut self, p: Param, slot: Slot) {
        if !self.fields.iter().any(|f| f.0 == p) {
            self.fields.push((p, slot));
        }
    }

    /// Bytes of the struct.
    pub fn size(&self) -> usize {
        8 * self.fields.len().max(1)
    }

    /// The C `typedef` named `name`, with layout assertions (checked by
    /// compilers that support them; see the preludes' `XO_ASSERT_LAYOUT`).
    pub fn render(&self, name: &str) -> String {
        let mut s = String::from("typedef struct {\n");
        if self.fields.is_empty() {
            s.push_str("  i64 unused;\n");
        }
        for (p, slot) in &self.fields {
            let n = p.name();
            let _ = match slot {
                Slot::I64 => writeln!(s, "  i64 {n};"),
                Slot::U64 => writeln!(s, "  u64 {n};"),
                Slot::F64 => writeln!(s, "  f64 {n};"),
                Slot::F32 => writeln!(s, "  f32 {n}; u32 {n}_pad;"),
            };
        }
        let _ = writeln!(s, "}} {name};");
        let _ = writeln!(s, "XO_ASSERT_LAYOUT(sizeof({name}) == {});", self.size());
        // The members' sizes add up to the struct's: no padding anywhere,
        // so every member sits where the host packs it (NVRTC has no
        // `offsetof`).
        let mut members = Vec::new();
        for (p, slot) in &self.fields {
            let n = p.name();
            members.push(format!("sizeof((({name}*)0)->{n})"));
            if *slot == Slot::F32 {
                members.push(format!("sizeof((({name}*)0)->{n}_pad)"));
            }
        }
        if !members.is_empty() {
            let _ = writeln!(
                s,
                "XO_ASSERT_LAYOUT({} == {});",
                members.join(" + "),
                self.size()
            );
        }
        s
    }

    /// The struct's bytes, asking `value` for each field.
    ///
    /// # Errors
    /// The message of `value`, or a slot/value type mismatch (a bug).
    pub fn pack(
        &self,
        mut value: impl FnMut(Param) -> Result<Value, String>,
    ) -> Result<Vec<u8>, String> {
        let mut out = vec![0u8; self.size()];
        for (i, (p, slot)) in self.fields.iter().enumerate() {
            let bytes: [u8; 8] = match (slot, value(*p)?) {
                (Slot::I64, Value::I64(v)) => v.to_ne_bytes(),
                (Slot::U64, Value::U64(v)) => v.to_ne_bytes(),
                (Slot::F64, Value::F64(v)) => v.to_ne_bytes(),
                (Slot::F32, Value::F32(v)) => {
                    let mut b = [0u8; 8];
                    b[..4].copy_from_slice(&v.to_ne_bytes());
                    b
                }
                (slot, v) => {
                    return Err(format!("parameter {}: {v:?} in a {slot:?} slot", p.name()))
                }
            };
            out[8 * i..8 * i + 8].copy_from_slice(&bytes);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_renders_and_packs_in_slots() {
        let mut l = ParamLayout::default();
        l.push(Param::Points, Slot::I64);
        l.push(Param::Const(3), Slot::F32);
        l.push(Param::Seed(4), Slot::U64);
        l.push(Param::Points, Slot::I64);
        assert_eq!(l.size(), 24);
        let c = l.render("xo_p");
        assert!(c.contains("f32 c3; u32 c3_pad;"), "{c}");
        assert!(
            c.contains(
                "sizeof(((xo_p*)0)->n) + sizeof(((xo_p*)0)->c3) + sizeof(((xo_p*)0)->c3_pad) + sizeof(((xo_p*)0)->k4_seed) == 24"
            ),
            "{c}"
        );
        let b = l
            .pack(|p| match p {
                Param::Points => Ok(Value::I64(-2)),
                Param::Const(_) => Ok(Value::F32(1.5)),
                _ => Ok(Value::U64(7)),
            })
            .unwrap();
        assert_eq!(&b[0..8], &(-2i64).to_ne_bytes());
        assert_eq!(&b[8..12], &1.5f32.to_ne_bytes());
        assert_eq!(&b[16..24], &7u64.to_ne_bytes());
        assert!(l.pack(|_| Ok(Value::F64(1.0))).is_err());
    }
}
