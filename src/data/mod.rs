//! Data: the validated [`Dataset`], readers for MNIST ([`idx`]) and CIFAR-10 ([`cifar`])
//! binaries, the embedded MNIST subset ([`embedded_mnist`]), seeded [`synthetic`] sets, and
//! deterministic transformations ([`split`], [`stratified_split`], [`Dataset::subset`],
//! [`Dataset::filter_labels`], [`Dataset::flatten`], [`Dataset::project_to_unit_ball`]).
//!
//! Every feature is a finite `f64` in [0, 1] (readers scale bytes by 1/255); labels are `u32`
//! below `num_classes`. Readers parse `&[u8]` (no `std` needed) and validate every header
//! against the actual length **before** allocating: corrupt, truncated, wrong-magic and
//! oversize-header inputs give an [`Error`](crate::Error), never a panic nor a huge
//! allocation (fuzzed by `fuzz/fuzz_targets/idx_reader.rs` and `cifar_reader.rs`). With `std`,
//! [`idx::mnist_from_dir`] and [`cifar::cifar10_from_files`] read files.
//!
//! Requires the `alloc` feature.
//!
//! # Examples
//! ```
//! use reconbound::data::{embedded_mnist, split};
//! // MNIST 0-vs-1, projected into the unit ball, split 80/20 with seed 1.
//! let data = embedded_mnist()?.filter_labels(&[0, 1])?.flatten().project_to_unit_ball();
//! let (train, test) = split(&data, 0.2, 1)?;
//! assert_eq!((train.len(), test.len(), train.dim()), (346, 87, 784));
//! assert!(train.max_l2_norm() <= 1.0);
//! # Ok::<(), reconbound::Error>(())
//! ```

pub mod cifar;
mod dataset;
mod support;
pub(crate) use support::{quads_of, BlockSupport, ExampleSupport, Quad, Support, BLOCK};

/// The largest file [`idx`] and [`cifar`] read from disk: 1 GiB (2³⁰ bytes), some twenty
/// times MNIST's training images (47 MB) and thirty times a CIFAR-10 batch (30.7 MB). The
/// cap is checked against the size a file declares and again while it is read, so a file
/// that grows, or a device, is never read without bound.
pub const MAX_FILE_BYTES: u64 = 1 << 30;

/// The bytes of the file `path`, read to its end but never more than `cap` bytes (usually
/// [`MAX_FILE_BYTES`]): the cap is checked while reading, not from the file's metadata (a
/// device such as `/dev/zero` or a pipe reports size 0), so a file over it costs at most
/// `cap + 1` bytes of memory. The bounded read of every file reader of the library (the
/// command line's, which names the flag, is `cli::input::read_bounded`).
///
/// # Errors
/// [`Error`](crate::Error)`::Io` (with `what`, the file's role) if it cannot be opened or
/// read; `InvalidCount` (`"file_bytes"`, value `cap + 1`) if it holds more than `cap` bytes.
#[cfg(feature = "std")]
pub(crate) fn read_bounded(
    path: &std::path::Path,
    cap: u64,
    what: &'static str,
) -> crate::Result<alloc::vec::Vec<u8>> {
    use std::io::Read as _;
    let io = |e: std::io::Error| crate::Error::Io {
        what,
        code: e.raw_os_error().unwrap_or(-1),
    };
    let mut bytes = alloc::vec::Vec::new();
    std::fs::File::open(path)
        .map_err(io)?
        .take(cap.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > cap {
        return Err(crate::Error::InvalidCount {
            name: "file_bytes",
            value: cap.saturating_add(1),
            expected: "a file within its reader's size cap (data::MAX_FILE_BYTES = 1 GiB unless the reader needs less)",
        });
    }
    Ok(bytes)
}
mod embedded;
pub mod idx;
pub mod synthetic;
mod transform;

pub use dataset::{Dataset, MAX_CLASSES};
pub use embedded::{
    embedded_mnist, EMBEDDED_MNIST_IMAGES, EMBEDDED_MNIST_LABELS, EMBEDDED_MNIST_LEN,
};
#[cfg(feature = "std")]
pub use transform::complement;
pub use transform::{split, split_by_size, stratified_split};
