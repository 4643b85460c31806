//! Expression strings: equivalence with the op API, and no panic on any
//! input (property test over random strings and token soups).

use crossover::{evaluate, Array, DType, Error};
use proptest::prelude::*;

#[test]
fn string_and_api_agree() {
    let mut g = crossover::Generator::new(8);
    let a = g.uniform(&[4099], DType::F32).unwrap();
    let b = g.uniform(&[4099], DType::F32).unwrap();
    let s = evaluate("a*b + sin(a) + cos(b)", &[("a", &a), ("b", &b)]).unwrap();
    let api = a
        .mul(&b)
        .unwrap()
        .add(a.sin().unwrap())
        .unwrap()
        .add(b.cos().unwrap())
        .unwrap();
    assert_eq!(s.to_vec::<f32>().unwrap(), api.to_vec::<f32>().unwrap());
    let w = evaluate(
        "sum(where(a > 0.5 and b < 0.5, a**2, -b))",
        &[("a", &a), ("b", &b)],
    )
    .unwrap();
    let (av, bv) = (a.to_vec::<f32>().unwrap(), b.to_vec::<f32>().unwrap());
    let want: f64 = av
        .iter()
        .zip(&bv)
        .map(|(&x, &y)| {
            if x > 0.5 && y < 0.5 {
                (x * x) as f64
            } else {
                -(y as f64)
            }
        })
        .sum();
    assert!(
        (w.item().unwrap() - want).abs() < 1e-3,
        "{} {want}",
        w.item().unwrap()
    );
    let c = evaluate("a - mean(a) > std(a)", &[("a", &a)]).unwrap();
    assert_eq!(c.dtype(), DType::Bool);
}

fn tokens() -> impl Strategy<Value = String> {
    let tok = prop::sample::select(vec![
        "a", "b", "1", "2.5", "1e3", "(", ")", "+", "-", "*", "/", "**", "<", "<=", "==", "!=",
        "and", "or", "not", "sin(", "where(", "sum(", "axis=", ",", "mean(", "pi", "x", "~", "&",
        "|", " ", "max(", "0",
    ]);
    prop::collection::vec(tok, 0..25).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, .. ProptestConfig::default() })]

    #[test]
    fn random_strings_never_panic(s in "\\PC{0,40}") {
        let a = Array::from_vec(vec![1.0f32, 2.0, 3.0], &[3]).unwrap();
        let _ = evaluate(&s, &[("a", &a)]).and_then(|r| r.eval());
    }

    #[test]
    fn token_soups_never_panic_and_errors_are_typed(s in tokens()) {
        let a = Array::from_vec(vec![1.0f32, 2.0, 3.0], &[3]).unwrap();
        let b = Array::from_vec(vec![0.5f64, -1.0, 4.0], &[3]).unwrap();
        match evaluate(&s, &[("a", &a), ("b", &b)]).and_then(|r| r.eval().map(|_| r)) {
            Ok(_) => {}
            Err(Error::Internal { .. }) => prop_assert!(false, "internal error for {s:?}"),
            Err(Error::Parse { pos, .. }) | Err(Error::UnknownName { pos, .. }) => prop_assert!(pos <= s.chars().count()),
            Err(_) => {}
        }
    }
}
