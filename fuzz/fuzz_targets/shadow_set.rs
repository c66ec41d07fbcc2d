//! Fuzz the RecoNN shadow-set reader and merge (`attacks::reconn::shadow_set`): arbitrary
//! bytes to `peek_header`, `decode`, `verify` and `merge` must give `Ok` or `Err`, never a
//! panic, an abort or an allocation beyond the input's size. The input is cut into parts:
//! its first byte's two low bits give the number of parts n (0 → the whole input as one file),
//! the next 2·n bytes their lengths (u16, little-endian; the last part takes the rest). Seed
//! the corpus with real parts so that mutations reach the records, e.g. the files of
//! `tests/cli/shadow_merge.rs` joined by that framing.
//!
//! What must hold: a file that decodes is exactly the bytes the encoder writes for what was
//! read (one set, one file); a merge that succeeds is a whole set of the parts' spec, holds
//! every model once in index order, and merges into itself.
#![no_main]

use libfuzzer_sys::fuzz_target;
use reconbound::attacks::reconn::shadow_set::{
    decode, encode, merge, peek_header, verify, ShadowSetSpec,
};
use reconbound::attacks::trial::Shard;

fn parts(data: &[u8]) -> Vec<&[u8]> {
    let Some((&first, mut rest)) = data.split_first() else {
        return vec![data];
    };
    let n = usize::from(first & 3);
    if n == 0 {
        return vec![rest];
    }
    let Some((lens, body)) = rest.split_at_checked(2 * n) else {
        return vec![rest];
    };
    rest = body;
    let mut out = Vec::with_capacity(n);
    for (i, l) in lens.chunks_exact(2).enumerate() {
        let len = usize::from(u16::from_le_bytes([l[0], l[1]])).min(rest.len());
        let len = if i + 1 == n { rest.len() } else { len };
        let (part, tail) = rest.split_at(len);
        out.push(part);
        rest = tail;
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let files = parts(data);
    let fixed = ShadowSetSpec::new("arch=7-5-2;steps=100;lr=0.5;seed=1".into(), 7, 10, 50);
    for file in &files {
        let Ok(h) = peek_header(file) else {
            assert!(verify(file).is_err());
            continue;
        };
        assert!(h.header_len as usize <= file.len());
        if verify(file).is_ok() {
            assert_eq!(h.file_len(), file.len() as u64);
        }
        // decoded with its own spec: the encoder writes the same bytes again
        if let Ok((shard, models)) = decode(file, &h.spec) {
            assert_eq!(shard, h.shard);
            assert_eq!(encode(&h.spec, shard, &models).ok().as_deref(), Some(&file[..]));
        }
        if let Ok(spec) = &fixed {
            if decode(file, spec).is_ok() {
                assert_eq!(&h.spec, spec);
            }
        }
    }
    if let Ok(merged) = merge(&files) {
        let h = peek_header(&merged).expect("a merged set has a header");
        assert_eq!(h.shard, Shard::WHOLE);
        assert_eq!(h.file_len(), merged.len() as u64);
        let (_, models) = decode(&merged, &h.spec).expect("a merged set decodes");
        assert!(models.iter().enumerate().all(|(i, m)| m.index == i as u64));
        assert_eq!(merge(&[&merged]).ok(), Some(merged.clone()));
    }
});
