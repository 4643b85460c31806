//! Array methods for library operations (matrix products and friends).

use super::Array;
use crate::error::Result;

impl Array {
    /// The matrix product `self @ other`, with NumPy's rules: 2-D operands
    /// multiply as matrices; a 1-D left operand is a row vector and a 1-D
    /// right operand a column vector (the added axis is removed from the
    /// result); leading axes are batches that broadcast against each other.
    ///
    /// Any layout is read in place (a transposed view is not copied).
    /// float32/float64/complex64/complex128 compute in their dtype; integer
    /// and bool operands compute in float64.
    ///
    /// # Errors
    /// [`Error::Shape`](crate::Error::Shape) for a 0-d operand or when the
    /// inner dimensions differ; [`Error::Broadcast`](crate::Error::Broadcast)
    /// when batch axes do not broadcast.
    ///
    /// ```
    /// use crossover::Array;
    /// let a = Array::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2])?;
    /// let b = Array::from_vec(vec![1.0f32, 1.0], &[2])?;
    /// assert_eq!(a.matmul(&b)?.to_vec::<f32>()?, vec![3.0, 7.0]);
    /// assert_eq!(a.transpose()?.matmul(&b)?.to_vec::<f32>()?, vec![4.0, 6.0]);
    /// # Ok::<(), crossover::Error>(())
    /// ```
    pub fn matmul(&self, other: &Array) -> Result<Array> {
        crate::linalg::matmul(self, other)
    }
}
