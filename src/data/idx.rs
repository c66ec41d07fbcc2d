//! The IDX format of the MNIST files (LeCun et al.): a big-endian header followed by unsigned
//! bytes.
//!
//! | file | magic | header (big-endian `u32`) | payload |
//! |---|---|---|---|
//! | images | `0x00000803` (unsigned byte, 3 dimensions) | magic, count, rows, cols (16 bytes) | count × rows × cols bytes, row-major |
//! | labels | `0x00000801` (unsigned byte, 1 dimension) | magic, count (8 bytes) | count bytes |
//!
//! Parsing works on `&[u8]` and validates everything **before** allocating: the magic number,
//! the dimensions (their product must not overflow `u64`), and that the payload has exactly the
//! length the header declares — a truncated file, trailing bytes, a wrong magic number or a
//! header claiming 4·10⁹ images in a short file is an error, never a panic nor a huge
//! allocation. [`images`] and [`labels`] return zero-copy views; [`mnist_from_bytes`] builds
//! a [`Dataset`] with pixels scaled to [0, 1] by `byte / 255` (each feature the correctly
//! rounded quotient, so [`encode_dataset`] recovers the bytes exactly).
//!
//! With `std`, [`mnist_from_dir`] and [`mnist_from_files`] read files, checking the header
//! against the file size before reading the payload.

use super::Dataset;
use crate::error::{Error, Result};
use alloc::vec::Vec;

/// Magic number of an IDX file of unsigned bytes with 3 dimensions (MNIST images).
pub const IMAGES_MAGIC: u32 = 0x0000_0803;
/// Magic number of an IDX file of unsigned bytes with 1 dimension (MNIST labels).
pub const LABELS_MAGIC: u32 = 0x0000_0801;
/// Length in bytes of an images header (magic, count, rows, cols).
pub const IMAGES_HEADER_LEN: usize = 16;
/// Length in bytes of a labels header (magic, count).
pub const LABELS_HEADER_LEN: usize = 8;
/// Number of classes of MNIST (digits 0–9).
pub const MNIST_CLASSES: usize = 10;

/// The header of an IDX images file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImagesHeader {
    /// Number of images.
    pub count: u32,
    /// Rows per image.
    pub rows: u32,
    /// Columns per image.
    pub cols: u32,
}

impl ImagesHeader {
    /// Total file length the header declares, `16 + count·rows·cols`, or `None` if that
    /// overflows `u64`.
    pub fn file_len(&self) -> Option<u64> {
        u64::from(self.count)
            .checked_mul(u64::from(self.rows))?
            .checked_mul(u64::from(self.cols))?
            .checked_add(IMAGES_HEADER_LEN as u64)
    }
}

/// A validated, zero-copy view of an IDX images file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Images<'a> {
    /// The header.
    pub header: ImagesHeader,
    /// The pixels: exactly `count × rows × cols` bytes, image after image, row-major.
    pub pixels: &'a [u8],
}

fn be_u32(bytes: &[u8], at: usize) -> Option<u32> {
    let b = bytes.get(at..at.checked_add(4)?)?;
    Some(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
}

fn check_magic(name: &'static str, bytes: &[u8], magic: u32, expected: &'static str) -> Result<()> {
    match be_u32(bytes, 0) {
        Some(m) if m == magic => Ok(()),
        Some(m) => Err(Error::InvalidCount {
            name,
            value: u64::from(m),
            expected,
        }),
        None => Err(Error::InvalidCount {
            name,
            value: bytes.len() as u64,
            expected: "at least the 4-byte IDX magic number (file too short)",
        }),
    }
}

/// Parse only the 16-byte header of an IDX images file (the payload may be absent).
///
/// # Errors
/// `images` (the parameter) shorter than 16 bytes, or a magic number other than
/// `0x00000803`, or dimensions whose file length overflows `u64`.
pub fn images_header(images: &[u8]) -> Result<ImagesHeader> {
    check_magic(
        "images",
        images,
        IMAGES_MAGIC,
        "an IDX magic number of 0x00000803 (2051: unsigned bytes, 3 dimensions)",
    )?;
    let field = |at| {
        be_u32(images, at).ok_or(Error::InvalidCount {
            name: "images",
            value: images.len() as u64,
            expected: "at least 16 bytes (the IDX images header)",
        })
    };
    let header = ImagesHeader {
        count: field(4)?,
        rows: field(8)?,
        cols: field(12)?,
    };
    if header.file_len().is_none() {
        return Err(Error::InvalidCount {
            name: "images",
            value: u64::from(header.count),
            expected: "a header whose count × rows × cols fits in 64 bits",
        });
    }
    Ok(header)
}

/// Parse only the 8-byte header of an IDX labels file; returns the declared count.
///
/// # Errors
/// `labels` shorter than 8 bytes or a magic number other than `0x00000801`.
pub fn labels_header(labels: &[u8]) -> Result<u32> {
    check_magic(
        "labels",
        labels,
        LABELS_MAGIC,
        "an IDX magic number of 0x00000801 (2049: unsigned bytes, 1 dimension)",
    )?;
    be_u32(labels, 4).ok_or(Error::InvalidCount {
        name: "labels",
        value: labels.len() as u64,
        expected: "at least 8 bytes (the IDX labels header)",
    })
}

/// Validate a whole IDX images file and view its pixels without copying.
///
/// # Errors
/// Those of [`images_header`], and `images` whose length is not exactly
/// `16 + count·rows·cols` (truncated, or trailing bytes).
///
/// # Examples
/// ```
/// use reconbound::data::idx;
/// let file = idx::encode_images(1, 2, &[0, 255, 7, 9])?; // two 1×2 images
/// let view = idx::images(&file)?;
/// assert_eq!((view.header.count, view.pixels), (2, &[0, 255, 7, 9][..]));
/// assert!(idx::images(&file[..file.len() - 1]).is_err()); // truncated
/// # Ok::<(), reconbound::Error>(())
/// ```
pub fn images(images: &[u8]) -> Result<Images<'_>> {
    let header = images_header(images)?;
    // `images_header` checked that file_len does not overflow.
    let want = header.file_len().unwrap_or(u64::MAX);
    if images.len() as u64 != want {
        return Err(Error::InvalidCount {
            name: "images",
            value: images.len() as u64,
            expected: "exactly 16 + count × rows × cols bytes, as the header declares",
        });
    }
    let pixels = images.get(IMAGES_HEADER_LEN..).unwrap_or(&[]);
    Ok(Images { header, pixels })
}

/// Validate a whole IDX labels file and view its labels without copying.
///
/// # Errors
/// Those of [`labels_header`], and `labels` whose length is not exactly `8 + count`.
pub fn labels(labels: &[u8]) -> Result<&[u8]> {
    let count = labels_header(labels)?;
    if labels.len() as u64 != u64::from(count) + LABELS_HEADER_LEN as u64 {
        return Err(Error::InvalidCount {
            name: "labels",
            value: labels.len() as u64,
            expected: "exactly 8 + count bytes, as the header declares",
        });
    }
    Ok(labels.get(LABELS_HEADER_LEN..).unwrap_or(&[]))
}

/// A [`Dataset`] from an IDX images file and an IDX labels file, with `num_classes` classes:
/// shape `(1, rows, cols)`, features `byte / 255`.
///
/// # Errors
/// Those of [`images`] and [`labels`]; image and label counts that differ
/// ([`Error::Inconsistent`]); a label `>= num_classes` (`"labels"`); `num_classes` outside
/// 1..=256 (`"num_classes"`); zero images, rows or columns.
pub fn dataset_from_idx(
    images_file: &[u8],
    labels_file: &[u8],
    num_classes: usize,
) -> Result<Dataset> {
    if num_classes == 0 || num_classes > 256 {
        return Err(Error::InvalidCount {
            name: "num_classes",
            value: num_classes as u64,
            expected: "in 1..=256 (labels are single bytes)",
        });
    }
    let view = images(images_file)?;
    let labs = labels(labels_file)?;
    if labs.len() as u64 != u64::from(view.header.count) {
        return Err(Error::Inconsistent {
            what: "images and labels files declare different counts (value: label count)",
            value: labs.len() as f64,
        });
    }
    let shape = (1, view.header.rows as usize, view.header.cols as usize);
    // Everything is validated against the actual byte lengths: the allocations below are
    // 8× and 4× the input sizes.
    let features: Vec<f64> = view.pixels.iter().map(|&b| f64::from(b) / 255.0).collect();
    let labels: Vec<u32> = labs.iter().map(|&b| u32::from(b)).collect();
    Dataset::new(features, labels, shape, num_classes)
}

/// MNIST from the bytes of its images and labels files (10 classes).
///
/// # Errors
/// As [`dataset_from_idx`].
///
/// # Examples
/// ```
/// use reconbound::data::idx;
/// let images = idx::encode_images(2, 2, &[0, 51, 102, 255])?;
/// let labels = idx::encode_labels(&[7])?;
/// let ds = idx::mnist_from_bytes(&images, &labels)?;
/// assert_eq!(ds.example(0)?, (&[0.0, 0.2, 0.4, 1.0][..], 7));
/// assert_eq!(ds.shape(), (1, 2, 2));
/// # Ok::<(), reconbound::Error>(())
/// ```
pub fn mnist_from_bytes(images_file: &[u8], labels_file: &[u8]) -> Result<Dataset> {
    dataset_from_idx(images_file, labels_file, MNIST_CLASSES)
}

/// An IDX images file holding `pixels.len() / (rows·cols)` images of `rows × cols` bytes.
///
/// # Errors
/// `rows` or `cols` zero, `pixels.len()` not a multiple of `rows·cols`, or more than
/// `u32::MAX` images (named `"rows"`, `"cols"`, `"pixels"`).
pub fn encode_images(rows: u32, cols: u32, pixels: &[u8]) -> Result<Vec<u8>> {
    if rows == 0 {
        return Err(Error::InvalidCount {
            name: "rows",
            value: 0,
            expected: ">= 1",
        });
    }
    if cols == 0 {
        return Err(Error::InvalidCount {
            name: "cols",
            value: 0,
            expected: ">= 1",
        });
    }
    let per = u64::from(rows) * u64::from(cols);
    let len = pixels.len() as u64;
    let count = len / per;
    if len % per != 0 || count > u64::from(u32::MAX) {
        return Err(Error::InvalidCount {
            name: "pixels",
            value: len,
            expected: "a multiple of rows × cols, at most u32::MAX images",
        });
    }
    let mut out = Vec::with_capacity(IMAGES_HEADER_LEN + pixels.len());
    for v in [IMAGES_MAGIC, count as u32, rows, cols] {
        out.extend_from_slice(&v.to_be_bytes());
    }
    out.extend_from_slice(pixels);
    Ok(out)
}

/// An IDX labels file holding `labels`.
///
/// # Errors
/// More than `u32::MAX` labels (`"labels"`).
pub fn encode_labels(labels: &[u8]) -> Result<Vec<u8>> {
    let count = u32::try_from(labels.len()).map_err(|_| Error::InvalidCount {
        name: "labels",
        value: labels.len() as u64,
        expected: "at most u32::MAX labels",
    })?;
    let mut out = Vec::with_capacity(LABELS_HEADER_LEN + labels.len());
    out.extend_from_slice(&LABELS_MAGIC.to_be_bytes());
    out.extend_from_slice(&count.to_be_bytes());
    out.extend_from_slice(labels);
    Ok(out)
}

/// `(images file, labels file)` of a single-channel data set, each feature quantised to the
/// byte `round(255·x)`. Exact inverse of [`dataset_from_idx`] on its output; lossy for
/// features that are not multiples of 1/255.
///
/// # Errors
/// `dataset` with more than one channel, more than 256 classes, or a height, width or count
/// above `u32::MAX` (named `"dataset"`).
pub fn encode_dataset(dataset: &Dataset) -> Result<(Vec<u8>, Vec<u8>)> {
    let (c, h, w) = dataset.shape();
    let too_big = |v: usize| u32::try_from(v).is_err();
    if c != 1 || dataset.num_classes() > 256 || too_big(h) || too_big(w) || too_big(dataset.len()) {
        return Err(Error::InvalidCount {
            name: "dataset",
            value: c as u64,
            expected: "one channel, at most 256 classes, dimensions and count <= u32::MAX",
        });
    }
    // Features lie in [0, 1] and labels < 256 (Dataset invariants), so the casts are exact.
    let pixels: Vec<u8> = dataset
        .features()
        .iter()
        .map(|&x| libm::round(x * 255.0) as u8)
        .collect();
    let labels: Vec<u8> = dataset.labels().iter().map(|&l| l as u8).collect();
    Ok((
        encode_images(h as u32, w as u32, &pixels)?,
        encode_labels(&labels)?,
    ))
}

#[cfg(feature = "std")]
mod files {
    use super::*;
    use std::io::Read;
    use std::path::Path;

    /// File names tried by [`mnist_from_dir`], in order.
    pub const MNIST_FILE_NAMES: [(&str, &str); 5] = [
        ("images-idx3-ubyte", "labels-idx1-ubyte"),
        ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
        ("train-images.idx3-ubyte", "train-labels.idx1-ubyte"),
        ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"),
        ("t10k-images.idx3-ubyte", "t10k-labels.idx1-ubyte"),
    ];

    fn io_error(what: &'static str, e: &std::io::Error) -> Error {
        Error::Io {
            what,
            code: e.raw_os_error().unwrap_or(-1),
        }
    }

    /// Read an IDX file whose header (of `header_len` bytes) declares the total length
    /// `declared(header)`; the payload is read only if the file size matches.
    fn read_checked(
        path: &Path,
        header_len: usize,
        declared: impl Fn(&[u8]) -> Result<u64>,
        what: &'static str,
    ) -> Result<Vec<u8>> {
        let mut file = std::fs::File::open(path).map_err(|e| io_error(what, &e))?;
        let size = file.metadata().map_err(|e| io_error(what, &e))?.len();
        let mut head = Vec::with_capacity(header_len);
        (&mut file)
            .take(header_len as u64)
            .read_to_end(&mut head)
            .map_err(|e| io_error(what, &e))?;
        let want = declared(&head)?;
        if size != want {
            return Err(Error::InvalidCount {
                name: "file_bytes",
                value: size,
                expected: "a file of exactly the length its IDX header declares",
            });
        }
        if size > crate::data::MAX_FILE_BYTES {
            return Err(Error::InvalidCount {
                name: "file_bytes",
                value: size,
                expected: "a file of at most 2^30 bytes (1 GiB, data::MAX_FILE_BYTES)",
            });
        }
        let cap = usize::try_from(size).map_err(|_| Error::InvalidCount {
            name: "file_bytes",
            value: size,
            expected: "a file small enough to address in memory",
        })?;
        let mut bytes = Vec::with_capacity(cap);
        bytes.extend_from_slice(&head);
        file.take(size - head.len() as u64)
            .read_to_end(&mut bytes)
            .map_err(|e| io_error(what, &e))?;
        Ok(bytes)
    }

    /// MNIST from an images file and a labels file in IDX format.
    ///
    /// Each file's header is read and checked against the file size before the payload is
    /// read, so a corrupt header never triggers a large read.
    ///
    /// # Errors
    /// A file that cannot be opened or read ([`Error::Io`]); a file whose size differs from what its header declares,
    /// or larger than [`crate::data::MAX_FILE_BYTES`] (`"file_bytes"`, the size in bytes); and those of [`mnist_from_bytes`].
    pub fn mnist_from_files(
        images_path: impl AsRef<Path>,
        labels_path: impl AsRef<Path>,
    ) -> Result<Dataset> {
        let images = read_checked(
            images_path.as_ref(),
            IMAGES_HEADER_LEN,
            |h| {
                images_header(h)?.file_len().ok_or(Error::InvalidCount {
                    name: "images",
                    value: u64::MAX,
                    expected: "a header whose count × rows × cols fits in 64 bits",
                })
            },
            "cannot read the IDX images file (value: OS error code)",
        )?;
        let labels = read_checked(
            labels_path.as_ref(),
            LABELS_HEADER_LEN,
            |h| Ok(u64::from(labels_header(h)?) + LABELS_HEADER_LEN as u64),
            "cannot read the IDX labels file (value: OS error code)",
        )?;
        mnist_from_bytes(&images, &labels)
    }

    /// MNIST from a directory holding an images file and a labels file in IDX format.
    ///
    /// The first pair of [`MNIST_FILE_NAMES`] whose images file exists is used:
    /// `images-idx3-ubyte`/`labels-idx1-ubyte` (the layout of `../shared/data/mnist-10k`),
    /// then the standard training names `train-images-idx3-ubyte` (or `train-images.idx3-ubyte`)
    /// and finally the test names `t10k-…`. Decompress `.gz` downloads first.
    ///
    /// # Errors
    /// No known images file in `path` ([`Error::Inconsistent`]), and those of
    /// [`mnist_from_files`].
    pub fn mnist_from_dir(path: impl AsRef<Path>) -> Result<Dataset> {
        let dir = path.as_ref();
        for (images, labels) in MNIST_FILE_NAMES {
            let p = dir.join(images);
            if p.is_file() {
                return mnist_from_files(p, dir.join(labels));
            }
        }
        Err(Error::Inconsistent {
            what: "the directory holds none of images-idx3-ubyte, train-images-idx3-ubyte, t10k-images-idx3-ubyte",
            value: f64::NAN,
        })
    }
}

#[cfg(feature = "std")]
pub use files::{mnist_from_dir, mnist_from_files, MNIST_FILE_NAMES};

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    fn header(magic: u32, dims: &[u32]) -> Vec<u8> {
        let mut v = magic.to_be_bytes().to_vec();
        for d in dims {
            v.extend_from_slice(&d.to_be_bytes());
        }
        v
    }

    #[test]
    fn idx_rejects_wrong_magic_truncation_and_trailing_bytes() {
        let mut good = header(IMAGES_MAGIC, &[2, 2, 3]);
        good.extend_from_slice(&[1u8; 12]);
        assert_eq!(images(&good).unwrap().pixels.len(), 12);
        assert!(images(&good[..good.len() - 1]).is_err());
        for cut in 0..16 {
            assert!(images(&good[..cut]).is_err(), "cut {cut}");
        }
        let mut long = good.clone();
        long.push(0);
        assert!(images(&long).is_err());
        let mut wrong = good.clone();
        wrong[3] = 0x01;
        assert!(matches!(
            images(&wrong),
            Err(Error::InvalidCount {
                name: "images",
                value: 0x801,
                ..
            })
        ));
        // labels magic in an images file, and vice versa
        assert!(labels(&good).is_err());
        let lab = encode_labels(&[1, 2]).unwrap();
        assert!(images(&lab).is_err());
        assert_eq!(labels(&lab).unwrap(), &[1, 2]);
    }

    #[test]
    fn idx_header_claiming_4e9_images_errors_before_allocating() {
        // 4e9 × 28 × 28 × 8 bytes would be 25 TB: allocating it first would abort the test.
        let mut f = header(IMAGES_MAGIC, &[4_000_000_000, 28, 28]);
        f.extend_from_slice(&[0u8; 784]);
        assert!(images(&f).is_err());
        let l = header(LABELS_MAGIC, &[4_000_000_000]);
        assert!(dataset_from_idx(&f, &l, 10).is_err());
        // product overflowing u64
        let o = header(IMAGES_MAGIC, &[u32::MAX, u32::MAX, u32::MAX]);
        assert!(images_header(&o).is_err());
    }

    #[test]
    fn idx_count_mismatch_and_bad_labels_are_errors() {
        let im = encode_images(1, 1, &[0, 255]).unwrap();
        assert!(matches!(
            mnist_from_bytes(&im, &encode_labels(&[1]).unwrap()),
            Err(Error::Inconsistent { .. })
        ));
        assert!(matches!(
            mnist_from_bytes(&im, &encode_labels(&[1, 10]).unwrap()),
            Err(Error::InvalidCount {
                name: "labels",
                value: 10,
                ..
            })
        ));
        assert!(dataset_from_idx(&im, &encode_labels(&[1, 2]).unwrap(), 0).is_err());
        let ds = dataset_from_idx(&im, &encode_labels(&[1, 2]).unwrap(), 3).unwrap();
        assert_eq!(ds.features(), &[0.0, 1.0]);
        // zero images: valid IDX, but not a Dataset
        let empty = encode_images(2, 2, &[]).unwrap();
        assert_eq!(images(&empty).unwrap().header.count, 0);
        assert!(mnist_from_bytes(&empty, &encode_labels(&[]).unwrap()).is_err());
    }

    #[test]
    fn idx_round_trip_recovers_every_byte_value() {
        let pixels: Vec<u8> = (0..=255u8).collect();
        let labs: Vec<u8> = vec![3, 9, 0, 5];
        let im = encode_images(8, 8, &pixels).unwrap();
        let lb = encode_labels(&labs).unwrap();
        let ds = mnist_from_bytes(&im, &lb).unwrap();
        assert_eq!(ds.shape(), (1, 8, 8));
        assert_eq!(ds.len(), 4);
        let (im2, lb2) = encode_dataset(&ds).unwrap();
        assert_eq!((im2, lb2), (im, lb));
        assert!(encode_images(0, 1, &[]).is_err());
        assert!(encode_images(2, 2, &[1, 2, 3]).is_err());
    }
}
