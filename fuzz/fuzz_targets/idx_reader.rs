//! Fuzz the IDX (MNIST) reader: arbitrary bytes must give `Ok` or `Err`, never a panic, an
//! abort or a huge allocation.
#![no_main]

use libfuzzer_sys::fuzz_target;
use reconbound::data::idx;

fuzz_target!(|data: &[u8]| {
    // The whole input as either file.
    let _ = idx::images_header(data);
    let _ = idx::labels_header(data);
    if let Ok(view) = idx::images(data) {
        let h = view.header;
        assert_eq!(
            view.pixels.len() as u64,
            u64::from(h.count) * u64::from(h.rows) * u64::from(h.cols)
        );
    }
    let _ = idx::labels(data);
    // Split the input into an images file and a labels file at a position taken from the
    // first byte, and build a data set from the pair.
    if let Some((&cut, rest)) = data.split_first() {
        let at = usize::from(cut).min(rest.len());
        let (labels, images) = rest.split_at(at);
        if let Ok(ds) = idx::mnist_from_bytes(images, labels) {
            assert_eq!(ds.len() * ds.dim() + 16, images.len());
            assert!(ds.features().iter().all(|&x| (0.0..=1.0).contains(&x)));
            assert!(ds.labels().iter().all(|&l| l < 10));
        }
    }
});
