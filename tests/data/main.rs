//! Integration tests: the data layer (IDX and CIFAR-10 readers, the embedded MNIST subset,
//! splits, projection), on the embedded subset and the vendored `data/mnist-10k`. Needs the
//! `std` feature (file readers).
#![cfg(feature = "std")]

use proptest::prelude::*;
use reconbound::data::{
    cifar, embedded_mnist, idx, split, split_by_size, stratified_split, synthetic, Dataset,
    EMBEDDED_MNIST_IMAGES, EMBEDDED_MNIST_LABELS,
};
use reconbound::Error;
use std::path::PathBuf;

/// Class counts of the embedded subset (data/mnist-2000/README.md).
const EMBEDDED_CLASS_COUNTS: [usize; 10] = [214, 219, 189, 215, 180, 192, 197, 212, 181, 201];
/// Class counts of mnist-10k (../shared/data/README.md).
const SHARED_CLASS_COUNTS: [usize; 10] = [1001, 1127, 991, 1032, 980, 863, 1014, 1070, 944, 978];

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The vendored 10,000 digits, `data/mnist-10k` (the same bytes as
/// `../shared/data/mnist-10k`; issue 43: the tests read the copy in the repository, never
/// skipping for want of `../shared`).
fn mnist_10k_dir() -> PathBuf {
    repo().join("data").join("mnist-10k")
}

/// A fresh, empty scratch directory for one test (removed by the test at the end).
fn scratch(name: &str) -> PathBuf {
    let p = std::env::temp_dir().join(format!("reconbound-data-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&p);
    std::fs::create_dir_all(&p).unwrap();
    p
}

// ---------------------------------------------------------------------------------------
// SHA-256 (FIPS 180-4), test-only, to check the provenance hashes in the READMEs.

fn sha256_hex(data: &[u8]) -> String {
    const K: [u32; 64] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
        0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
        0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
        0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
        0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
        0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
        0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
        0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
        0xc67178f2,
    ];
    let mut h: [u32; 8] = [
        0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab,
        0x5be0cd19,
    ];
    let mut msg = data.to_vec();
    msg.push(0x80);
    while msg.len() % 64 != 56 {
        msg.push(0);
    }
    msg.extend_from_slice(&((data.len() as u64) * 8).to_be_bytes());
    for block in msg.chunks_exact(64) {
        let mut w = [0u32; 64];
        for i in 0..16 {
            w[i] = u32::from_be_bytes(block[4 * i..4 * i + 4].try_into().unwrap());
        }
        for i in 16..64 {
            let s0 = w[i - 15].rotate_right(7) ^ w[i - 15].rotate_right(18) ^ (w[i - 15] >> 3);
            let s1 = w[i - 2].rotate_right(17) ^ w[i - 2].rotate_right(19) ^ (w[i - 2] >> 10);
            w[i] = w[i - 16]
                .wrapping_add(s0)
                .wrapping_add(w[i - 7])
                .wrapping_add(s1);
        }
        let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut hh] = h;
        for i in 0..64 {
            let s1 = e.rotate_right(6) ^ e.rotate_right(11) ^ e.rotate_right(25);
            let ch = (e & f) ^ (!e & g);
            let t1 = hh
                .wrapping_add(s1)
                .wrapping_add(ch)
                .wrapping_add(K[i])
                .wrapping_add(w[i]);
            let s0 = a.rotate_right(2) ^ a.rotate_right(13) ^ a.rotate_right(22);
            let maj = (a & b) ^ (a & c) ^ (b & c);
            let t2 = s0.wrapping_add(maj);
            hh = g;
            g = f;
            f = e;
            e = d.wrapping_add(t1);
            d = c;
            c = b;
            b = a;
            a = t1.wrapping_add(t2);
        }
        for (x, y) in h.iter_mut().zip([a, b, c, d, e, f, g, hh]) {
            *x = x.wrapping_add(y);
        }
    }
    h.iter().map(|v| format!("{v:08x}")).collect()
}

#[test]
fn sha256_matches_fips_180_2_examples() {
    // FIPS 180-2 Appendix B.1 and B.2, and the empty string.
    assert_eq!(
        sha256_hex(b"abc"),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
    assert_eq!(
        sha256_hex(b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
    );
    assert_eq!(
        sha256_hex(b""),
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    );
}

// ---------------------------------------------------------------------------------------
// The embedded subset and its provenance.

#[test]
fn embedded_mnist_class_counts_match_readme() {
    let ds = embedded_mnist().unwrap();
    let counts = ds.class_counts();
    eprintln!("embedded MNIST class counts (digits 0-9): {counts:?}");
    assert_eq!(counts, EMBEDDED_CLASS_COUNTS);
    assert_eq!(
        (ds.len(), ds.shape(), ds.num_classes()),
        (2000, (1, 28, 28), 10)
    );
    // Real digits: mean grey level of MNIST is about 0.13; every image has ink.
    let mean = ds.features().iter().sum::<f64>() / ds.features().len() as f64;
    assert!((0.10..0.16).contains(&mean), "mean pixel {mean}");
    assert!(ds.iter().all(|(x, _)| x.iter().any(|&v| v > 0.5)));
}

#[test]
fn embedded_files_have_the_sha256_of_their_readme() {
    let readme = std::fs::read_to_string(repo().join("data/mnist-2000/README.md")).unwrap();
    for (name, bytes) in [
        ("images", EMBEDDED_MNIST_IMAGES),
        ("labels", EMBEDDED_MNIST_LABELS),
    ] {
        let h = sha256_hex(bytes);
        assert!(
            readme.contains(&h),
            "{name}: sha256 {h} not in data/mnist-2000/README.md"
        );
    }
    // The attribution travels with the copy.
    assert!(readme.contains("LeCun") && readme.contains("CC BY-SA 3.0"));
}

#[test]
fn embedded_subset_equals_first_2000_records_of_mnist_10k() {
    let dir = mnist_10k_dir();
    let images = std::fs::read(dir.join("images-idx3-ubyte")).unwrap();
    let labels = std::fs::read(dir.join("labels-idx1-ubyte")).unwrap();
    // The vendored files are the documented ones (their README, and the shared README when
    // ../shared is beside the clone: the copy is unchanged).
    let mut readmes = vec![std::fs::read_to_string(dir.join("README.md")).unwrap()];
    if let Ok(shared) = std::fs::read_to_string(repo().join("../shared/data/README.md")) {
        readmes.push(shared);
    }
    for readme in &readmes {
        for (name, bytes) in [("images", &images), ("labels", &labels)] {
            let h = sha256_hex(bytes);
            assert!(readme.contains(&h), "{name}: sha256 {h} not in a README");
        }
    }
    // Payloads: byte for byte.
    assert_eq!(
        &EMBEDDED_MNIST_IMAGES[16..],
        &images[16..16 + 2000 * 784],
        "embedded images differ from the first 2000 shared records"
    );
    assert_eq!(&EMBEDDED_MNIST_LABELS[8..], &labels[8..8 + 2000]);
    // Headers: same magic and dimensions, count 2000.
    assert_eq!(&EMBEDDED_MNIST_IMAGES[..4], &images[..4]);
    assert_eq!(&EMBEDDED_MNIST_IMAGES[8..16], &images[8..16]);
    assert_eq!(&EMBEDDED_MNIST_IMAGES[4..8], &2000u32.to_be_bytes());
    assert_eq!(&EMBEDDED_MNIST_LABELS[4..8], &2000u32.to_be_bytes());
    // And as data sets.
    let shared = idx::mnist_from_dir(&dir).unwrap();
    assert_eq!(shared.len(), 10_000);
    assert_eq!(shared.class_counts(), SHARED_CLASS_COUNTS);
    let first: Vec<usize> = (0..2000).collect();
    assert_eq!(shared.subset(&first).unwrap(), embedded_mnist().unwrap());
}

// ---------------------------------------------------------------------------------------
// IDX reader: corrupt, truncated, wrong-magic, oversize.

fn small_idx() -> (Vec<u8>, Vec<u8>) {
    let pixels: Vec<u8> = (0..3 * 4 * 5).map(|i| (i * 37 % 256) as u8).collect();
    (
        idx::encode_images(4, 5, &pixels).unwrap(),
        idx::encode_labels(&[7, 0, 9]).unwrap(),
    )
}

#[test]
fn idx_truncated_files_are_errors_at_every_length() {
    let (im, lb) = small_idx();
    assert!(idx::mnist_from_bytes(&im, &lb).is_ok());
    for cut in 0..im.len() {
        assert!(
            idx::mnist_from_bytes(&im[..cut], &lb).is_err(),
            "images cut at {cut}"
        );
    }
    for cut in 0..lb.len() {
        assert!(
            idx::mnist_from_bytes(&im, &lb[..cut]).is_err(),
            "labels cut at {cut}"
        );
    }
}

#[test]
fn idx_wrong_magic_is_an_error_naming_the_file() {
    let (im, lb) = small_idx();
    for (pos, val) in [
        (0, 1),
        (1, 1),
        (2, 0x09),
        (2, 0x0D),
        (3, 0x01),
        (3, 0x03),
        (3, 0x04),
    ] {
        let mut bad = im.clone();
        bad[pos] = val;
        assert!(
            bad == im
                || matches!(
                    idx::mnist_from_bytes(&bad, &lb),
                    Err(Error::InvalidCount { name: "images", .. })
                ),
            "images byte {pos} = {val}"
        );
        let mut bad = lb.clone();
        bad[pos] = val;
        assert!(
            bad == lb
                || matches!(
                    idx::mnist_from_bytes(&im, &bad),
                    Err(Error::InvalidCount { name: "labels", .. })
                ),
            "labels byte {pos} = {val}"
        );
    }
    // swapped files
    assert!(idx::mnist_from_bytes(&lb, &im).is_err());
}

#[test]
fn idx_oversize_headers_error_without_allocating() {
    // Each of these, if allocated before validation, needs ≥ 25 TB (and would abort).
    let (_, lb) = small_idx();
    for dims in [
        [4_000_000_000u32, 28, 28],
        [u32::MAX, u32::MAX, u32::MAX], // product overflows u64
        [3, u32::MAX, u32::MAX],
        [u32::MAX, 1, 784],
    ] {
        let mut f: Vec<u8> = idx::IMAGES_MAGIC.to_be_bytes().to_vec();
        for d in dims {
            f.extend_from_slice(&d.to_be_bytes());
        }
        f.extend_from_slice(&[0u8; 3 * 784]);
        assert!(idx::mnist_from_bytes(&f, &lb).is_err(), "{dims:?}");
    }
    let mut l: Vec<u8> = idx::LABELS_MAGIC.to_be_bytes().to_vec();
    l.extend_from_slice(&4_000_000_000u32.to_be_bytes());
    l.extend_from_slice(&[1, 2, 3]);
    assert!(idx::labels(&l).is_err());
}

#[test]
fn idx_inconsistent_counts_and_labels_are_errors() {
    let (im, _) = small_idx();
    let two = idx::encode_labels(&[1, 2]).unwrap();
    assert!(matches!(
        idx::mnist_from_bytes(&im, &two),
        Err(Error::Inconsistent { .. })
    ));
    let big = idx::encode_labels(&[1, 2, 10]).unwrap();
    assert!(matches!(
        idx::mnist_from_bytes(&im, &big),
        Err(Error::InvalidCount {
            name: "labels",
            value: 10,
            ..
        })
    ));
    // trailing garbage after a valid payload
    let mut long = im.clone();
    long.extend_from_slice(&[0; 20]);
    assert!(idx::mnist_from_bytes(&long, &idx::encode_labels(&[1, 2, 3]).unwrap()).is_err());
}

#[test]
fn idx_round_trip_through_files_and_standard_names() {
    let (im, lb) = small_idx();
    let from_bytes = idx::mnist_from_bytes(&im, &lb).unwrap();
    assert_eq!(from_bytes.shape(), (1, 4, 5));
    assert_eq!(from_bytes.labels(), &[7, 0, 9]);
    // features are byte/255 exactly (correctly rounded quotient)
    for (v, b) in from_bytes.features().iter().zip(&im[16..]) {
        assert_eq!(*v, f64::from(*b) / 255.0);
    }
    assert_eq!(
        idx::encode_dataset(&from_bytes).unwrap(),
        (im.clone(), lb.clone())
    );

    for (images_name, labels_name) in idx::MNIST_FILE_NAMES {
        let dir = scratch(images_name);
        std::fs::write(dir.join(images_name), &im).unwrap();
        std::fs::write(dir.join(labels_name), &lb).unwrap();
        assert_eq!(
            idx::mnist_from_dir(&dir).unwrap(),
            from_bytes,
            "{images_name}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[test]
fn idx_files_with_bad_sizes_or_missing_are_errors() {
    let (im, lb) = small_idx();
    let dir = scratch("bad");
    assert!(idx::mnist_from_dir(&dir).is_err()); // nothing there
    std::fs::write(dir.join("images-idx3-ubyte"), &im).unwrap();
    assert!(idx::mnist_from_dir(&dir).is_err()); // labels missing
    std::fs::write(dir.join("labels-idx1-ubyte"), &lb[..lb.len() - 1]).unwrap();
    assert!(idx::mnist_from_dir(&dir).is_err()); // labels truncated
    std::fs::write(dir.join("labels-idx1-ubyte"), &lb).unwrap();
    assert!(idx::mnist_from_dir(&dir).is_ok());
    // A 16-byte file claiming 4e9 images: rejected from the header and the file size.
    let mut huge: Vec<u8> = idx::IMAGES_MAGIC.to_be_bytes().to_vec();
    for d in [4_000_000_000u32, 28, 28] {
        huge.extend_from_slice(&d.to_be_bytes());
    }
    std::fs::write(dir.join("images-idx3-ubyte"), &huge).unwrap();
    assert!(matches!(
        idx::mnist_from_dir(&dir),
        Err(Error::InvalidCount {
            name: "file_bytes",
            value: 16,
            ..
        })
    ));
    // issue 43: the message says what the number is ("path = 16" read as a path)
    let e = idx::mnist_from_dir(&dir).unwrap_err().to_string();
    assert!(e.starts_with("file_bytes = 16 is out of range"), "{e}");
    std::fs::write(dir.join("images-idx3-ubyte"), &huge[..10]).unwrap();
    assert!(idx::mnist_from_dir(&dir).is_err());
    std::fs::remove_dir_all(&dir).unwrap();
}

// ---------------------------------------------------------------------------------------
// CIFAR-10 reader.

#[test]
fn cifar_files_concatenate_and_bad_sizes_are_errors() {
    let dir = scratch("cifar");
    let mut a = vec![0u8; 2 * cifar::RECORD_LEN];
    a[0] = 1;
    a[cifar::RECORD_LEN] = 2;
    a[cifar::RECORD_LEN + 1] = 255;
    let mut b = vec![17u8; cifar::RECORD_LEN];
    b[0] = 9;
    std::fs::write(dir.join("a.bin"), &a).unwrap();
    std::fs::write(dir.join("b.bin"), &b).unwrap();
    let ds = cifar::cifar10_from_files(&[dir.join("a.bin"), dir.join("b.bin")]).unwrap();
    assert_eq!(ds.labels(), &[1, 2, 9]);
    assert_eq!(ds.example(1).unwrap().0[0], 1.0);
    assert_eq!(ds.example(2).unwrap().0[5], 17.0 / 255.0);
    std::fs::write(dir.join("c.bin"), &b[..100]).unwrap();
    assert!(cifar::cifar10_from_files(&[dir.join("a.bin"), dir.join("c.bin")]).is_err());
    assert!(cifar::cifar10_from_files(&[dir.join("missing.bin")]).is_err());
    assert!(cifar::cifar10_from_files::<PathBuf>(&[]).is_err());
    std::fs::remove_dir_all(&dir).unwrap();
}

// ---------------------------------------------------------------------------------------
// Splits and projection on the embedded subset.

#[test]
fn split_of_embedded_mnist_is_deterministic_and_a_partition() {
    let ds = embedded_mnist().unwrap();
    let (tr, te) = split(&ds, 0.2, 2026).unwrap();
    assert_eq!((tr.len(), te.len()), (1600, 400));
    let (tr2, te2) = split(&ds, 0.2, 2026).unwrap();
    assert!(tr == tr2 && te == te2, "seed 2026: split not reproducible");
    let (_, te3) = split(&ds, 0.2, 2027).unwrap();
    assert_ne!(te, te3, "seeds 2026 and 2027 gave the same test set");
    // a partition: class counts add up
    let sum: Vec<usize> = tr
        .class_counts()
        .iter()
        .zip(te.class_counts())
        .map(|(a, b)| a + b)
        .collect();
    assert_eq!(sum, EMBEDDED_CLASS_COUNTS);
    assert_eq!(split_by_size(&ds, 400, 2026).unwrap(), (tr, te));
    // stratified: per-class round(0.25 n_c)
    let (str_tr, str_te) = stratified_split(&ds, 0.25, 9).unwrap();
    let want: Vec<usize> = EMBEDDED_CLASS_COUNTS
        .iter()
        .map(|&n| (0.25 * n as f64).round() as usize)
        .collect();
    assert_eq!(str_te.class_counts(), want);
    assert_eq!(str_tr.len() + str_te.len(), 2000);
    assert_eq!(stratified_split(&ds, 0.25, 9).unwrap().1, str_te);
}

/// ‖x‖² ≤ 1 checked in double-double arithmetic (error ~1e-30, far below the margin).
fn norm_sq_at_most_one_exactly(x: &[f64]) -> bool {
    let (mut hi, mut lo) = (0.0f64, 0.0f64);
    for &v in x {
        let p = v * v;
        let e = v.mul_add(v, -p); // exact error of the product
        let s = hi + p;
        let bb = s - hi;
        let err = (hi - (s - bb)) + (p - bb); // TwoSum
        hi = s;
        lo += err + e;
    }
    let s = hi + lo;
    s < 1.0 || (s == 1.0 && (lo - (s - hi)) <= 0.0)
}

#[test]
fn projection_puts_every_embedded_example_inside_the_unit_ball_exactly() {
    let ds = embedded_mnist().unwrap().flatten();
    let before = ds.max_l2_norm();
    eprintln!("embedded MNIST max l2 norm before projection: {before}");
    assert!(before > 1.0);
    let p = ds.clone().project_to_unit_ball();
    assert_eq!(p.shape(), (1, 1, 784));
    for ((x, y), (x0, y0)) in p.iter().zip(ds.iter()) {
        assert_eq!(y, y0);
        assert!(norm_sq_at_most_one_exactly(x));
        assert!(x.iter().all(|&v| (0.0..=1.0).contains(&v)));
        // same direction, norm 1 up to (784 + 4)·ε relative
        let n: f64 = x.iter().map(|v| v * v).sum::<f64>().sqrt();
        assert!((n - 1.0).abs() < 1e-12, "norm {n}");
        let n0: f64 = x0.iter().map(|v| v * v).sum::<f64>().sqrt();
        for (a, b) in x.iter().zip(x0) {
            assert!((a - b / n0).abs() <= 1e-12);
        }
    }
    // synthetic data in a small dimension, many norms near 1
    let (s, _) = synthetic::linearly_separable(2000, 2, 0.0, 3).unwrap();
    let ps = s.project_to_unit_ball();
    assert!(ps.iter().all(|(x, _)| norm_sq_at_most_one_exactly(x)));
}

#[test]
fn filter_labels_gives_mnist_zero_versus_one() {
    let ds = embedded_mnist().unwrap().filter_labels(&[0, 1]).unwrap();
    assert_eq!(ds.num_classes(), 2);
    assert_eq!(ds.class_counts(), [214, 219]);
    let orig = embedded_mnist().unwrap();
    let kept: Vec<usize> = (0..orig.len()).filter(|&i| orig.labels()[i] <= 1).collect();
    assert_eq!(orig.subset(&kept).unwrap().features(), ds.features());
    assert!(Dataset::new(ds.features().to_vec(), ds.labels().to_vec(), (1, 28, 28), 2).is_ok());
}

// ---------------------------------------------------------------------------------------
// Property tests: the readers never panic.

fn valid_idx_pair() -> (Vec<u8>, Vec<u8>) {
    let pixels: Vec<u8> = (0..2 * 3 * 3).map(|i| (i * 29 % 256) as u8).collect();
    (
        idx::encode_images(3, 3, &pixels).unwrap(),
        idx::encode_labels(&[4, 9]).unwrap(),
    )
}

proptest! {
    #[test]
    fn readers_never_panic_on_arbitrary_bytes(a in proptest::collection::vec(any::<u8>(), 0..200),
                                              b in proptest::collection::vec(any::<u8>(), 0..40)) {
        let _ = idx::images(&a);
        let _ = idx::labels(&a);
        let _ = idx::images_header(&a);
        let _ = idx::mnist_from_bytes(&a, &b);
        let _ = idx::dataset_from_idx(&a, &b, 256);
        let _ = cifar::parse(&a);
    }

    #[test]
    fn idx_parser_never_panics_on_mutated_valid_headers(
        mutations in proptest::collection::vec((0usize..16, any::<u8>()), 1..6),
        label_mutations in proptest::collection::vec((0usize..8, any::<u8>()), 0..3),
        resize in -20i64..20,
    ) {
        let (mut im, mut lb) = valid_idx_pair();
        for (pos, val) in mutations {
            im[pos] = val;
        }
        for (pos, val) in label_mutations {
            lb[pos] = val;
        }
        let new_len = (im.len() as i64 + resize).max(0) as usize;
        im.resize(new_len, 0xAB);
        if let Ok(view) = idx::images(&im) {
            let h = view.header;
            prop_assert_eq!(
                view.pixels.len() as u64,
                u64::from(h.count) * u64::from(h.rows) * u64::from(h.cols)
            );
        }
        match idx::mnist_from_bytes(&im, &lb) {
            Ok(ds) => {
                prop_assert_eq!(ds.len() * ds.dim(), im.len() - 16);
                prop_assert!(ds.labels().iter().all(|&l| l < 10));
            }
            Err(e) => prop_assert!(!e.to_string().is_empty()),
        }
    }

    #[test]
    fn cifar_parser_never_panics_on_mutated_records(
        len_records in 0usize..3, extra in -3i64..3, label in any::<u8>(), fill in any::<u8>()
    ) {
        let len = (len_records as i64 * cifar::RECORD_LEN as i64 + extra).max(0) as usize;
        let mut bytes = vec![fill; len];
        if let Some(first) = bytes.first_mut() {
            *first = label;
        }
        match cifar::parse(&bytes) {
            Ok(ds) => prop_assert!(extra == 0 && len_records > 0 && label < 10 && ds.len() == len_records),
            Err(_) => prop_assert!(extra != 0 || len_records == 0 || label >= 10 || fill >= 10),
        }
    }
}
