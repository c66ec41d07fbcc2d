//! Content fingerprints, written by hand (no dependency): FNV-1a (64 bits) for the sources
//! of a build, the bytes of a dataset and the configuration of a RecoNN shadow set; CRC-32
//! for the lines of a shard file and the records of a shadow set
//! ([`crate::attacks::reconn::shadow_set`]). Needs no allocation (compiled with `alloc`,
//! whose modules use it).
//!
//! `build.rs` includes this file too (`#[path]`), so the build's source hash and the data
//! fingerprints come from one implementation.

/// FNV-1a's offset basis (64 bits).
pub const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// FNV-1a (64 bits) of `bytes`, continuing from `state` ([`FNV_OFFSET`] to start).
///
/// # Citations
/// Fowler, Noll, Vo, "FNV hash" (IETF draft-eastlake-fnv), FNV-1a with the 64-bit prime
/// 2⁴⁰ + 2⁸ + 0xb3.
pub fn fnv1a64(mut state: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        state ^= u64::from(b);
        state = state.wrapping_mul(FNV_PRIME);
    }
    state
}

const fn crc32_table() -> [u32; 256] {
    let mut table = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 {
                0xedb8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
            k += 1;
        }
        table[i] = c;
        i += 1;
    }
    table
}

const CRC32_TABLE: [u32; 256] = crc32_table();

/// CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320, as zlib's `crc32`) of `bytes`: it
/// detects every error burst of at most 32 bits, so every one-byte change of a line.
///
/// # Citations
/// ISO/IEC/IEEE 8802-3 (Ethernet FCS); `crc32("123456789") = 0xCBF43926`.
pub fn crc32(bytes: &[u8]) -> u32 {
    let mut c = 0xffff_ffffu32;
    for &b in bytes {
        let idx = usize::from((c as u8) ^ b);
        c = CRC32_TABLE.get(idx).copied().unwrap_or(0) ^ (c >> 8);
    }
    c ^ 0xffff_ffff
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32_and_fnv1a64_match_their_published_check_values() {
        // Exact integer check values (zlib's crc32; the FNV reference test vectors).
        assert_eq!(crc32(b"123456789"), 0xcbf4_3926);
        assert_eq!(crc32(b""), 0);
        assert_eq!(fnv1a64(FNV_OFFSET, b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(FNV_OFFSET, b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(FNV_OFFSET, b"foobar"), 0x8594_4171_f739_67e8);
    }
}
