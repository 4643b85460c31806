//! Fusion is tested by kernel counts and boundary reasons for known graphs.

use crate::common::*;
use crossover::fuse::{Boundary, KernelBody};
use crossover::{lower, Array, DType, Generator};

fn inputs(n: usize) -> (Array, Array) {
    let mut rng = Generator::new(3);
    let a = rng.uniform(&[n, n], DType::F32).unwrap();
    let b = rng.uniform(&[n, n], DType::F32).unwrap();
    Array::eval_all(&[a.clone(), b.clone()]).unwrap();
    (a, b)
}

#[test]
fn elementwise_chain_is_one_kernel_reading_each_input_once() {
    on_every_engine_lenient(|_e| {
        let (a, b) = inputs(64);
        let y = a
            .mul(&b)
            .unwrap()
            .add(a.sin().unwrap())
            .unwrap()
            .add(b.cos().unwrap())
            .unwrap();
        let ks = lower(std::slice::from_ref(&y)).unwrap();
        assert_eq!(ks.len(), 1);
        let KernelBody::Fused {
            sources, program, ..
        } = &ks[0].body
        else {
            panic!()
        };
        assert_eq!(sources.len(), 2, "a and b are each loaded once");
        assert_eq!(program.op_count(), 5);
        assert_eq!(ks[0].reasons, vec![Boundary::Requested]);
    });
}

#[test]
fn reduction_swallows_its_chain() {
    on_every_engine_lenient(|_e| {
        let (a, b) = inputs(64);
        let s = a
            .mul(&b)
            .unwrap()
            .add(1.0)
            .unwrap()
            .std(None, false, 0)
            .unwrap();
        let ks = lower(std::slice::from_ref(&s)).unwrap();
        assert_eq!(ks.len(), 1);
        assert_eq!(ks[0].outputs.len(), 1);
        assert_eq!(
            ks[0].bytes(),
            64 * 64 * 4 * 2 + 4,
            "reads a and b, writes one f32"
        );
    });
}

#[test]
fn sibling_reductions_share_a_kernel() {
    on_every_engine_lenient(|_e| {
        let (a, _) = inputs(64);
        let m = a.mean(Some(&[1]), true).unwrap();
        let s = a.std(Some(&[1]), true, 0).unwrap();
        let z = a.sub(&m).unwrap().div(&s).unwrap();
        let ks = lower(std::slice::from_ref(&z)).unwrap();
        // mean+std in one pass, then the standardisation.
        assert_eq!(ks.len(), 2);
        assert_eq!(ks[0].outputs.len(), 2);
    });
}

#[test]
fn intermediates_used_by_two_kernels_are_materialised_once() {
    on_every_engine_lenient(|_e| {
        let (a, b) = inputs(64);
        let u = a.mul(&b).unwrap();
        let t = u.exp().unwrap();
        let s1 = t.sum(None, false).unwrap();
        let s2 = t.max(Some(&[0]), false).unwrap();
        let ks = lower(&[s1.clone(), s2.clone()]).unwrap();
        assert_eq!(ks.len(), 3);
        assert_eq!(ks[0].reasons, vec![Boundary::Shared]);
        Array::eval_all(&[s1, s2]).unwrap();
        assert!(t.is_ready(), "the shared intermediate is written once");
        assert!(!u.is_ready(), "a fused-away intermediate is never written");
    });
}

#[test]
fn requested_intermediates_are_written_and_reused() {
    on_every_engine_lenient(|_e| {
        let (a, b) = inputs(32);
        let t = a.mul(&b).unwrap();
        let y = t.add(1.0).unwrap();
        let ks = lower(&[t.clone(), y.clone()]).unwrap();
        assert_eq!(ks.len(), 2);
        Array::eval_all(&[t.clone(), y.clone()]).unwrap();
        assert!(t.is_ready() && y.is_ready());
    });
}

#[test]
fn random_sources_fuse_into_their_reduction() {
    on_every_engine_lenient(|_e| {
        let mut rng = Generator::new(1);
        let x = rng.uniform(&[1_000_000], DType::F32).unwrap();
        let y = rng.uniform(&[1_000_000], DType::F32).unwrap();
        let pi = x
            .mul(&x)
            .unwrap()
            .add(y.mul(&y).unwrap())
            .unwrap()
            .le(1.0)
            .unwrap()
            .mean(None, false)
            .unwrap();
        let ks = lower(std::slice::from_ref(&pi)).unwrap();
        assert_eq!(ks.len(), 1);
        assert_eq!(ks[0].bytes(), 8, "no sample array is read or written");
    });
}

#[test]
fn broadcast_of_a_reduction_is_read_not_recomputed() {
    on_every_engine_lenient(|_e| {
        let (a, _) = inputs(128);
        let centered = a.sub(a.mean(Some(&[0]), true).unwrap()).unwrap();
        let ks = lower(std::slice::from_ref(&centered)).unwrap();
        assert_eq!(ks.len(), 2);
        assert_eq!(ks[0].reasons, vec![Boundary::Reduction]);
    });
}
