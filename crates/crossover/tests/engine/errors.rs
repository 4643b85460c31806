//! Bad input gets a typed error naming the op; nothing panics.

use crossover::{Array, DType, Error, ErrorKind};

fn a(shape: &[usize]) -> Array {
    Array::zeros(shape, DType::F32).unwrap().add(1.0).unwrap()
}

#[test]
fn shape_errors_name_the_op_and_shapes() {
    match a(&[3, 4]).add(a(&[5])) {
        Err(Error::Broadcast { op, lhs, rhs }) => {
            assert_eq!(op, "add");
            assert_eq!((lhs, rhs), (vec![3, 4], vec![5]));
        }
        other => panic!("{other:?}"),
    }
    let e = Array::where_(&a(&[2]).gt(0.0).unwrap(), a(&[3]), 0.0).unwrap_err();
    assert!(e.to_string().starts_with("where:"), "{e}");
    assert_eq!(e.kind(), ErrorKind::Value);
}

#[test]
fn axis_and_argument_errors() {
    assert!(matches!(
        a(&[3]).sum(Some(&[1]), false),
        Err(Error::Axis {
            op: "sum",
            axis: 1,
            ndim: 1
        })
    ));
    assert!(matches!(
        a(&[3, 3]).sum(Some(&[0, -2]), false),
        Err(Error::InvalidArgument { op: "sum", .. })
    ));
    assert!(matches!(
        a(&[0]).max(None, false),
        Err(Error::Shape { op: "max", .. })
    ));
    assert!(matches!(
        a(&[2, 2]).argmax(Some(2)),
        Err(Error::Axis { .. })
    ));
    assert!(matches!(
        Array::arange(0.0, 1.0, 0.0, DType::F64),
        Err(Error::InvalidArgument { op: "arange", .. })
    ));
    assert!(matches!(
        Array::arange(0.0, f64::NAN, 1.0, DType::F64),
        Err(Error::InvalidArgument { .. })
    ));
}

#[test]
fn dtype_and_data_errors() {
    assert!(matches!(
        Array::from_vec(vec![1.0f32; 5], &[2, 3]),
        Err(Error::DataLength {
            len: 5,
            expected: 6,
            ..
        })
    ));
    let x = a(&[2]);
    let e = x.to_vec::<f64>().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Type);
    assert!(e.to_string().contains("to_vec"));
    assert!(matches!(
        Array::linspace(0.0, 1.0, 3, true, DType::I32),
        Err(Error::DType { .. })
    ));
}

#[test]
fn error_messages_read_well() {
    let e = a(&[3]).reshape(&[2, 2]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "reshape: cannot reshape array of size 3 into shape [2, 2] (shape [3])"
    );
    let e = crossover::evaluate("a + ", &[]).unwrap_err();
    assert!(e.to_string().contains("position 4"), "{e}");
    assert_eq!(e.kind(), ErrorKind::Parse);
}
