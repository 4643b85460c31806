//! Process-wide flags (issue 19): stopping a long computation, and the
//! invalid-cast flag behind NumPy's warning. Their own test binary: other
//! tests running at the same time would see (and set) the flags.

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
    let _ = crossover::cpu::num::take_invalid_cast();
    let x = Array::from_vec(
        vec![f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 1e30, 3e9, -2.7],
        &[6],
    )
    .unwrap();
    let i32s = x.cast(DType::I32).unwrap().to_vec::<i32>().unwrap();
    let i64s = x.cast(DType::I64).unwrap().to_vec::<i64>().unwrap();
    assert!(crossover::cpu::num::take_invalid_cast());
    if cfg!(target_arch = "x86_64") {
        // What NumPy gives on x86 (the C cast's "integer indefinite").
        let m = i32::MIN;
        assert_eq!(i32s, vec![m, m, m, m, m, -2]);
        let m = i64::MIN;
        assert_eq!(i64s, vec![m, m, m, m, 3_000_000_000, -2]);
    }
    // A constant converts the same way (full(nan, int64)).
    let f = Array::full(&[2], f64::NAN, DType::I64).unwrap();
    let v = f.to_vec::<i64>().unwrap();
    assert!(crossover::cpu::num::take_invalid_cast());
    if cfg!(target_arch = "x86_64") {
        assert_eq!(v, vec![i64::MIN; 2]);
    }
    // Valid conversions raise no flag.
    let ok = Array::from_vec(vec![1.5f32, -7.9], &[2]).unwrap();
    assert_eq!(
        ok.cast(DType::I64).unwrap().to_vec::<i64>().unwrap(),
        vec![1, -7]
    );
    assert!(!crossover::cpu::num::take_invalid_cast());
}
