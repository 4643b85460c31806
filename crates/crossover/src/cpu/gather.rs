//! Reading strided layouts: positions of a run of iteration points, and
//! gathers of elements through a layout.

use crate::shape::Layout;

/// How a source is read over the iteration space.
#[derive(Clone, Debug)]
pub enum Access {
    /// Point `i` is at `offset + i`.
    Contiguous { offset: usize },
    /// Every point reads the same position.
    Constant { pos: usize },
    /// General strided layout (coalesced).
    Strided(Layout),
}

impl Access {
    /// Classifies a layout over the iteration space.
    pub fn of(layout: &Layout) -> Access {
        // The common case without coalescing's allocation: a contiguous
        // layout of several elements coalesces to one run of stride 1.
        if layout.is_contiguous() && layout.numel() != 1 {
            return Access::Contiguous {
                offset: layout.offset,
            };
        }
        let c = layout.coalesce();
        if c.numel() == 0 {
            return Access::Contiguous { offset: c.offset };
        }
        if c.strides.iter().all(|&s| s == 0) || c.shape.is_empty() {
            return Access::Constant { pos: c.offset };
        }
        if c.shape.len() == 1 && c.strides[0] == 1 {
            return Access::Contiguous { offset: c.offset };
        }
        Access::Strided(c)
    }
}

/// Calls `f(position)` for every element of `layout` in row-major order.
pub fn for_each_position(layout: &Layout, mut f: impl FnMut(usize)) {
    let n = layout.numel();
    if n == 0 {
        return;
    }
    match Access::of(layout) {
        Access::Contiguous { offset } => (offset..offset + n).for_each(f),
        Access::Constant { pos } => (0..n).for_each(|_| f(pos)),
        Access::Strided(l) => walk(&l, 0, n, |p, run, stride| {
            let mut q = p as isize;
            for _ in 0..run {
                f(q as usize);
                q += stride;
            }
        }),
    }
}

/// Walks points `start..start+len` of a coalesced layout as runs along the
/// last dim: `f(first_position, run_length, stride)`.
#[inline(always)]
pub fn walk(l: &Layout, start: usize, len: usize, mut f: impl FnMut(usize, usize, isize)) {
    let nd = l.shape.len();
    if nd == 0 {
        if len > 0 {
            f(l.offset, 1, 0);
        }
        return;
    }
    // Multi-index of `start`.
    let mut idx = [0usize; 16];
    let mut big_idx;
    let idx: &mut [usize] = if nd <= 16 {
        &mut idx[..nd]
    } else {
        big_idx = vec![0usize; nd];
        &mut big_idx
    };
    let mut rem = start;
    for d in (0..nd).rev() {
        idx[d] = rem % l.shape[d];
        rem /= l.shape[d];
    }
    let mut pos: isize = l.offset as isize
        + idx
            .iter()
            .zip(&l.strides)
            .map(|(&i, &s)| i as isize * s)
            .sum::<isize>();
    let last = nd - 1;
    let (n_last, s_last) = (l.shape[last], l.strides[last]);
    let mut done = 0usize;
    while done < len {
        let run = (n_last - idx[last]).min(len - done);
        f(pos as usize, run, s_last);
        done += run;
        pos += run as isize * s_last;
        idx[last] += run;
        // Carry into outer dims.
        let mut d = last;
        while idx[d] == l.shape[d] && d > 0 {
            pos -= l.shape[d] as isize * l.strides[d];
            idx[d] = 0;
            d -= 1;
            idx[d] += 1;
            pos += l.strides[d];
        }
    }
}

/// Copies the elements of points `start..start+out.len()` into `out`.
#[inline(always)]
pub fn gather<T: Copy>(data: &[T], access: &Access, start: usize, out: &mut [T]) {
    match access {
        Access::Contiguous { offset } => {
            out.copy_from_slice(&data[offset + start..offset + start + out.len()])
        }
        Access::Constant { pos } => out.fill(data[*pos]),
        Access::Strided(l) => {
            let mut o = 0usize;
            walk(l, start, out.len(), |p, run, stride| {
                let dst = &mut out[o..o + run];
                if stride == 1 {
                    dst.copy_from_slice(&data[p..p + run]);
                } else if stride == 0 {
                    dst.fill(data[p]);
                } else {
                    let mut q = p as isize;
                    for d in dst.iter_mut() {
                        *d = data[q as usize];
                        q += stride;
                    }
                }
                o += run;
            });
        }
    }
}

/// Positions (flat indices) of points `start..start+out.len()`.
#[inline(always)]
pub fn positions(access: &Access, start: usize, out: &mut [u64]) {
    match access {
        Access::Contiguous { offset } => {
            for (i, o) in out.iter_mut().enumerate() {
                *o = (offset + start + i) as u64;
            }
        }
        Access::Constant { pos } => out.fill(*pos as u64),
        Access::Strided(l) => {
            let mut o = 0usize;
            walk(l, start, out.len(), |p, run, stride| {
                let mut q = p as isize;
                for d in &mut out[o..o + run] {
                    *d = q as u64;
                    q += stride;
                }
                o += run;
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walk_matches_positions_at_any_start() {
        let base = Layout::contiguous(&[3, 4, 5]);
        let t = base.permute("t", &[2, 0, 1]).unwrap().coalesce();
        let mut all = Vec::new();
        for_each_position(&t, |p| all.push(p as u64));
        for start in [0usize, 1, 4, 7, 13, 59] {
            for len in [0usize, 1, 3, 60 - start]
                .into_iter()
                .filter(|&l| start + l <= 60)
            {
                let mut out = vec![0u64; len];
                positions(&Access::of(&t), start, &mut out);
                assert_eq!(out[..], all[start..start + len], "start {start} len {len}");
            }
        }
    }

    #[test]
    fn classifies_accesses() {
        let l = Layout::contiguous(&[4, 5]);
        assert!(matches!(Access::of(&l), Access::Contiguous { offset: 0 }));
        let b = Layout::contiguous(&[1]).broadcast_to("b", &[4, 5]).unwrap();
        assert!(matches!(Access::of(&b), Access::Constant { pos: 0 }));
        let s = l.permute("p", &[1, 0]).unwrap();
        assert!(matches!(Access::of(&s), Access::Strided(_)));
    }
}
