//! Versioned binary encoding for everything that crosses a process boundary or
//! is persisted: units, summaries, family parameters.
//!
//! Every blob starts with one format byte so that a future layout change is
//! detected instead of silently misread; decoding is size-limited so that a
//! malformed message cannot make the decoder allocate without bound.

use serde::{de::DeserializeOwned, Serialize};

/// The first byte of every encoded blob. Bump on any incompatible change of
/// the encoded types.
pub const FORMAT_VERSION: u8 = 1;

/// Largest blob we agree to decode (64 MiB).
pub const MAX_BLOB_BYTES: usize = 64 << 20;

/// Why a blob could not be decoded.
#[derive(Debug, thiserror::Error)]
pub enum CodecError {
    #[error("empty blob")]
    Empty,
    #[error("blob has format version {found}, this build reads version {FORMAT_VERSION}")]
    Version { found: u8 },
    #[error("blob of {0} bytes exceeds the {MAX_BLOB_BYTES} byte limit")]
    TooLarge(usize),
    #[error("malformed blob: {0}")]
    Malformed(String),
    #[error("{0} trailing bytes after the encoded value")]
    Trailing(usize),
}

fn config() -> impl bincode::config::Config {
    bincode::config::standard().with_limit::<MAX_BLOB_BYTES>()
}

/// Encodes `value` as `[FORMAT_VERSION, bincode...]`.
pub fn encode<T: Serialize>(value: &T) -> Vec<u8> {
    let mut out = vec![FORMAT_VERSION];
    // Serialising plain data into a Vec cannot fail for our types (no maps
    // with non-string keys, no custom serialisers that error).
    bincode::serde::encode_into_std_write(value, &mut out, config())
        .expect("serialising into memory cannot fail");
    out
}

/// Decodes a blob written by [`encode`], rejecting wrong versions, oversized
/// input and trailing garbage.
pub fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, CodecError> {
    let (&version, body) = bytes.split_first().ok_or(CodecError::Empty)?;
    if version != FORMAT_VERSION {
        return Err(CodecError::Version { found: version });
    }
    if body.len() > MAX_BLOB_BYTES {
        return Err(CodecError::TooLarge(body.len()));
    }
    let (value, used) = bincode::serde::decode_from_slice(body, config())
        .map_err(|e| CodecError::Malformed(e.to_string()))?;
    if used != body.len() {
        return Err(CodecError::Trailing(body.len() - used));
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_rejections() {
        let v: (u64, Vec<u8>) = (7, vec![1, 2, 3]);
        let blob = encode(&v);
        assert_eq!(decode::<(u64, Vec<u8>)>(&blob).unwrap(), v);
        assert!(matches!(
            decode::<(u64, Vec<u8>)>(&[]),
            Err(CodecError::Empty)
        ));
        let mut wrong = blob.clone();
        wrong[0] = 99;
        assert!(matches!(
            decode::<(u64, Vec<u8>)>(&wrong),
            Err(CodecError::Version { found: 99 })
        ));
        let mut long = blob.clone();
        long.push(0);
        assert!(matches!(
            decode::<(u64, Vec<u8>)>(&long),
            Err(CodecError::Trailing(1))
        ));
        assert!(decode::<(u64, Vec<u8>)>(&blob[..blob.len() - 1]).is_err());
    }
}
