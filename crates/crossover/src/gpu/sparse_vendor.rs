//! A vendor library's sparse product (cuSPARSE's SpGEMM, read back) made
//! what the CPU stores: checked, rows sorted, zero sums dropped, in row
//! blocks on the CPU pool.

/// The arrays of a product a vendor library computed (int32 row pointers
/// and column indices, as read back) as the CPU stores a product: checked
/// (row pointers from 0 to `indices.len()`, never decreasing; columns
/// below `n`; no column twice in a row), each row's columns sorted, and
/// entries whose value is zero dropped (cuSPARSE keeps a sum that cancels;
/// the CPU's product does not store it; -0.0 is a zero, NaN is kept).
/// Also returns whether anything was sorted or dropped.
///
/// # Errors
/// What is wrong with the arrays (a fault of the library or the device,
/// never passed on as a matrix).
#[allow(clippy::type_complexity)]
pub(super) fn product_from_vendor<T: Copy + Default + PartialEq + Send + Sync>(
    m: usize,
    n: usize,
    indptr: &[i32],
    indices: &[i32],
    values: &[T],
) -> std::result::Result<(Vec<usize>, Vec<u32>, Vec<T>, bool), String> {
    use rayon::prelude::*;
    if indptr.len() != m + 1 || indices.len() != values.len() {
        return Err(format!(
            "{} row pointers for {m} rows, {} indices, {} values",
            indptr.len(),
            indices.len(),
            values.len()
        ));
    }
    if indptr[0] != 0 || indptr[m] as i64 != indices.len() as i64 {
        return Err(format!(
            "row pointers run from {} to {}, not 0 to {}",
            indptr[0],
            indptr[m],
            indices.len()
        ));
    }
    if let Some(i) = (0..m).find(|&i| indptr[i + 1] < indptr[i]) {
        return Err(format!(
            "row pointers decrease at row {i} ({} then {})",
            indptr[i],
            indptr[i + 1]
        ));
    }
    // Blocks of rows of about BLOCK entries run on the CPU pool (an H200's
    // product of two 4096^2 matrices of density 0.01 has 5.6M entries: one
    // thread's pass took a large part of the GPU route's time).
    const BLOCK: usize = 1 << 16;
    let mut starts = vec![0usize];
    for i in 1..m {
        if indptr[i] as usize - indptr[starts[starts.len() - 1]] as usize >= BLOCK {
            starts.push(i);
        }
    }
    starts.push(m);
    let blocks: Vec<(usize, usize)> = starts.windows(2).map(|w| (w[0], w[1])).collect();
    let parallel = indices.len() >= BLOCK && crate::cpu::threads() > 1;
    let run = |&(r0, r1): &(usize, usize)| vendor_rows(n, r0, r1, indptr, indices, values);
    let parts: Vec<VendorRows<T>> = if parallel {
        crate::cpu::pool().install(|| blocks.par_iter().map(run).collect::<Result<_, _>>())?
    } else {
        blocks.iter().map(run).collect::<Result<_, _>>()?
    };
    let total: usize = parts.iter().map(|p| p.indices.len()).sum();
    let mut out_ptr = Vec::with_capacity(m + 1);
    let mut out_idx: Vec<u32> = Vec::with_capacity(total);
    let mut out_val: Vec<T> = Vec::with_capacity(total);
    let mut changed = false;
    out_ptr.push(0usize);
    for p in parts {
        let base = out_idx.len();
        out_ptr.extend(p.ends.iter().map(|e| base + e));
        out_idx.extend_from_slice(&p.indices);
        out_val.extend_from_slice(&p.values);
        changed |= p.changed;
    }
    Ok((out_ptr, out_idx, out_val, changed))
}

/// Rows `r0..r1` of a vendor product as the CPU stores them: each row's
/// end (relative to the block), its columns and values, and whether
/// anything was sorted or dropped.
struct VendorRows<T> {
    ends: Vec<usize>,
    indices: Vec<u32>,
    values: Vec<T>,
    changed: bool,
}

fn vendor_rows<T: Copy + Default + PartialEq>(
    n: usize,
    r0: usize,
    r1: usize,
    indptr: &[i32],
    indices: &[i32],
    values: &[T],
) -> std::result::Result<VendorRows<T>, String> {
    let zero = T::default();
    let len = (indptr[r1] - indptr[r0]) as usize;
    let mut out = VendorRows {
        ends: Vec::with_capacity(r1 - r0),
        indices: Vec::with_capacity(len),
        values: Vec::with_capacity(len),
        changed: false,
    };
    let mut row: Vec<(u32, T)> = Vec::new();
    for i in r0..r1 {
        let (p0, p1) = (indptr[i] as usize, indptr[i + 1] as usize);
        let (cols, vals) = (&indices[p0..p1], &values[p0..p1]);
        if let Some(&j) = cols.iter().find(|&&j| j < 0 || j as usize >= n) {
            return Err(format!("column {j} in row {i} of {n} columns"));
        }
        let sorted = cols.windows(2).all(|w| w[0] < w[1]);
        if sorted && !vals.contains(&zero) {
            // The common case: the row as it is.
            out.indices.extend(cols.iter().map(|&j| j as u32));
            out.values.extend_from_slice(vals);
        } else {
            out.changed = true;
            row.clear();
            row.extend(cols.iter().zip(vals).map(|(&j, &v)| (j as u32, v)));
            if !sorted {
                row.sort_unstable_by_key(|e| e.0);
                if let Some(w) = row.windows(2).find(|w| w[0].0 == w[1].0) {
                    return Err(format!("column {} twice in row {i}", w[0].0));
                }
            }
            for &(j, v) in row.iter().filter(|e| e.1 != zero) {
                out.indices.push(j);
                out.values.push(v);
            }
        }
        out.ends.push(out.indices.len());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::product_from_vendor;

    #[test]
    fn vendor_products_are_sorted_and_lose_their_zeros() {
        // Row 0 in the library's order, row 1 empty, row 2 with a sum that
        // cancelled (0.0), a -0.0 and a NaN.
        let (p, i, v, changed) = product_from_vendor(
            3,
            4,
            &[0, 3, 3, 6],
            &[3, 0, 1, 0, 2, 3],
            &[1.0f64, 2.0, 3.0, 0.0, -0.0, f64::NAN],
        )
        .unwrap();
        assert_eq!(p, vec![0, 3, 3, 4]);
        assert_eq!(i, vec![0, 1, 3, 3]);
        assert_eq!(&v[..3], &[2.0, 3.0, 1.0]);
        assert!(v[3].is_nan());
        assert!(changed);
        // A product already as the CPU stores it is left alone.
        let (p, i, v, changed) =
            product_from_vendor(2, 2, &[0, 1, 2], &[1, 0], &[5.0f32, 6.0]).unwrap();
        assert_eq!(
            (p, i, v, changed),
            (vec![0, 1, 2], vec![1, 0], vec![5.0, 6.0], false)
        );
    }

    #[test]
    fn vendor_products_of_many_blocks_match_a_row_by_row_reference() {
        // 3,000 rows of 0-99 entries (about 150k: several blocks on the
        // pool), every seventh row reversed, some sums cancelled to zero.
        let (m, n) = (3000usize, 5000usize);
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |k: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % k
        };
        let (mut ptr, mut idx, mut val) = (vec![0i32], Vec::new(), Vec::new());
        for r in 0..m {
            let len = next(100) as usize;
            let mut cols: Vec<i32> = (0..len)
                .map(|c| (c * 50 + next(50) as usize) as i32)
                .collect();
            if r % 7 == 3 {
                cols.reverse();
            }
            for c in cols {
                idx.push(c);
                val.push(if next(13) == 0 {
                    0.0f32
                } else {
                    next(1000) as f32 - 500.5
                });
            }
            ptr.push(idx.len() as i32);
        }
        assert!(idx.len() > 2 * (1 << 16), "{} entries", idx.len());
        let (p, i, v, changed) = product_from_vendor(m, n, &ptr, &idx, &val).unwrap();
        let (mut rp, mut ri, mut rv) = (vec![0usize], Vec::new(), Vec::new());
        for r in 0..m {
            let (a, b) = (ptr[r] as usize, ptr[r + 1] as usize);
            let mut row: Vec<(u32, f32)> = (a..b).map(|q| (idx[q] as u32, val[q])).collect();
            row.sort_by_key(|e| e.0);
            for (c, x) in row.into_iter().filter(|e| e.1 != 0.0) {
                ri.push(c);
                rv.push(x);
            }
            rp.push(ri.len());
        }
        assert!(changed);
        assert_eq!((p, i, v), (rp, ri, rv));
        // A fault in a late block is found and named.
        let last = idx.len() - 1;
        idx[last] = n as i32;
        let e = product_from_vendor(m, n, &ptr, &idx, &val).unwrap_err();
        assert!(e.contains(&format!("column {n} in row")), "{e}");
    }

    #[test]
    fn malformed_vendor_products_are_errors() {
        let f = |m, n, p: &[i32], i: &[i32], v: &[f32]| product_from_vendor(m, n, p, i, v);
        assert!(
            f(2, 2, &[0, 1], &[0], &[1.0]).is_err(),
            "too few row pointers"
        );
        assert!(f(1, 2, &[0, 2], &[0], &[1.0]).is_err(), "past the entries");
        assert!(f(2, 2, &[0, 1, 0], &[0], &[1.0]).is_err(), "decreasing");
        assert!(
            f(1, 2, &[0, 1], &[2], &[1.0]).is_err(),
            "column out of range"
        );
        assert!(f(1, 2, &[0, 1], &[-1], &[1.0]).is_err(), "negative column");
        assert!(
            f(1, 3, &[0, 2], &[1, 1], &[1.0, 2.0]).is_err(),
            "a duplicate"
        );
        assert!(f(1, 3, &[0, 1], &[1], &[]).is_err(), "values missing");
    }
}
