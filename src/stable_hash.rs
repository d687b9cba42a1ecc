//! Hashes whose value is fixed by a published specification, for
//! everything dashfloat keeps on disk: the hash a checkpoint records of
//! the content a turn left (so `/undo` can tell a file changed since), and
//! the checksum of each record of a session's journal. `std`'s
//! `DefaultHasher` promises nothing about its values across Rust
//! releases: a hash saved by one build and compared by another must not
//! come from it. ADR 0040.
//!
//! New values are XXH3-64 with seed 0 (the `xxhash-rust` crate). Session
//! files written before schema 2 hold SipHash-1-3 values with keys 0 and
//! 0, what `DefaultHasher::new()` computes today, over the content's bytes
//! and nothing else (no length prefix); they are read as such and compared
//! by hashing the file again with the same function (the `siphasher`
//! crate). Imports nothing from the rest of the crate.

use std::hash::Hasher;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A hash of file content, with the function that made it: a value is
/// only ever compared with one made by the same function.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ContentHash {
    /// XXH3-64, seed 0: what this dashfloat makes.
    Xxh3(u64),
    /// SipHash-1-3, keys 0 and 0: read from session files of schema 1,
    /// whose checkpoints recorded what `DefaultHasher::new()` gave.
    Sip13(u64),
}

/// Which function a [`ContentHash`] comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HashKind {
    /// XXH3-64, seed 0.
    Xxh3,
    /// SipHash-1-3, keys 0 and 0.
    Sip13,
}

impl ContentHash {
    /// The function that made it.
    pub fn kind(self) -> HashKind {
        match self {
            ContentHash::Xxh3(_) => HashKind::Xxh3,
            ContentHash::Sip13(_) => HashKind::Sip13,
        }
    }
}

/// The hash of `data`, as this dashfloat makes it.
pub fn content_hash(data: &[u8]) -> ContentHash {
    ContentHash::Xxh3(xxhash_rust::xxh3::xxh3_64(data))
}

/// The hash of `data` by the function `kind`.
pub fn hash_with(kind: HashKind, data: &[u8]) -> ContentHash {
    match kind {
        HashKind::Xxh3 => content_hash(data),
        HashKind::Sip13 => {
            let mut hasher = StreamingHash::new(kind);
            hasher.write(data);
            hasher.finish()
        }
    }
}

/// A hash being fed in pieces: the same value as hashing the pieces
/// joined, however they are cut.
pub enum StreamingHash {
    /// XXH3-64's streaming state.
    Xxh3(Box<xxhash_rust::xxh3::Xxh3Default>),
    /// SipHash-1-3's.
    Sip13(siphasher::sip::SipHasher13),
}

impl StreamingHash {
    /// A hash of the kind `kind`, fed nothing yet.
    pub fn new(kind: HashKind) -> Self {
        match kind {
            HashKind::Xxh3 => StreamingHash::Xxh3(Box::default()),
            HashKind::Sip13 => {
                StreamingHash::Sip13(siphasher::sip::SipHasher13::new_with_keys(0, 0))
            }
        }
    }

    /// Feeds the next piece.
    pub fn write(&mut self, piece: &[u8]) {
        match self {
            StreamingHash::Xxh3(state) => state.update(piece),
            // The bytes alone, as `DefaultHasher::write` took them.
            StreamingHash::Sip13(state) => state.write(piece),
        }
    }

    /// The hash of everything fed.
    pub fn finish(&self) -> ContentHash {
        match self {
            StreamingHash::Xxh3(state) => ContentHash::Xxh3(state.digest()),
            StreamingHash::Sip13(state) => ContentHash::Sip13(state.finish()),
        }
    }
}

/// The checksum of a journal record's bytes (XXH3-64, seed 0).
pub fn checksum(bytes: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(bytes)
}

/// How a hash is written in a session file: `{"xxh3": N}` or
/// `{"sip13": N}`.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Tagged {
    Xxh3(u64),
    Sip13(u64),
}

/// How a hash is read: tagged, or a bare number (schema 1, where every
/// hash was SipHash-1-3).
#[derive(Deserialize)]
#[serde(untagged)]
enum Written {
    Bare(u64),
    Tagged(Tagged),
}

impl Serialize for ContentHash {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match *self {
            ContentHash::Xxh3(value) => Tagged::Xxh3(value),
            ContentHash::Sip13(value) => Tagged::Sip13(value),
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for ContentHash {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(match Written::deserialize(deserializer)? {
            Written::Bare(value) | Written::Tagged(Tagged::Sip13(value)) => {
                ContentHash::Sip13(value)
            }
            Written::Tagged(Tagged::Xxh3(value)) => ContentHash::Xxh3(value),
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// The values are the specifications', fixed here so no upgrade of a
    /// crate or of Rust can change them unseen: XXH3-64 of the empty input
    /// is the reference's `2D06800538D394C2`.
    #[test]
    fn the_hashes_have_the_values_their_specifications_give() {
        assert_eq!(content_hash(b""), ContentHash::Xxh3(0x2d06_8005_38d3_94c2));
        assert_eq!(
            content_hash(b"hello world\n"),
            ContentHash::Xxh3(XXH3_OF_HELLO_WORLD)
        );
        let mut sip = StreamingHash::new(HashKind::Sip13);
        sip.write(b"hello ");
        sip.write(b"world\n");
        assert_eq!(sip.finish(), ContentHash::Sip13(SIP13_OF_HELLO_WORLD));
    }

    /// XXH3-64 of `hello world\n`.
    const XXH3_OF_HELLO_WORLD: u64 = 0xd42f_7ed4_b73c_6bde;
    /// SipHash-1-3 (keys 0, 0) of `hello world\n`: what
    /// `DefaultHasher::new()` gave for it with Rust 1.95.
    const SIP13_OF_HELLO_WORLD: u64 = 0x5b17_85c3_3500_f9a3;

    #[test]
    fn pieces_hash_as_the_whole() {
        let data: Vec<u8> = (0..200_000u32).map(|i| (i * 7 % 251) as u8).collect();
        for kind in [HashKind::Xxh3, HashKind::Sip13] {
            let mut whole = StreamingHash::new(kind);
            whole.write(&data);
            let mut cut = StreamingHash::new(kind);
            for piece in data.chunks(65_536 - 3) {
                cut.write(piece);
            }
            assert_eq!(whole.finish(), cut.finish());
            assert_eq!(whole.finish().kind(), kind);
        }
        let mut streamed = StreamingHash::new(HashKind::Xxh3);
        streamed.write(&data);
        assert_eq!(streamed.finish(), content_hash(&data));
    }

    #[test]
    fn a_bare_number_is_read_as_the_old_hash_and_a_tagged_one_as_tagged() {
        let read = |text: &str| serde_json::from_str::<ContentHash>(text).unwrap();
        assert_eq!(read("1234567"), ContentHash::Sip13(1_234_567));
        assert_eq!(read(r#"{"xxh3":5}"#), ContentHash::Xxh3(5));
        assert_eq!(read(r#"{"sip13":5}"#), ContentHash::Sip13(5));
        for hash in [ContentHash::Xxh3(u64::MAX), ContentHash::Sip13(0)] {
            assert_eq!(read(&serde_json::to_string(&hash).unwrap()), hash);
        }
        assert!(serde_json::from_str::<ContentHash>(r#"{"md5":5}"#).is_err());
    }
}
