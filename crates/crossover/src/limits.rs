//! Size limits, checked before anything is allocated or computed.
//!
//! NumPy refuses a shape whose byte count overflows (`ValueError: array is
//! too big`) and an array the machine cannot hold (`MemoryError`). crossover
//! records work lazily, so the same rules apply at two points: the byte
//! count when a node is recorded ([`checked_numel`]; `Array::full` also
//! checks memory then, as NumPy's `ones` does), and memory when work is
//! about to run ([`check_graph`]: every array NumPy would allocate must fit)
//! or a buffer is allocated ([`check_alloc`]). An allocation sized by user
//! input is never attempted blindly: a failed one aborts the process.

use crate::array::Array;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::graph::Graph;
use crate::op::Op;
use std::sync::OnceLock;

/// Elements of `shape` (1 for 0-d), or [`Error::TooBig`] when its byte
/// count exceeds `isize::MAX` (NumPy's rule: zero-length dims aside, the
/// product of the dims times the item size must not overflow).
pub fn checked_numel(op: &'static str, shape: &[usize], dtype: DType) -> Result<usize> {
    let too_big = || Error::TooBig {
        op,
        shape: shape.to_vec(),
        dtype,
    };
    let mut bytes = dtype.size();
    let mut zero = false;
    for &d in shape {
        if d == 0 {
            zero = true;
            continue;
        }
        bytes = bytes.checked_mul(d).ok_or_else(too_big)?;
    }
    if bytes > isize::MAX as usize {
        return Err(too_big());
    }
    Ok(if zero { 0 } else { bytes / dtype.size() })
}

/// Bytes of memory one process can use on this machine: physical memory
/// plus swap (what Linux's default overcommit rule lets one allocation
/// reach), or the cgroup limit when lower. Read once.
pub fn memory_limit() -> u64 {
    static LIMIT: OnceLock<u64> = OnceLock::new();
    *LIMIT.get_or_init(|| {
        let system = meminfo().unwrap_or_else(physical_memory);
        match cgroup_limit() {
            Some(c) if c > 0 => system.min(c),
            _ => system,
        }
    })
}

/// MemTotal + SwapTotal from /proc/meminfo.
fn meminfo() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let field = |name: &str| -> Option<u64> {
        let line = text.lines().find(|l| l.starts_with(name))?;
        let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kb.saturating_mul(1024))
    };
    Some(field("MemTotal:")?.saturating_add(field("SwapTotal:").unwrap_or(0)))
}

/// cgroup v2 (`memory.max`) or v1 (`memory.limit_in_bytes`) limit, if set.
fn cgroup_limit() -> Option<u64> {
    [
        "/sys/fs/cgroup/memory.max",
        "/sys/fs/cgroup/memory/memory.limit_in_bytes",
    ]
    .iter()
    .find_map(|p| std::fs::read_to_string(p).ok()?.trim().parse::<u64>().ok())
}

fn physical_memory() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let (pages, page) = unsafe {
        (
            libc::sysconf(libc::_SC_PHYS_PAGES),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    (pages.max(0) as u64).saturating_mul(page.max(0) as u64)
}

/// [`Error::OutOfMemory`] when an array of `shape` and `dtype` would not fit
/// in [`memory_limit`].
pub fn check_fits(op: &'static str, shape: &[usize], dtype: DType) -> Result<()> {
    let bytes = shape.iter().map(|&d| d as f64).product::<f64>() * dtype.size() as f64;
    check_bytes(op, bytes, shape, dtype)
}

/// Like [`check_fits`] for a flat allocation of `len` elements.
pub fn check_alloc(op: &'static str, len: usize, dtype: DType) -> Result<()> {
    check_bytes(op, len as f64 * dtype.size() as f64, &[len], dtype)
}

/// [`Error::OutOfMemory`] when `bytes` (for an array described by `shape`
/// and `dtype`) exceed [`memory_limit`].
pub fn check_bytes(op: &'static str, bytes: f64, shape: &[usize], dtype: DType) -> Result<()> {
    let limit = memory_limit();
    if bytes > limit as f64 {
        return Err(Error::OutOfMemory {
            op,
            bytes,
            shape: shape.to_vec(),
            dtype,
            limit,
        });
    }
    Ok(())
}

/// Refuses work that NumPy could not do for lack of memory: every pending
/// array of `graph` that NumPy would allocate must fit. Fused intermediates
/// never take memory here, but an array that could not exist in NumPy is a
/// mistake, and its computation would run for hours. Views and constants
/// are exempt: NumPy allocates neither (a broadcast scalar is a constant
/// here); `Array::full` checks the constants a user asks for.
pub(crate) fn check_graph(graph: &Graph) -> Result<()> {
    graph.nodes.iter().try_for_each(check_node)
}

fn check_node(a: &Array) -> Result<()> {
    if matches!(a.op(), Op::View(_) | Op::Full(_)) {
        return Ok(());
    }
    check_fits(a.op_name(), a.shape(), a.dtype())
}

/// Bytes as text with a binary prefix, like NumPy's `MemoryError`
/// (`7.28 TiB`).
pub fn bytes_text(bytes: f64) -> String {
    const UNITS: [&str; 7] = ["bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut v = bytes;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{v:.0} bytes")
    } else {
        format!("{v:.2} {}", UNITS[u])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_counts_that_overflow_are_too_big() {
        assert_eq!(checked_numel("t", &[2, 3], DType::F64).unwrap(), 6);
        assert_eq!(checked_numel("t", &[], DType::F64).unwrap(), 1);
        assert_eq!(checked_numel("t", &[1 << 40, 0], DType::F64).unwrap(), 0);
        for shape in [
            vec![1usize << 32, 1 << 32],
            vec![1 << 62, 4],
            vec![1 << 61, 1],
        ] {
            let e = checked_numel("t", &shape, DType::F64).unwrap_err();
            assert!(matches!(e, Error::TooBig { .. }), "{e}");
            assert!(e.to_string().contains("array is too big"));
        }
        // A zero dim does not hide an overflowing product (NumPy's rule).
        assert!(checked_numel("t", &[0, 1 << 62, 1 << 62], DType::Bool).is_err());
    }

    #[test]
    fn memory_limit_is_sane_and_refusals_say_why() {
        let limit = memory_limit();
        assert!(limit >= 64 << 20, "{limit}");
        let e = check_fits("ones", &[1_000_000, 1_000_000], DType::F64).unwrap_err();
        assert!(e.to_string().contains("7.28 TiB"), "{e}");
        assert!(check_fits("ones", &[1000, 1000], DType::F64).is_ok());
        assert_eq!(bytes_text(512.0), "512 bytes");
        assert_eq!(bytes_text(1536.0), "1.50 KiB");
    }
}
