//! Every reader of the crate fed arbitrary bytes (issue 20 item 7, the CI side of `fuzz/`):
//! the strict JSON reader of shard files, shard files through `reconbound merge`, the schedule
//! CSV reader, and the IDX and CIFAR-10 parsers. Each must return a value or an error, never
//! panic, and what it accepts must be valid. A few hundred cases each (fixed proptest seed).

use proptest::prelude::*;
use reconbound::accounting::schedule::{Schedule, MAX_TOTAL_STEPS};
use reconbound::data::{cifar, idx};
use reconbound_cli::{self as cli, json};
use std::sync::OnceLock;

/// Text that looks like JSON (to get past the first byte), or arbitrary bytes.
fn jsonish() -> impl Strategy<Value = String> {
    prop_oneof![
        "[\\[\\]{}\":,0-9eE.+\\- a-z\\\\]{0,64}",
        prop::collection::vec(any::<u8>(), 0..96)
            .prop_map(|b| String::from_utf8_lossy(&b).into_owned()),
    ]
}

/// Shards 0/2 and 1/2 of a small prior-aware run and their merge (`--json`), made once.
fn shard_pair() -> &'static (String, String, String) {
    static PAIR: OnceLock<(String, String, String)> = OnceLock::new();
    PAIR.get_or_init(|| {
        let base =
            "attack prior-aware --trials 4 --train-size 9 --steps 2 --seed 1 --quiet --threads 1";
        let shard = |k: u32| {
            let mut args: Vec<String> = base.split(' ').map(String::from).collect();
            args.extend(["--shard".into(), format!("{k}/2")]);
            let out = cli::run(&args);
            assert_eq!(out.code, 0, "{}", out.stderr);
            out.stdout
        };
        let (a, b) = (shard(0), shard(1));
        let merged = merge(a.as_bytes(), b.as_bytes(), "setup");
        assert_eq!(merged.code, 0, "{}", merged.stderr);
        (a, b, merged.stdout)
    })
}

/// `reconbound merge A B --json` of two files with these bytes.
fn merge(a: &[u8], b: &[u8], tag: &str) -> cli::Outcome {
    let dir = std::env::temp_dir().join(format!(
        "reconbound-reader-props-{}-{tag}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let (pa, pb) = (dir.join("a.jsonl"), dir.join("b.jsonl"));
    std::fs::write(&pa, a).unwrap();
    std::fs::write(&pb, b).unwrap();
    let args: Vec<String> = vec![
        "merge".into(),
        pa.to_string_lossy().into_owned(),
        pb.to_string_lossy().into_owned(),
        "--json".into(),
    ];
    cli::run(&args)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, failure_persistence: None, ..ProptestConfig::default() })]

    /// The JSON reader returns a value or an error; an object it reads renders to text it
    /// reads back to the same rendering (exact).
    #[test]
    fn json_reader_takes_arbitrary_text_without_panic_and_round_trips_objects(text in jsonish()) {
        if let Ok(json::Value::Obj(o)) = json::parse(&text) {
            match json::parse(&o.render()) {
                Ok(json::Value::Obj(p)) => prop_assert_eq!(p.render(), o.render()),
                other => prop_assert!(false, "render of {text:?} read back as {other:?}"),
            }
        }
    }

    /// The schedule CSV reader returns a valid schedule or an error.
    #[test]
    fn schedule_csv_reader_takes_arbitrary_text_and_accepts_only_valid_phases(
        text in prop_oneof![
            "([0-9.e,#a-z \\-]{0,16}\n){0,6}",
            // mostly valid phases, to exercise what is accepted
            "(0\\.[0-9]{1,3},[0-9]{1,2}(\\.[0-9])?,[0-9]{1,4}\n){1,5}",
            prop::collection::vec(any::<u8>(), 0..96)
                .prop_map(|b| String::from_utf8_lossy(&b).into_owned()),
        ]
    ) {
        if let Ok(s) = Schedule::parse_csv(&text) {
            prop_assert!(!s.phases().is_empty() && s.total_steps() <= MAX_TOTAL_STEPS);
            for p in s.phases() {
                prop_assert!(p.sampling_rate > 0.0 && p.sampling_rate <= 1.0);
                prop_assert!(p.noise_multiplier > 0.0 && p.noise_multiplier.is_finite());
                prop_assert!(p.steps >= 1);
            }
            prop_assert_eq!(s.grouped().iter().map(|p| p.steps).sum::<u64>(), s.total_steps());
        }
    }

    /// The IDX and CIFAR-10 parsers return a dataset of valid pixels and labels or an error.
    #[test]
    fn idx_and_cifar_readers_take_arbitrary_bytes(
        bytes in prop::collection::vec(any::<u8>(), 0..4000),
        cut in 0usize..64,
    ) {
        let at = cut.min(bytes.len());
        let (labels, images) = bytes.split_at(at);
        for ds in [idx::mnist_from_bytes(images, labels), cifar::parse(&bytes)].into_iter().flatten() {
            prop_assert!(ds.features().iter().all(|&x| (0.0..=1.0).contains(&x)));
            prop_assert!(ds.labels().iter().all(|&l| (l as usize) < ds.num_classes()));
        }
        let _ = idx::images_header(&bytes);
        let _ = idx::labels_header(&bytes);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, failure_persistence: None, ..ProptestConfig::default() })]

    /// `merge` of a valid shard pair with arbitrary bytes spliced into one file (or one file
    /// replaced by arbitrary bytes) is refused (exit 2, nothing printed) or prints exactly the
    /// unaltered pair's merge: never another result, never a panic.
    #[test]
    fn merge_of_altered_shards_is_refused_or_unchanged(
        second in any::<bool>(),
        at in any::<prop::sample::Index>(),
        cut in 0usize..4,
        junk in prop::collection::vec(any::<u8>(), 0..6),
        replace in prop::bool::weighted(0.1),
    ) {
        let (a, b, good) = shard_pair();
        let target = if second { b } else { a };
        let altered: Vec<u8> = if replace {
            junk.clone()
        } else {
            let t = target.as_bytes();
            let i = at.index(t.len());
            let end = (i + cut).min(t.len());
            [&t[..i], &junk[..], &t[end..]].concat()
        };
        let out = if second {
            merge(a.as_bytes(), &altered, "alt")
        } else {
            merge(&altered, b.as_bytes(), "alt")
        };
        match out.code {
            0 => prop_assert_eq!(&out.stdout, good),
            2 => prop_assert!(out.stdout.is_empty() && out.stderr.trim_end().lines().count() == 1, "{}", out.stderr),
            c => prop_assert!(false, "exit {c}: {}", out.stderr),
        }
    }
}

mod shadow_sets {
    //! The RecoNN shadow-set reader and merge (`attacks::reconn::shadow_set`; the CI side of
    //! `fuzz/fuzz_targets/shadow_set.rs`).

    use proptest::prelude::*;
    use reconbound::attacks::reconn::shadow_set::{
        decode, encode, merge, peek_header, verify, ShadowModel, ShadowSetSpec,
    };
    use reconbound::attacks::trial::Shard;

    fn spec(total: u64, param_len: u32) -> ShadowSetSpec {
        ShadowSetSpec::new("arch=3-2;steps=4;seed=1".into(), 11, total, param_len).unwrap()
    }

    /// The parts K/M of the set `spec` with parameters `values` (cycled).
    fn parts(spec: &ShadowSetSpec, m: u64, values: &[f64]) -> (Vec<Vec<u8>>, Vec<ShadowModel>) {
        let models: Vec<ShadowModel> = (0..spec.total)
            .map(|i| ShadowModel {
                index: i,
                target: (i * 3) as u32,
                params: (0..u64::from(spec.param_len))
                    .map(|j| values[((i * 7 + j) as usize) % values.len()])
                    .collect(),
            })
            .collect();
        let parts = (0..m)
            .map(|k| {
                let shard = Shard::new(k, m).unwrap();
                let mine: Vec<ShadowModel> = models
                    .iter()
                    .filter(|x| shard.contains(x.index))
                    .cloned()
                    .collect();
                encode(spec, shard, &mine).unwrap()
            })
            .collect();
        (parts, models)
    }

    fn valid_three() -> (Vec<Vec<u8>>, Vec<u8>) {
        let s = spec(5, 3);
        let (p, _) = parts(&s, 3, &[0.5, -1.25, 3e-8, 7.0]);
        let (w, _) = parts(&s, 1, &[0.5, -1.25, 3e-8, 7.0]);
        (p, w.into_iter().next().unwrap())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 300, failure_persistence: None, ..ProptestConfig::default() })]

        /// Arbitrary bytes, alone or after a valid header, never panic, and what decodes is
        /// exactly the encoder's bytes for it.
        #[test]
        fn shadow_set_reader_takes_arbitrary_bytes(
            tail in prop::collection::vec(any::<u8>(), 0..200),
            after_header in any::<bool>(),
        ) {
            let (p, _) = valid_three();
            let h = peek_header(&p[1]).unwrap().header_len as usize;
            let bytes = if after_header { [&p[1][..h], &tail[..]].concat() } else { tail };
            if let Ok(head) = peek_header(&bytes) {
                if let Ok((shard, models)) = decode(&bytes, &head.spec) {
                    prop_assert_eq!(encode(&head.spec, shard, &models).unwrap(), bytes.clone());
                }
            }
            let _ = verify(&bytes);
            let merged = merge(&[&p[0], &bytes, &p[2]]);
            prop_assert!(merged.is_err() || bytes == p[1]);
        }

        /// Every one-edit change of a part (a byte changed, removed or inserted) is refused by
        /// merge: the CRC-32 of the header and of each record, and the exact length.
        #[test]
        fn merge_refuses_every_one_edit_change_of_a_part(
            which in 0usize..3,
            at in any::<prop::sample::Index>(),
            byte in any::<u8>(),
            edit in 0u8..3,
        ) {
            let (p, whole) = valid_three();
            let mut part = p[which].clone();
            let i = at.index(part.len());
            match edit {
                0 if part[i] != byte => part[i] = byte,
                0 => part[i] ^= 0x20,
                1 => { part.remove(i); }
                _ => part.insert(i, byte),
            }
            let mut files: Vec<&[u8]> = p.iter().map(Vec::as_slice).collect();
            files[which] = &part;
            prop_assert!(merge(&files).is_err(), "edit {} at {} merged", edit, i);
            prop_assert_eq!(merge(&p.iter().map(Vec::as_slice).collect::<Vec<_>>()).unwrap(), whole);
        }

        /// Any set, cut into any number of parts, merges into the bytes of the whole set and
        /// decodes to its models.
        #[test]
        fn shadow_parts_merge_into_the_whole_set(
            total in 1u64..20,
            param_len in 1u32..6,
            m in 1u64..6,
            values in prop::collection::vec(-1e6f64..1e6, 1..8),
            rotate in 0usize..6,
        ) {
            let s = spec(total, param_len);
            let (mut p, models) = parts(&s, m, &values);
            let (w, _) = parts(&s, 1, &values);
            let r = rotate % p.len();
            p.rotate_left(r);
            let merged = merge(&p.iter().map(Vec::as_slice).collect::<Vec<_>>()).unwrap();
            prop_assert_eq!(&merged, &w[0]);
            prop_assert_eq!(decode(&merged, &s).unwrap(), (Shard::WHOLE, models));
        }
    }
}
