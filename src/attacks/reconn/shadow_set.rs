//! The shadow-set file of RecoNN: the K shadow models an adversary trains (model i a pure
//! function of (seed, i), trained on D⁻ ∪ {zᵢ}), written once and reused, sharded over
//! machines and merged into exactly the bytes of the unsharded file. Encoding and decoding
//! only (`alloc`, no file I/O): the command line streams the bytes to and from files.
//!
//! # Format (version [`SHADOW_SET_VERSION`])
//!
//! A text header of eight lines, each ending in `\n`, so that `head -c 300 FILE` shows what a
//! file holds:
//!
//! ```text
//! reconbound shadow set, format 1
//! fingerprint: 0123456789abcdef
//! models: 8000
//! parameters: 7960
//! shard: 0/1
//! records: 8000 of 63696 bytes
//! description: arch=784-10-10;steps=100;…
//! header crc32: 89abcdef
//! ```
//!
//! - `fingerprint`: [`ShadowSetSpec::fingerprint`], 16 lower-case hex digits;
//! - `models`: the set's size K ([`ShadowSetSpec::total`]), `parameters`: each model's
//!   parameter count ([`ShadowSetSpec::param_len`]);
//! - `shard`: K/M, the part of the set this file holds (the models with index ≡ K mod M;
//!   `0/1` for the whole set), `records`: how many models that is and the size of one record;
//! - `description`: the canonical configuration text ([`ShadowSetSpec::description`]);
//! - `header crc32`: the CRC-32 of the header's bytes before this line.
//!
//! Then the records, one per model of the shard in increasing index order, each of the same
//! size 16 + 8·`parameters` bytes: the model's index (u64), its target's index in the dataset
//! (u32), its parameters (f64 bits), all little-endian, and the CRC-32 (u32, little-endian)
//! of the record's bytes before it. Nothing follows the last record: a file's exact length
//! follows from its header, so a truncated file, or one with bytes appended, is refused.
//!
//! The header is read strictly: the bytes must be exactly those [`Encoder`] writes for the
//! values read (one spelling of every number, no extra space or line), so that one set has one
//! file and [`merge`] reproduces the unsharded file byte for byte.
//!
//! # Examples
//!
//! ```
//! use reconbound::attacks::reconn::shadow_set::{decode, encode, merge, ShadowModel, ShadowSetSpec};
//! use reconbound::attacks::trial::Shard;
//! let spec = ShadowSetSpec::new("arch=2-1;steps=3".into(), 0x1234, 5, 3)?;
//! let models: Vec<ShadowModel> = (0..5)
//!     .map(|i| ShadowModel { index: i, target: 7 * i as u32, params: vec![i as f64; 3] })
//!     .collect();
//! let whole = encode(&spec, Shard::WHOLE, &models)?;
//! // two machines: models 0, 2, 4 and 1, 3
//! let part = |k: u64| -> Result<Vec<u8>, reconbound::Error> {
//!     let mine: Vec<ShadowModel> =
//!         models.iter().filter(|m| m.index % 2 == k).cloned().collect();
//!     encode(&spec, Shard::new(k, 2)?, &mine)
//! };
//! let (p0, p1) = (part(0)?, part(1)?);
//! assert_eq!(merge(&[&p1, &p0])?, whole);
//! assert_eq!(decode(&whole, &spec)?, (Shard::WHOLE, models));
//! # Ok::<(), reconbound::Error>(())
//! ```

use crate::attacks::trial::Shard;
use crate::error::{Error, Result};
use crate::fingerprint::{crc32, fnv1a64, FNV_OFFSET};
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

/// The format version this build writes and reads; a file of another version is refused.
pub const SHADOW_SET_VERSION: u32 = 1;

/// How every shadow-set file starts (its first line is this, `, format ` and the version).
pub const MAGIC: &str = "reconbound shadow set";

/// The most models a set may hold (and the most parts it may be split into): 10⁷, far beyond
/// the 40,000 of Hayes et al. (App. A), and small enough that sizes never overflow.
pub const MAX_MODELS: u64 = 10_000_000;

/// The most parameters a model may have: 2²⁴ (a record of 128 MiB).
pub const MAX_PARAMS: u32 = 1 << 24;

/// The longest description, in bytes: 64 KiB.
pub const MAX_DESCRIPTION_BYTES: usize = 1 << 16;

/// The longest header, in bytes: a reader needs at most this many bytes of a file to read
/// its header ([`peek_header`]).
pub const MAX_HEADER_BYTES: usize = MAX_DESCRIPTION_BYTES + 512;

/// Bytes of a record besides the parameters: the index (8), the target (4), the CRC-32 (4).
const RECORD_OVERHEAD: u64 = 16;

fn bad(what: &'static str, value: f64) -> Error {
    Error::Inconsistent { what, value }
}

/// What a shadow set depends on, and its size: a set is reused only by a run with an equal
/// spec.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShadowSetSpec {
    /// FNV-1a (64 bits) of the format's first line, of [`description`](Self::description)
    /// and of the data's fingerprint ([`ShadowSetSpec::new`]).
    pub fingerprint: u64,
    /// The configuration the set was trained with, as canonical human-readable text built by
    /// the caller (e.g. `key=value;key=value`, every input of the shadow models' training that
    /// is not the data's content: D⁻, θ₀, the seed, the training flags). At most
    /// [`MAX_DESCRIPTION_BYTES`] bytes, no control characters (no line breaks).
    pub description: String,
    /// The number of models K of the whole set, 1..=[`MAX_MODELS`].
    pub total: u64,
    /// Each model's parameter count, 1..=[`MAX_PARAMS`] (7,960 for MLP 784-10-10).
    pub param_len: u32,
}

impl ShadowSetSpec {
    /// The spec of a set of `total` models of `param_len` parameters trained with the
    /// configuration `description` on the data of fingerprint `data_fingerprint`
    /// ([`Dataset::fingerprint`](crate::data::Dataset::fingerprint)).
    ///
    /// # Formula
    ///
    /// `fingerprint` = FNV-1a-64 of the bytes of `reconbound shadow set, format 1\n`, then
    /// `description`, then `data_fingerprint` (u64, little-endian): another format version,
    /// configuration or dataset gives another fingerprint.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidCount`] `total` unless in 1..=[`MAX_MODELS`], `param_len` unless in
    /// 1..=[`MAX_PARAMS`], `description` (its length) if longer than
    /// [`MAX_DESCRIPTION_BYTES`] or if it holds a control character.
    pub fn new(
        description: String,
        data_fingerprint: u64,
        total: u64,
        param_len: u32,
    ) -> Result<Self> {
        let mut h = fnv1a64(FNV_OFFSET, first_line().as_bytes());
        h = fnv1a64(h, description.as_bytes());
        h = fnv1a64(h, &data_fingerprint.to_le_bytes());
        let spec = ShadowSetSpec {
            fingerprint: h,
            description,
            total,
            param_len,
        };
        spec.check()?;
        Ok(spec)
    }

    /// Checks the ranges [`ShadowSetSpec::new`] promises (the fields are public).
    ///
    /// # Errors
    ///
    /// As [`ShadowSetSpec::new`].
    pub fn check(&self) -> Result<()> {
        if !(1..=MAX_MODELS).contains(&self.total) {
            return Err(Error::InvalidCount {
                name: "total",
                value: self.total,
                expected: "in 1..=10000000 (shadow models of a set)",
            });
        }
        if !(1..=MAX_PARAMS).contains(&self.param_len) {
            return Err(Error::InvalidCount {
                name: "param_len",
                value: u64::from(self.param_len),
                expected: "in 1..=16777216 (parameters of a shadow model)",
            });
        }
        if self.description.len() > MAX_DESCRIPTION_BYTES {
            return Err(Error::InvalidCount {
                name: "description",
                value: self.description.len() as u64,
                expected: "at most 65536 bytes long",
            });
        }
        if let Some(at) = self.description.chars().position(char::is_control) {
            return Err(Error::InvalidCount {
                name: "description",
                value: at as u64,
                expected: "free of control characters (value: the first one's position)",
            });
        }
        Ok(())
    }

    /// The size in bytes of one record: 16 + 8·[`param_len`](Self::param_len).
    pub fn record_len(&self) -> u64 {
        RECORD_OVERHEAD + 8 * u64::from(self.param_len)
    }
}

/// One shadow model: its index i in the set, the index of its target zᵢ in the dataset, and
/// its trained parameters (flat, as the crate's `nn` lays them out).
#[derive(Clone, Debug, PartialEq)]
pub struct ShadowModel {
    /// The model's index i in the set, 0..[`ShadowSetSpec::total`].
    pub index: u64,
    /// The index of the model's target zᵢ in the dataset.
    pub target: u32,
    /// The trained parameters, [`ShadowSetSpec::param_len`] finite values.
    pub params: Vec<f64>,
}

/// A file's header as read by [`peek_header`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShadowSetHeader {
    /// The set's spec.
    pub spec: ShadowSetSpec,
    /// The part of the set the file holds ([`Shard::WHOLE`] for a whole set).
    pub shard: Shard,
    /// The header's size in bytes (where the first record starts).
    pub header_len: u64,
}

impl ShadowSetHeader {
    /// The number of records the file holds: the models of the set in its shard.
    pub fn records(&self) -> u64 {
        shard_records(self.spec.total, self.shard)
    }

    /// The exact size in bytes of the file: the header and [`records`](Self::records)
    /// records of [`ShadowSetSpec::record_len`] bytes.
    pub fn file_len(&self) -> u64 {
        // ≤ 10⁷ records of ≤ 2²⁷ + 16 bytes: no overflow
        self.header_len
            .saturating_add(self.records().saturating_mul(self.spec.record_len()))
    }
}

fn shard_records(total: u64, shard: Shard) -> u64 {
    total.saturating_sub(shard.index()).div_ceil(shard.count())
}

fn first_line() -> String {
    format!("{MAGIC}, format {SHADOW_SET_VERSION}\n")
}

/// The header's bytes (the spec must have passed [`ShadowSetSpec::check`]).
fn header_bytes(spec: &ShadowSetSpec, shard: Shard) -> Vec<u8> {
    let mut text = first_line();
    text.push_str(&format!(
        "fingerprint: {:016x}\nmodels: {}\nparameters: {}\nshard: {}/{}\nrecords: {} of {} bytes\ndescription: {}\n",
        spec.fingerprint,
        spec.total,
        spec.param_len,
        shard.index(),
        shard.count(),
        shard_records(spec.total, shard),
        spec.record_len(),
        spec.description
    ));
    let crc = crc32(text.as_bytes());
    text.push_str(&format!("header crc32: {crc:08x}\n"));
    text.into_bytes()
}

/// Writes a shadow set (or one part of it) record by record, in the order the file needs:
/// [`header`](Encoder::header) first, then [`record`](Encoder::record) for each model of the
/// shard in increasing index order, then [`finish`](Encoder::finish) to check that none is
/// missing. The bytes written are exactly those [`decode`] accepts.
#[derive(Clone, Debug)]
pub struct Encoder {
    spec: ShadowSetSpec,
    shard: Shard,
    next: u64,
}

impl Encoder {
    /// An encoder of the models of `shard` of the set `spec`.
    ///
    /// # Errors
    ///
    /// Those of [`ShadowSetSpec::check`]; [`Error::InvalidCount`] `shard_count` if the shard
    /// count exceeds [`MAX_MODELS`].
    pub fn new(spec: &ShadowSetSpec, shard: Shard) -> Result<Self> {
        spec.check()?;
        if shard.count() > MAX_MODELS {
            return Err(Error::InvalidCount {
                name: "shard_count",
                value: shard.count(),
                expected: "at most 10000000",
            });
        }
        Ok(Encoder {
            spec: spec.clone(),
            shard,
            next: shard.index(),
        })
    }

    /// The header's bytes (see the [module docs](self)).
    pub fn header(&self) -> Vec<u8> {
        header_bytes(&self.spec, self.shard)
    }

    /// The index the next record must have, `None` once the shard's records are all written.
    pub fn next_index(&self) -> Option<u64> {
        (self.next < self.spec.total).then_some(self.next)
    }

    /// The bytes of the record of `model`, the next model of the shard.
    ///
    /// # Errors
    ///
    /// [`Error::Inconsistent`] if every record of the shard was written already, if
    /// `model.index` is not [`next_index`](Encoder::next_index) (value: the index given), if
    /// `model.params` is not [`ShadowSetSpec::param_len`] long (value: its length), or if a
    /// parameter is not finite (value: its position).
    pub fn record(&mut self, model: &ShadowModel) -> Result<Vec<u8>> {
        let Some(next) = self.next_index() else {
            return Err(bad(
                "shadow set: a model given after the last record of the shard (value: its index)",
                model.index as f64,
            ));
        };
        if model.index != next {
            return Err(bad(
                "shadow set: models must be given in the shard's index order (value: the index given)",
                model.index as f64,
            ));
        }
        if model.params.len() as u64 != u64::from(self.spec.param_len) {
            return Err(bad(
                "shadow set: a model's parameter count differs from the set's (value: its count)",
                model.params.len() as f64,
            ));
        }
        if let Some(at) = model.params.iter().position(|p| !p.is_finite()) {
            return Err(bad(
                "shadow set: a model holds a non-finite parameter (value: its position)",
                at as f64,
            ));
        }
        let mut out = Vec::with_capacity(model.params.len() * 8 + 16);
        out.extend_from_slice(&model.index.to_le_bytes());
        out.extend_from_slice(&model.target.to_le_bytes());
        for p in &model.params {
            out.extend_from_slice(&p.to_bits().to_le_bytes());
        }
        let crc = crc32(&out);
        out.extend_from_slice(&crc.to_le_bytes());
        self.next = self.next.saturating_add(self.shard.count());
        Ok(out)
    }

    /// Checks that every record of the shard was written.
    ///
    /// # Errors
    ///
    /// [`Error::Inconsistent`] naming the first missing model's index.
    pub fn finish(&self) -> Result<()> {
        match self.next_index() {
            None => Ok(()),
            Some(i) => Err(bad(
                "shadow set: models missing from the shard (value: the first missing index)",
                i as f64,
            )),
        }
    }
}

/// The whole file of `shard` of the set `spec` holding `models` (the shard's models in
/// increasing index order): [`Encoder`] in one call.
///
/// # Errors
///
/// Those of [`Encoder::new`], [`Encoder::record`] and [`Encoder::finish`].
pub fn encode(spec: &ShadowSetSpec, shard: Shard, models: &[ShadowModel]) -> Result<Vec<u8>> {
    let mut enc = Encoder::new(spec, shard)?;
    let mut out = enc.header();
    for m in models {
        out.extend_from_slice(&enc.record(m)?);
    }
    enc.finish()?;
    Ok(out)
}

/// The next line of the header at `*pos` (without its `\n`), as text.
fn header_line<'a>(bytes: &'a [u8], pos: &mut usize) -> Result<&'a str> {
    let rest = bytes.get(*pos..).unwrap_or_default();
    let window = &rest[..rest.len().min(MAX_HEADER_BYTES.saturating_sub(*pos))];
    let Some(end) = window.iter().position(|&b| b == b'\n') else {
        return Err(if window.len() == rest.len() {
            bad(
                "shadow set: the file ends inside its header (value: its length in bytes)",
                bytes.len() as f64,
            )
        } else {
            bad(
                "shadow set: header longer than the 66048 bytes a header may have (value: that cap)",
                MAX_HEADER_BYTES as f64,
            )
        });
    };
    *pos += end + 1;
    core::str::from_utf8(&window[..end]).map_err(|_| {
        bad(
            "shadow set: a header line is not UTF-8 text (value: its byte offset)",
            (*pos - end - 1) as f64,
        )
    })
}

/// The value of the header line `line` (numbered `n` from 1) after `key: `.
fn field<'a>(line: &'a str, key: &str, n: usize) -> Result<&'a str> {
    line.strip_prefix(key)
        .and_then(|r| r.strip_prefix(": "))
        .ok_or_else(|| {
            bad(
                "shadow set: a header line lacks its key; the lines are fingerprint, models, parameters, shard, records, description, header crc32 (value: the line's number)",
                n as f64,
            )
        })
}

fn number<T: core::str::FromStr>(s: &str, n: usize) -> Result<T> {
    s.parse().map_err(|_| {
        bad(
            "shadow set: a header number is malformed (value: the line's number)",
            n as f64,
        )
    })
}

/// Reads the header of a shadow-set file from `bytes` (the file, or any prefix of it that
/// holds the header: at most [`MAX_HEADER_BYTES`] bytes are looked at), without comparing it
/// to any run. [`ShadowSetHeader::file_len`] then tells how long the file must be.
///
/// # Errors
///
/// [`Error::Inconsistent`] naming what is wrong: not a shadow set (the bytes do not start
/// with [`MAGIC`]); another format version (value: the file's version); a header that ends
/// early, is malformed (value: the line's number), fails its CRC-32 or is not in the
/// canonical form; an out-of-range count (as [`ShadowSetSpec::check`]) or shard.
pub fn peek_header(bytes: &[u8]) -> Result<ShadowSetHeader> {
    if !bytes.starts_with(MAGIC.as_bytes()) {
        return Err(bad(
            "not a RecoNN shadow set: the file does not start with 'reconbound shadow set' (value: its length in bytes)",
            bytes.len() as f64,
        ));
    }
    let mut pos = 0;
    let first = header_line(bytes, &mut pos)?;
    let version = first
        .strip_prefix(MAGIC)
        .and_then(|r| r.strip_prefix(", format "))
        .ok_or_else(|| {
            bad(
                "shadow set: malformed first line (value: its length)",
                first.len() as f64,
            )
        })?;
    let version: u32 = number(version, 1)?;
    if version != SHADOW_SET_VERSION {
        return Err(bad(
            "shadow set of another format version: this build reads format 1 (value: the file's version)",
            f64::from(version),
        ));
    }
    let mut lines = [""; 7];
    for (n, slot) in lines.iter_mut().enumerate() {
        let start = pos;
        let line = header_line(bytes, &mut pos)?;
        if n == 6 {
            let crc = field(line, "header crc32", n + 2)?;
            let expected = format!("{:08x}", crc32(&bytes[..start]));
            if crc != expected {
                return Err(bad(
                    "shadow set: the header fails its CRC-32 (a damaged file; value: the header's length)",
                    pos as f64,
                ));
            }
        }
        *slot = line;
    }
    let [fp, models, params, shard, _records, description, _crc] = lines;
    let fp = field(fp, "fingerprint", 2)?;
    let fingerprint = u64::from_str_radix(fp, 16).map_err(|_| {
        bad(
            "shadow set: a header number is malformed (value: the line's number)",
            2.0,
        )
    })?;
    let total: u64 = number(field(models, "models", 3)?, 3)?;
    let param_len: u32 = number(field(params, "parameters", 4)?, 4)?;
    let (k, m) = field(shard, "shard", 5)?.split_once('/').ok_or_else(|| {
        bad(
            "shadow set: a header number is malformed (value: the line's number)",
            5.0,
        )
    })?;
    let (k, m): (u64, u64) = (number(k, 5)?, number(m, 5)?);
    let shard = Shard::new(k, m)?;
    let description = String::from(field(description, "description", 7)?);
    let spec = ShadowSetSpec {
        fingerprint,
        description,
        total,
        param_len,
    };
    let enc = Encoder::new(&spec, shard)?;
    if enc.header().as_slice() != &bytes[..pos] {
        return Err(bad(
            "shadow set: the header is not in the canonical form reconbound writes (value: its length)",
            pos as f64,
        ));
    }
    Ok(ShadowSetHeader {
        spec,
        shard,
        header_len: pos as u64,
    })
}

/// Checks that a set of spec `found` is the one a run of spec `expected` needs.
///
/// # Errors
///
/// [`Error::Inconsistent`]: the description differs (another configuration, D⁻, θ₀ or seed;
/// value: the byte offset of the first difference); the fingerprint differs with the same
/// description (other data); the model count or the parameter count differs (value: the
/// file's).
pub fn check_matches(found: &ShadowSetSpec, expected: &ShadowSetSpec) -> Result<()> {
    if found.description != expected.description {
        let at = found
            .description
            .bytes()
            .zip(expected.description.bytes())
            .position(|(a, b)| a != b)
            .unwrap_or(found.description.len().min(expected.description.len()));
        return Err(bad(
            "shadow set trained with another configuration (D⁻, θ₀, seed or training): its description differs from the run's (value: the first differing byte)",
            at as f64,
        ));
    }
    if found.fingerprint != expected.fingerprint {
        return Err(bad(
            "shadow set trained on other data (or written by another format): its fingerprint differs from the run's, its description does not",
            0.0,
        ));
    }
    if found.total != expected.total {
        return Err(bad(
            "shadow set of another number of models (value: the file's)",
            found.total as f64,
        ));
    }
    if found.param_len != expected.param_len {
        return Err(bad(
            "shadow set of another parameter count (value: the file's)",
            f64::from(found.param_len),
        ));
    }
    Ok(())
}

/// Reads the record at position `position` (from 0) of a file of header `header`: `record`
/// must be its [`ShadowSetSpec::record_len`] bytes. For readers that stream a file record by
/// record after [`peek_header`] (whose checks this one completes).
///
/// # Errors
///
/// [`Error::Inconsistent`]: `record` of another length (value: its length), a record that
/// fails its CRC-32 (value: `position`), whose model index is not the shard's index at
/// `position` (value: the index read), or that holds a non-finite parameter (value: the
/// model's index).
pub fn decode_record(
    header: &ShadowSetHeader,
    position: u64,
    record: &[u8],
) -> Result<ShadowModel> {
    if record.len() as u64 != header.spec.record_len() || record.len() < 16 {
        return Err(bad(
            "shadow set: a record of the wrong length (value: its length in bytes)",
            record.len() as f64,
        ));
    }
    let (content, crc) = record.split_at(record.len() - 4);
    if crc32(content) != u32::from_le_bytes(le(crc)) {
        return Err(bad(
            "shadow set: a record fails its CRC-32 (a damaged file; value: the record's position in the file, from 0)",
            position as f64,
        ));
    }
    let (index, rest) = content.split_at(8);
    let (target, params) = rest.split_at(4);
    let index = u64::from_le_bytes(le(index));
    let expected = position
        .checked_mul(header.shard.count())
        .and_then(|o| o.checked_add(header.shard.index()));
    if Some(index) != expected || position >= header.records() {
        return Err(bad(
            "shadow set: a record's model index is not the shard's next index (value: the index read)",
            index as f64,
        ));
    }
    let params: Vec<f64> = params
        .chunks_exact(8)
        .map(|b| f64::from_bits(u64::from_le_bytes(le(b))))
        .collect();
    if params.iter().any(|p| !p.is_finite()) {
        return Err(non_finite(index));
    }
    Ok(ShadowModel {
        index,
        target: u32::from_le_bytes(le(target)),
        params,
    })
}

/// Checks the records of the file `bytes` of header `h`: the exact length and each record
/// ([`decode_record`]). With `keep`, returns the models.
fn read_records(bytes: &[u8], h: &ShadowSetHeader, keep: bool) -> Result<Vec<ShadowModel>> {
    let len = bytes.len() as u64;
    if len < h.file_len() {
        return Err(bad(
            "shadow set truncated: shorter than its header says (value: its length in bytes)",
            len as f64,
        ));
    }
    if len > h.file_len() {
        return Err(bad(
            "shadow set: bytes after its last record (value: its length in bytes)",
            len as f64,
        ));
    }
    let record_len = usize::try_from(h.spec.record_len()).map_err(|_| {
        bad(
            "shadow set: records too large for this platform (value: their size)",
            h.spec.record_len() as f64,
        )
    })?;
    let start = usize::try_from(h.header_len).unwrap_or(usize::MAX);
    let body = bytes.get(start..).unwrap_or_default();
    let mut models = Vec::new();
    for (j, rec) in body.chunks_exact(record_len).enumerate() {
        let m = decode_record(h, j as u64, rec)?;
        if keep {
            models.push(m);
        }
    }
    Ok(models)
}

fn non_finite(index: u64) -> Error {
    bad(
        "shadow set: a model holds a non-finite parameter (value: the model's index)",
        index as f64,
    )
}

/// `b` as an array of N bytes (`b` has N bytes where it is called; zeros otherwise).
fn le<const N: usize>(b: &[u8]) -> [u8; N] {
    let mut a = [0u8; N];
    if let Some(src) = b.get(..N) {
        a.copy_from_slice(src);
    }
    a
}

/// Reads a shadow-set file (whole or one part) made for a run of spec `expected`: its shard
/// and its models in increasing index order. Strict: the header ([`peek_header`]) must match
/// `expected` ([`check_matches`]), the file must be exactly as long as its header says, every
/// record must pass its CRC-32, hold the shard's next index and finite parameters.
///
/// # Errors
///
/// Those of [`peek_header`] and [`check_matches`]; [`Error::Inconsistent`] naming a
/// truncated file, bytes after the last record, a record that fails its CRC-32, an index out
/// of order or outside the shard, a non-finite parameter.
pub fn decode(bytes: &[u8], expected: &ShadowSetSpec) -> Result<(Shard, Vec<ShadowModel>)> {
    let h = peek_header(bytes)?;
    check_matches(&h.spec, expected)?;
    let models = read_records(bytes, &h, true)?;
    Ok((h.shard, models))
}

/// Checks a whole shadow-set file (whole or one part) without a run to compare it with: its
/// header and every record, as [`decode`] does. Returns the header.
///
/// # Errors
///
/// As [`decode`], but for [`check_matches`].
pub fn verify(bytes: &[u8]) -> Result<ShadowSetHeader> {
    let h = peek_header(bytes)?;
    read_records(bytes, &h, false)?;
    Ok(h)
}

/// The order in which the parts whose headers are `headers` (in the order given) join into
/// their whole set: `order[K]` is the position in `headers` of shard K/M. They must be parts
/// of one set (the same spec and shard count M as the first) with every shard K = 0..M−1
/// once. Records are not read: a merge that streams them checks each with
/// [`decode_record`] (part K's j-th record is model j·M + K).
///
/// # Errors
///
/// [`Error::InvalidCount`] `parts` if none is given; [`Error::Inconsistent`] for parts of
/// different sets or shard counts (value: the part's position in `headers`, from 0), a shard
/// given twice or missing (value: K).
pub fn merge_order(headers: &[ShadowSetHeader]) -> Result<Vec<usize>> {
    let Some(first) = headers.first() else {
        return Err(Error::InvalidCount {
            name: "parts",
            value: 0,
            expected: ">= 1 shadow-set part",
        });
    };
    let count = first.shard.count();
    // (shard K, the part's position), for every part
    let mut order: Vec<(u64, usize)> = Vec::with_capacity(headers.len());
    for (i, h) in headers.iter().enumerate() {
        if h.spec != first.spec {
            return Err(bad(
                "shadow-set parts of different sets: another fingerprint, description or size than the first part (value: the part's position, from 0)",
                i as f64,
            ));
        }
        if h.shard.count() != count {
            return Err(bad(
                "shadow-set parts of different shard counts M (value: the part's position, from 0)",
                i as f64,
            ));
        }
        order.push((h.shard.index(), i));
    }
    order.sort_unstable_by_key(|&(k, _)| k);
    if let Some(w) = order.windows(2).find(|w| w[0].0 == w[1].0) {
        return Err(bad(
            "shadow-set part given twice (value: its shard K)",
            w[0].0 as f64,
        ));
    }
    if order.len() as u64 != count {
        let missing = order
            .iter()
            .enumerate()
            .find(|(k, (s, _))| *k as u64 != *s)
            .map_or(order.len() as u64, |(k, _)| k as u64);
        return Err(bad(
            "shadow-set part missing: every shard K/M, K = 0..M-1, is needed (value: a missing K)",
            missing as f64,
        ));
    }
    Ok(order.into_iter().map(|(_, i)| i).collect())
}

/// Joins the parts of one shadow set (the files of `--shard K/M` for K = 0..M−1, in any
/// order) into exactly the bytes of the unsharded file: the header of shard 0/1, then every
/// record in index order. Every part is checked as [`verify`] does.
///
/// # Errors
///
/// [`Error::InvalidCount`] `parts` if none is given; those of [`verify`] for each part;
/// [`Error::Inconsistent`] for parts of different sets or shard counts (value: the part's
/// position in `parts`, from 0), a shard given twice or missing (value: K).
pub fn merge(parts: &[&[u8]]) -> Result<Vec<u8>> {
    let mut headers = Vec::with_capacity(parts.len());
    for part in parts {
        headers.push(verify(part)?);
    }
    let order = merge_order(&headers)?;
    let Some(first) = headers.first() else {
        return Err(Error::InvalidCount {
            name: "parts",
            value: 0,
            expected: ">= 1 shadow-set part",
        });
    };
    let count = first.shard.count();
    // (shard K, the part's bytes after its header), in the order of K
    let mut order: Vec<(u64, &[u8])> = order
        .iter()
        .enumerate()
        .map(|(k, &i)| {
            let body = headers
                .get(i)
                .and_then(|h| usize::try_from(h.header_len).ok())
                .and_then(|start| parts.get(i).and_then(|p| p.get(start..)))
                .unwrap_or_default();
            (k as u64, body)
        })
        .collect();
    let spec = &first.spec;
    let record_len = usize::try_from(spec.record_len()).unwrap_or(usize::MAX);
    let mut out = header_bytes(spec, Shard::WHOLE);
    out.reserve(order.iter().map(|(_, b)| b.len()).sum());
    // verified: part K holds exactly the records of shard K/M, so none of these fails
    let short = || {
        bad(
            "shadow-set part holds fewer records than its header says (value: the model index)",
            0.0,
        )
    };
    for i in 0..spec.total {
        let rest = &mut order.get_mut((i % count) as usize).ok_or_else(short)?.1;
        let (rec, tail) = rest.split_at_checked(record_len).ok_or_else(short)?;
        out.extend_from_slice(rec);
        *rest = tail;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    fn spec(total: u64) -> ShadowSetSpec {
        ShadowSetSpec::new(String::from("arch=3-1;steps=2;seed=9"), 0xfeed, total, 3).unwrap()
    }

    fn model(i: u64) -> ShadowModel {
        ShadowModel {
            index: i,
            target: 100 + i as u32,
            params: vec![i as f64, -0.5 * i as f64, 1e-300],
        }
    }

    fn part(s: &ShadowSetSpec, k: u64, m: u64) -> Vec<u8> {
        let shard = Shard::new(k, m).unwrap();
        let models: Vec<ShadowModel> = shard.trials(s.total).map(model).collect();
        encode(s, shard, &models).unwrap()
    }

    /// The `what` of an `Error::Inconsistent` (panics on another variant: tests only).
    fn what(e: Error) -> &'static str {
        match e {
            Error::Inconsistent { what, .. } => what,
            other => panic!("not Inconsistent: {other:?}"),
        }
    }

    #[test]
    fn a_whole_set_round_trips_and_its_header_reads_as_text() {
        let s = spec(5);
        let bytes = part(&s, 0, 1);
        let (shard, models) = decode(&bytes, &s).unwrap();
        assert_eq!(shard, Shard::WHOLE);
        assert_eq!(models, (0..5).map(model).collect::<Vec<_>>());
        let h = peek_header(&bytes).unwrap();
        assert_eq!(h.file_len(), bytes.len() as u64);
        assert_eq!(h.records(), 5);
        assert_eq!(s.record_len(), 16 + 24);
        let text = core::str::from_utf8(&bytes[..h.header_len as usize]).unwrap();
        assert!(text.starts_with("reconbound shadow set, format 1\nfingerprint: "));
        assert!(text.contains("\nmodels: 5\nparameters: 3\nshard: 0/1\nrecords: 5 of 40 bytes\ndescription: arch=3-1;steps=2;seed=9\nheader crc32: "));
        assert_eq!(text.lines().count(), 8);
    }

    #[test]
    fn the_fingerprint_follows_the_description_and_the_data() {
        let a = spec(5);
        let other_data = ShadowSetSpec::new(a.description.clone(), 0xfeee, 5, 3).unwrap();
        let other_config =
            ShadowSetSpec::new(String::from("arch=3-1;steps=3;seed=9"), 0xfeed, 5, 3).unwrap();
        assert_ne!(a.fingerprint, other_data.fingerprint);
        assert_ne!(a.fingerprint, other_config.fingerprint);
        assert_eq!(a, spec(5));
    }

    #[test]
    fn three_parts_merge_into_the_bytes_of_the_unsharded_set_in_any_order() {
        for total in [1, 2, 3, 7, 8] {
            let s = spec(total);
            let whole = part(&s, 0, 1);
            let p: Vec<Vec<u8>> = (0..3).map(|k| part(&s, k, 3)).collect();
            for perm in [[0, 1, 2], [2, 0, 1], [1, 2, 0]] {
                let parts: Vec<&[u8]> = perm.iter().map(|&k| p[k].as_slice()).collect();
                assert_eq!(
                    merge(&parts).unwrap(),
                    whole,
                    "total {total}, order {perm:?}"
                );
            }
            // a whole set merges into itself; each part decodes to its shard's models
            assert_eq!(merge(&[&whole]).unwrap(), whole);
            for (k, bytes) in p.iter().enumerate() {
                let (shard, models) = decode(bytes, &s).unwrap();
                assert_eq!(shard, Shard::new(k as u64, 3).unwrap());
                let idx: Vec<u64> = models.iter().map(|m| m.index).collect();
                assert_eq!(idx, shard.trials(total).collect::<Vec<_>>());
            }
        }
    }

    #[test]
    fn every_truncation_and_every_appended_byte_is_refused() {
        let s = spec(4);
        let bytes = part(&s, 1, 2);
        for len in 0..bytes.len() {
            assert!(
                decode(&bytes[..len], &s).is_err(),
                "prefix of {len} bytes accepted"
            );
            assert!(merge(&[&part(&s, 0, 2), &bytes[..len]]).is_err(), "{len}");
        }
        let h = peek_header(&bytes).unwrap();
        let e = decode(&bytes[..bytes.len() - 1], &s).unwrap_err();
        assert!(what(e).contains("truncated"), "{e}");
        let e = decode(&bytes[..h.header_len as usize - 1], &s).unwrap_err();
        assert!(what(e).contains("ends inside its header"), "{e}");
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(what(decode(&longer, &s).unwrap_err()).contains("after its last record"));
    }

    #[test]
    fn every_flipped_byte_is_refused() {
        // The CRC-32 of the header and of each record detects every one-byte change; a
        // change of the first line is another magic or version.
        let s = spec(3);
        let bytes = part(&s, 0, 1);
        for i in 0..bytes.len() {
            for bit in [0x01u8, 0x80] {
                let mut b = bytes.clone();
                b[i] ^= bit;
                assert!(decode(&b, &s).is_err(), "byte {i} ^ {bit:#x} accepted");
                assert!(verify(&b).is_err(), "byte {i} ^ {bit:#x} verified");
                assert!(merge(&[&b]).is_err(), "byte {i} ^ {bit:#x} merged");
            }
        }
        let h = peek_header(&bytes).unwrap().header_len as usize;
        let mut b = bytes.clone();
        b[h + 20] ^= 1;
        assert!(what(decode(&b, &s).unwrap_err()).contains("CRC-32"));
    }

    #[test]
    fn another_version_magic_or_canonical_form_is_refused() {
        let s = spec(2);
        let text = String::from_utf8_lossy(&part(&s, 0, 1)).into_owned();
        let v2 = text.replacen("format 1\n", "format 2\n", 1);
        let e = decode(v2.as_bytes(), &s).unwrap_err();
        assert!(what(e).contains("another format version"), "{e}");
        assert!(matches!(e, Error::Inconsistent { value, .. } if value == 2.0));
        let e = decode(b"PK\x03\x04 not a shadow set", &s).unwrap_err();
        assert!(what(e).contains("not a RecoNN shadow set"));
        // a number spelt otherwise, with its header CRC fixed: not canonical
        let h = peek_header(text.as_bytes()).unwrap().header_len as usize;
        let head = &text[..h];
        let body = &text.as_bytes()[h..];
        let crc_at = head.find("header crc32: ").unwrap();
        let respelt = head[..crc_at].replacen("models: 2\n", "models: +2\n", 1);
        let mut b = respelt.clone().into_bytes();
        b.extend_from_slice(
            format!("header crc32: {:08x}\n", crc32(respelt.as_bytes())).as_bytes(),
        );
        b.extend_from_slice(body);
        let e = decode(&b, &s).unwrap_err();
        assert!(what(e).contains("canonical"), "{e}");
    }

    #[test]
    fn a_set_of_another_run_is_refused_naming_what_differs() {
        let s = spec(3);
        let bytes = part(&s, 0, 1);
        let other_data = ShadowSetSpec::new(s.description.clone(), 0xbeef, 3, 3).unwrap();
        assert!(what(decode(&bytes, &other_data).unwrap_err()).contains("other data"));
        let other_config =
            ShadowSetSpec::new(String::from("arch=3-1;steps=5;seed=9"), 0xfeed, 3, 3).unwrap();
        let e = decode(&bytes, &other_config).unwrap_err();
        assert!(what(e).contains("another configuration"), "{e}");
        assert!(matches!(e, Error::Inconsistent { value, .. } if value == 15.0));
        let mut more = s.clone();
        more.total = 4;
        assert!(what(decode(&bytes, &more).unwrap_err()).contains("number of models"));
        let mut wider = s.clone();
        wider.param_len = 4;
        assert!(what(decode(&bytes, &wider).unwrap_err()).contains("parameter count"));
    }

    #[test]
    fn a_non_finite_parameter_or_an_index_out_of_order_is_refused_even_with_its_crc() {
        let s = spec(3);
        let bytes = part(&s, 0, 1);
        let h = peek_header(&bytes).unwrap().header_len as usize;
        let rl = s.record_len() as usize;
        let fix_crc = |b: &mut Vec<u8>, r: usize| {
            let at = h + r * rl;
            let crc = crc32(&b[at..at + rl - 4]);
            b[at + rl - 4..at + rl].copy_from_slice(&crc.to_le_bytes());
        };
        let mut nan = bytes.clone();
        nan[h + rl + 12..h + rl + 20].copy_from_slice(&f64::NAN.to_bits().to_le_bytes());
        fix_crc(&mut nan, 1);
        assert!(what(decode(&nan, &s).unwrap_err()).contains("non-finite"));
        assert!(what(verify(&nan).unwrap_err()).contains("non-finite"));
        let mut swapped = bytes.clone();
        swapped[h + rl] = 2;
        fix_crc(&mut swapped, 1);
        assert!(what(decode(&swapped, &s).unwrap_err()).contains("next index"));
    }

    #[test]
    fn missing_repeated_or_foreign_parts_are_refused() {
        let s = spec(7);
        let p: Vec<Vec<u8>> = (0..3).map(|k| part(&s, k, 3)).collect();
        let e = merge(&[&p[0], &p[2]]).unwrap_err();
        assert!(what(e).contains("missing"), "{e}");
        assert!(matches!(e, Error::Inconsistent { value, .. } if value == 1.0));
        let e = merge(&[&p[0], &p[1]]).unwrap_err();
        assert!(
            matches!(e, Error::Inconsistent { value, .. } if value == 2.0),
            "{e}"
        );
        let e = merge(&[&p[0], &p[1], &p[1]]).unwrap_err();
        assert!(what(e).contains("twice"), "{e}");
        let e = merge(&[&p[0], &p[1], &p[2], &p[1]]).unwrap_err();
        assert!(what(e).contains("twice"), "{e}");
        let halves = part(&s, 1, 2);
        let e = merge(&[&p[0], &halves, &p[2]]).unwrap_err();
        assert!(what(e).contains("shard counts"), "{e}");
        let other = ShadowSetSpec::new(s.description.clone(), 1, 7, 3).unwrap();
        let e = merge(&[&p[0], &part(&other, 1, 3), &p[2]]).unwrap_err();
        assert!(what(e).contains("different sets"), "{e}");
        assert!(matches!(
            merge(&[]),
            Err(Error::InvalidCount { name: "parts", .. })
        ));
    }

    #[test]
    fn the_encoder_refuses_what_the_file_could_not_hold() {
        let s = spec(3);
        let mut enc = Encoder::new(&s, Shard::new(1, 2).unwrap()).unwrap();
        assert_eq!(enc.next_index(), Some(1));
        assert!(what(enc.record(&model(0)).unwrap_err()).contains("index order"));
        let mut short = model(1);
        short.params.pop();
        assert!(what(enc.record(&short).unwrap_err()).contains("parameter count"));
        let mut inf = model(1);
        inf.params[2] = f64::INFINITY;
        assert!(what(enc.record(&inf).unwrap_err()).contains("non-finite"));
        assert!(what(enc.finish().unwrap_err()).contains("missing"));
        assert!(enc.record(&model(1)).is_ok());
        assert_eq!(enc.next_index(), None);
        assert!(enc.finish().is_ok());
        assert!(what(enc.record(&model(3)).unwrap_err()).contains("after the last"));
        for (desc, total, p, name) in [
            ("a\nb", 3, 3, "description"),
            ("ok", 0, 3, "total"),
            ("ok", MAX_MODELS + 1, 3, "total"),
            ("ok", 3, 0, "param_len"),
            ("ok", 3, MAX_PARAMS + 1, "param_len"),
        ] {
            let e = ShadowSetSpec::new(String::from(desc), 0, total, p).unwrap_err();
            assert_eq!(e.parameter(), Some(name), "{e}");
        }
        let long = "x".repeat(MAX_DESCRIPTION_BYTES + 1);
        assert!(ShadowSetSpec::new(long, 0, 3, 3).is_err());
        let at_cap = "x".repeat(MAX_DESCRIPTION_BYTES);
        let big = ShadowSetSpec::new(at_cap, 0, 2, 3).unwrap();
        let bytes = encode(&big, Shard::WHOLE, &[model(0), model(1)]).unwrap();
        assert!(peek_header(&bytes).unwrap().header_len as usize <= MAX_HEADER_BYTES);
        assert_eq!(decode(&bytes, &big).unwrap().1.len(), 2);
    }

    #[test]
    fn a_header_is_read_from_a_prefix_of_the_file() {
        let s = spec(6);
        let bytes = part(&s, 2, 4);
        let h = peek_header(&bytes).unwrap();
        let head = &bytes[..h.header_len as usize];
        assert_eq!(peek_header(head).unwrap(), h);
        assert_eq!(h.shard, Shard::new(2, 4).unwrap());
        assert_eq!(h.records(), 1);
        // shards beyond the set's size hold no record but are still needed by merge
        let s = spec(2);
        let p: Vec<Vec<u8>> = (0..4).map(|k| part(&s, k, 4)).collect();
        assert_eq!(peek_header(&p[3]).unwrap().records(), 0);
        let refs: Vec<&[u8]> = p.iter().map(Vec::as_slice).collect();
        assert_eq!(merge(&refs).unwrap(), part(&s, 0, 1));
        assert!(merge(&refs[..3]).is_err());
    }
}
