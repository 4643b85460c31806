//! Process-wide flags (issue 19): stopping a long computation, and the
//! invalid-cast flag behind NumPy's warning. Their own test binary: other
//! tests running at the same time would see (and set) the flags.

#[path = "engine/common.rs"]
mod common;

use crossover::cpu::num::take_invalid_cast;
use crossover::{Array, DType, Error};
use std::time::{Duration, Instant};

#[test]
fn a_requested_interrupt_stops_a_long_reduction() {
    // 1e13 points of a broadcast constant: hours of work, stopped within a
    // batch of tasks. The flag is process-wide, so this test owns it.
    let one = Array::ones(&[1], DType::F32).unwrap();
    one.eval().unwrap();
    let x = one
        .broadcast_to(&[10_000_000_000_000])
        .unwrap()
        .sum(None, false)
        .unwrap();
    let stopper = std::thread::spawn(|| {
        std::thread::sleep(Duration::from_millis(200));
        crossover::interrupt::request();
    });
    let start = Instant::now();
    let e = x.eval().unwrap_err();
    stopper.join().unwrap();
    crossover::interrupt::clear();
    assert!(matches!(e, Error::Interrupted { .. }), "{e}");
    assert!(start.elapsed() < Duration::from_secs(30));
    // Later work runs normally.
    let y = Array::from_vec(vec![1.0f32, 2.0], &[2]).unwrap();
    assert_eq!(y.sum(None, false).unwrap().item().unwrap(), 3.0);
}

#[test]
fn float_to_int_casts_give_numpys_values_and_flag_them() {
    // On every engine: a GPU kernel reports the conversions through its
    // flag, as the CPU does through the process-wide one.
    common::on_every_engine(|e| {
        let _ = take_invalid_cast();
        let x = Array::from_vec(
            vec![f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 1e30, 3e9, -2.7],
            &[6],
        )
        .unwrap();
        let i32s = x.cast(DType::I32).unwrap().to_vec::<i32>().unwrap();
        assert!(take_invalid_cast(), "{}: int32", e.name);
        let i64s = x.cast(DType::I64).unwrap().to_vec::<i64>().unwrap();
        assert!(take_invalid_cast(), "{}: int64", e.name);
        if cfg!(target_arch = "x86_64") {
            // What NumPy gives on x86 (the C cast's "integer indefinite").
            let m = i32::MIN;
            assert_eq!(i32s, vec![m, m, m, m, m, -2], "{}", e.name);
            let m = i64::MIN;
            assert_eq!(i64s, vec![m, m, m, m, 3_000_000_000, -2], "{}", e.name);
        }
        // Inside a reduction's kernel too: float32, one bad value among
        // 5,000 (past a work-group's points).
        let mut v: Vec<f32> = (0..5000).map(|i| (i % 7) as f32 - 3.5).collect();
        v[4321] = f32::NAN;
        let s = Array::from_vec(v.clone(), &[5000])
            .unwrap()
            .cast(DType::I64)
            .unwrap()
            .sum(None, false)
            .unwrap()
            .item()
            .unwrap();
        assert!(take_invalid_cast(), "{}: sum of a cast", e.name);
        if cfg!(target_arch = "x86_64") {
            let want = v
                .iter()
                .map(|&f| if f.is_nan() { i64::MIN } else { f as i64 })
                .fold(0i64, i64::wrapping_add);
            assert_eq!(s, want as f64, "{}", e.name);
        }
        // A constant converts the same way (full(nan, int64)).
        let f = Array::full(&[2], f64::NAN, DType::I64).unwrap();
        let v = f.to_vec::<i64>().unwrap();
        assert!(take_invalid_cast(), "{}: full", e.name);
        if cfg!(target_arch = "x86_64") {
            assert_eq!(v, vec![i64::MIN; 2], "{}", e.name);
        }
        // Valid conversions raise no flag.
        let ok = Array::from_vec(vec![1.5f32, -7.9], &[2]).unwrap();
        assert_eq!(
            ok.cast(DType::I64).unwrap().to_vec::<i64>().unwrap(),
            vec![1, -7],
            "{}",
            e.name
        );
        assert!(!take_invalid_cast(), "{}: valid casts", e.name);
    });
}
