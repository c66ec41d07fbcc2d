//! The CIFAR-10 binary format (Krizhevsky 2009, "binary version" of `cifar-10-batches-bin`).
//!
//! A file is a sequence of records of [`RECORD_LEN`] = 3073 bytes: one label byte (0–9)
//! followed by 3072 pixel bytes — the red, green and blue planes of a 32×32 image, each plane
//! row-major. The standard files `data_batch_1.bin` … `data_batch_5.bin` and `test_batch.bin`
//! hold 10,000 records each.
//!
//! [`parse`] validates the length (a non-zero multiple of 3073) and every label before it
//! allocates; features are `byte / 255` with shape `(3, 32, 32)` in the file's CHW order.

use super::Dataset;
use crate::error::{Error, Result};
use alloc::vec::Vec;

/// Bytes per record: 1 label + 3 × 32 × 32 pixels.
pub const RECORD_LEN: usize = 1 + PIXELS;
/// Pixel bytes per record.
pub const PIXELS: usize = 3 * 32 * 32;
/// Shape of one image, `(channels, height, width)`.
pub const SHAPE: (usize, usize, usize) = (3, 32, 32);
/// Number of classes of CIFAR-10.
pub const CLASSES: usize = 10;

/// A CIFAR-10 data set from the bytes of one binary batch file (or several concatenated).
///
/// # Errors
/// `bytes` empty or of a length that is not a multiple of 3073 (`"bytes"`, value the
/// length); a label byte `>= 10` (`"labels"`, value the label).
///
/// # Examples
/// ```
/// use reconbound::data::cifar;
/// let mut record = vec![0u8; cifar::RECORD_LEN];
/// record[0] = 3; // label
/// record[1] = 255; // red, row 0, column 0
/// let ds = cifar::parse(&record)?;
/// assert_eq!((ds.len(), ds.shape()), (1, (3, 32, 32)));
/// assert_eq!(ds.example(0)?.0[0], 1.0);
/// assert!(cifar::parse(&record[..3072]).is_err());
/// # Ok::<(), reconbound::Error>(())
/// ```
pub fn parse(bytes: &[u8]) -> Result<Dataset> {
    if bytes.is_empty() || bytes.len() % RECORD_LEN != 0 {
        return Err(Error::InvalidCount {
            name: "bytes",
            value: bytes.len() as u64,
            expected: "a non-zero multiple of 3073 (1 label byte + 3072 pixel bytes per record)",
        });
    }
    if let Some(bad) = bytes
        .chunks_exact(RECORD_LEN)
        .map(|r| r.first().copied().unwrap_or(0))
        .find(|&l| usize::from(l) >= CLASSES)
    {
        return Err(Error::InvalidCount {
            name: "labels",
            value: u64::from(bad),
            expected: "< 10 (CIFAR-10 label byte)",
        });
    }
    let n = bytes.len() / RECORD_LEN;
    let mut features = Vec::with_capacity(n * PIXELS);
    let mut labels = Vec::with_capacity(n);
    for record in bytes.chunks_exact(RECORD_LEN) {
        if let Some((&label, pixels)) = record.split_first() {
            labels.push(u32::from(label));
            features.extend(pixels.iter().map(|&b| f64::from(b) / 255.0));
        }
    }
    Dataset::new(features, labels, SHAPE, CLASSES)
}

/// CIFAR-10 from one or more binary batch files, concatenated in the order given (e.g. the
/// five `data_batch_*.bin`, or `test_batch.bin`). Each file's size is checked before it is
/// read.
///
/// # Errors
/// `paths` empty (`"paths"`); a file that cannot be read ([`Error::Io`]); a file whose size is not a non-zero multiple of 3073,
/// files of more than [`crate::data::MAX_FILE_BYTES`] in all, or a file that changes size
/// while read (`"file_bytes"`, the size in bytes); and those of [`parse`].
#[cfg(feature = "std")]
pub fn cifar10_from_files<P: AsRef<std::path::Path>>(paths: &[P]) -> Result<Dataset> {
    let io = |e: std::io::Error| Error::Io {
        what: "cannot read a CIFAR-10 batch file",
        code: e.raw_os_error().unwrap_or(-1),
    };
    if paths.is_empty() {
        return Err(Error::InvalidCount {
            name: "paths",
            value: 0,
            expected: "at least one file",
        });
    }
    let mut all = Vec::new();
    let too_big = |value: u64| Error::InvalidCount {
        name: "file_bytes",
        value,
        expected: "files of at most 2^30 bytes (1 GiB, data::MAX_FILE_BYTES) in all",
    };
    for p in paths {
        let size = std::fs::metadata(p.as_ref()).map_err(io)?.len();
        if size == 0 || size % RECORD_LEN as u64 != 0 {
            return Err(Error::InvalidCount {
                name: "file_bytes",
                value: size,
                expected: "a file whose size is a non-zero multiple of 3073 bytes",
            });
        }
        let total = (all.len() as u64).saturating_add(size);
        if total > crate::data::MAX_FILE_BYTES {
            return Err(too_big(total));
        }
        // Read no more than the size checked above, even if the file grows meanwhile.
        let bytes = super::read_bounded(p.as_ref(), size, "cannot read a CIFAR-10 batch file")?;
        if bytes.len() as u64 != size {
            return Err(Error::InvalidCount {
                name: "file_bytes",
                value: bytes.len() as u64,
                expected: "a file that keeps its size while it is read",
            });
        }
        all.extend_from_slice(&bytes);
    }
    parse(&all)
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    #[test]
    fn cifar_layout_is_label_then_rgb_planes() {
        let mut bytes = vec![0u8; 2 * RECORD_LEN];
        bytes[0] = 9;
        bytes[1 + 1024 + 32 + 1] = 51; // green, row 1, col 1
        bytes[RECORD_LEN] = 0;
        bytes[RECORD_LEN + 1 + 2048 + 1023] = 255; // blue, last pixel
        let ds = parse(&bytes).unwrap();
        assert_eq!(ds.labels(), &[9, 0]);
        let (x0, _) = ds.example(0).unwrap();
        assert_eq!(x0[1024 + 33], 0.2);
        assert_eq!(x0.iter().filter(|&&v| v != 0.0).count(), 1);
        assert_eq!(ds.example(1).unwrap().0[3071], 1.0);
    }

    #[test]
    fn cifar_rejects_bad_lengths_and_labels() {
        for len in [0, 1, RECORD_LEN - 1, RECORD_LEN + 1, 2 * RECORD_LEN - 1] {
            assert!(
                matches!(
                    parse(&vec![0u8; len]),
                    Err(Error::InvalidCount { name: "bytes", .. })
                ),
                "len {len}"
            );
        }
        let mut bytes = vec![0u8; 2 * RECORD_LEN];
        bytes[RECORD_LEN] = 10;
        assert!(matches!(
            parse(&bytes),
            Err(Error::InvalidCount {
                name: "labels",
                value: 10,
                ..
            })
        ));
    }
}
