//! Views: reshape, transpose, broadcast, slicing with steps, on ready and
//! pending arrays, read directly and fused into kernels.

use crate::common::*;
use crossover::{Array, DType, SliceArg};

fn grid(shape: &[usize]) -> (Array, Vec<f64>) {
    let n: usize = shape.iter().product();
    let v: Vec<f64> = (0..n).map(|i| i as f64 * 0.5 - 3.0).collect();
    (Array::from_vec(v.clone(), shape).unwrap(), v)
}

#[test]
fn transpose_and_permute() {
    on_every_engine(|_e| {
        let (a, v) = grid(&[3, 4, 5]);
        let p = a.permute(&[2, 0, 1]).unwrap();
        assert_eq!(p.shape(), &[5, 3, 4]);
        let want: Vec<f64> = indices(&[5, 3, 4])
            .iter()
            .map(|i| v[flat(&[i[1], i[2], i[0]], &[3, 4, 5])])
            .collect();
        assert_eq!(p.to_vec::<f64>().unwrap(), want);
        // The same view of a pending array fuses into the kernel reading it.
        let q = a
            .mul(2.0)
            .unwrap()
            .permute(&[2, 0, 1])
            .unwrap()
            .add(1.0)
            .unwrap();
        let ks = crossover::lower(std::slice::from_ref(&q)).unwrap();
        assert_eq!(ks.len(), 1, "permute is pushed into the loads");
        assert_eq!(
            q.to_vec::<f64>().unwrap(),
            want.iter().map(|x| x * 2.0 + 1.0).collect::<Vec<_>>()
        );
        assert!(a.permute(&[0, 0, 1]).is_err());
    });
}

#[test]
fn slicing_with_steps_and_negative_steps() {
    on_every_engine(|_e| {
        let (a, v) = grid(&[6, 7]);
        let s = a
            .slice(&[
                SliceArg::Range {
                    start: Some(1),
                    stop: Some(6),
                    step: 2,
                },
                SliceArg::Range {
                    start: None,
                    stop: None,
                    step: -3,
                },
            ])
            .unwrap();
        assert_eq!(s.shape(), &[3, 3]);
        let rows = [1, 3, 5];
        let cols = [6, 3, 0];
        let want: Vec<f64> = rows
            .iter()
            .flat_map(|&r| cols.iter().map(move |&c| (r, c)))
            .map(|(r, c)| v[r * 7 + c])
            .collect();
        assert_eq!(s.to_vec::<f64>().unwrap(), want);
        // Integer index removes an axis; a new axis adds one.
        let r = a.slice(&[SliceArg::Index(-1), SliceArg::NewAxis]).unwrap();
        assert_eq!(r.shape(), &[1, 7]);
        assert_eq!(r.to_vec::<f64>().unwrap(), v[35..42].to_vec());
        assert!(a.slice(&[SliceArg::Index(6)]).is_err());
        assert!(a
            .slice(&[SliceArg::Range {
                start: None,
                stop: None,
                step: 0
            }])
            .is_err());
        // Slicing a pending result and reducing it.
        let m = a
            .add(1.0)
            .unwrap()
            .slice(&[SliceArg::full(), SliceArg::range(2, 5)])
            .unwrap()
            .sum(None, false)
            .unwrap();
        let want: f64 = (0..6)
            .flat_map(|r| (2..5).map(move |c| (r, c)))
            .map(|(r, c)| v[r * 7 + c] + 1.0)
            .sum();
        assert!((m.item().unwrap() - want).abs() < 1e-12);
    });
}

#[test]
fn reshape_copies_only_when_it_must() {
    on_every_engine(|_e| {
        let (a, v) = grid(&[4, 6]);
        let r = a.reshape(&[2, -1, 3]).unwrap();
        assert_eq!(r.shape(), &[2, 4, 3]);
        assert_eq!(r.to_vec::<f64>().unwrap(), v);
        // Ready views share the buffer.
        assert!(std::sync::Arc::ptr_eq(
            &r.value().unwrap().buffer,
            &a.value().unwrap().buffer
        ));
        // A transposed array cannot be flattened in place: values still right.
        let t = a.transpose().unwrap().reshape(&[-1]).unwrap();
        let want: Vec<f64> = (0..6)
            .flat_map(|c| (0..4).map(move |r| (r, c)))
            .map(|(r, c)| v[r * 6 + c])
            .collect();
        assert_eq!(t.to_vec::<f64>().unwrap(), want);
        assert!(a.reshape(&[5, -1]).is_err());
        assert!(a.reshape(&[-1, -1]).is_err());
        assert_eq!(a.expand_dims(1).unwrap().shape(), &[4, 1, 6]);
        assert_eq!(
            a.expand_dims(1).unwrap().squeeze(None).unwrap().shape(),
            &[4, 6]
        );
        assert!(a.squeeze(Some(0)).is_err());
    });
}

#[test]
fn broadcast_views_read_without_copying() {
    on_every_engine(|_e| {
        let (row, rv) = grid(&[5]);
        let b = row.broadcast_to(&[3, 5]).unwrap();
        assert_eq!(b.value().unwrap().buffer.len(), 5);
        assert_eq!(
            b.to_vec::<f64>().unwrap(),
            [rv.clone(), rv.clone(), rv.clone()].concat()
        );
        assert!(row.broadcast_to(&[3, 4]).is_err());
        // A pending producer read through a broadcast is computed once.
        let s = row.sin().unwrap();
        let y = s.broadcast_to(&[4000, 5]).unwrap().add(1.0).unwrap();
        let ks = crossover::lower(std::slice::from_ref(&y)).unwrap();
        assert_eq!(ks.len(), 2);
        assert_eq!(ks[0].reasons[0], crossover::fuse::Boundary::Broadcast);
        let got = y.to_vec::<f64>().unwrap();
        assert_close(
            &got[5 * 3999..],
            &rv.iter().map(|x| x.sin() + 1.0).collect::<Vec<_>>(),
            1e-15,
            0.0,
            "broadcast",
        );
    });
}

#[test]
fn views_across_chunk_edges_match_references() {
    on_every_engine(|_e| {
        for dtype in [DType::F32, DType::F64] {
            let (a, v) = array(&[2051, 67], dtype, 5, -5.0, 5.0);
            let t = a.transpose().unwrap().mul(3.0).unwrap();
            let want: Vec<f64> = indices(&[67, 2051])
                .iter()
                .map(|i| v[i[1] * 67 + i[0]] * 3.0)
                .collect();
            assert_close(
                &t.to_vec_f64().unwrap(),
                &want,
                rtol(dtype, 1.0),
                0.0,
                "transposed chain",
            );
        }
    });
}
