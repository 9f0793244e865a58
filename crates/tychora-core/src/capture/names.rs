//! File names as identities: the exact bytes of a path, kept as a reversible text form.
//!
//! On Unix a file name is any byte string without `/` and NUL, so two names that differ only in
//! invalid UTF-8 bytes (`bad\xff.md`, `bad\xfe.md`) are different files. A lossy conversion
//! (`to_string_lossy`) maps both to `bad\u{FFFD}.md`: they would share one source and one
//! revision history. The text form here is injective instead: valid UTF-8 is kept, each byte of
//! an invalid sequence becomes `\xNN`, and a literal backslash is doubled so that no real name
//! can spell an escape. Names without backslashes or invalid bytes (nearly all) are unchanged.
//!
//! On Windows paths are UTF-16; unpaired surrogates are shown lossily (no capture root there has
//! produced one in practice, and the `\` separator rules out the backslash scheme).

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

/// The text form of a name or path: exact for valid UTF-8 without backslashes, escaped otherwise.
#[cfg(unix)]
#[must_use]
pub fn encode(name: &OsStr) -> String {
    use std::fmt::Write as _;
    use std::os::unix::ffi::OsStrExt;
    let bytes = name.as_bytes();
    let mut out = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        let valid = chunk.valid();
        if valid.contains('\\') {
            out.push_str(&valid.replace('\\', "\\\\"));
        } else {
            out.push_str(valid);
        }
        for b in chunk.invalid() {
            let _ = write!(out, "\\x{b:02x}");
        }
    }
    out
}

/// The text form of a name or path (Windows: lossy for unpaired surrogates, see the module doc).
#[cfg(not(unix))]
#[must_use]
pub fn encode(name: &OsStr) -> String {
    name.to_string_lossy().into_owned()
}

/// The name or path a text form stands for: the inverse of [`encode`].
#[cfg(unix)]
#[must_use]
pub fn decode(text: &str) -> OsString {
    use std::os::unix::ffi::OsStringExt;
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' {
            if bytes.get(i + 1) == Some(&b'\\') {
                out.push(b'\\');
                i += 2;
                continue;
            }
            if bytes.get(i + 1) == Some(&b'x')
                && let Some(byte) = bytes
                    .get(i + 2..i + 4)
                    .and_then(|h| std::str::from_utf8(h).ok())
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
            {
                out.push(byte);
                i += 4;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    OsString::from_vec(out)
}

/// The name or path a text form stands for (Windows: the text itself).
#[cfg(not(unix))]
#[must_use]
pub fn decode(text: &str) -> OsString {
    OsString::from(text)
}

/// The text form of a whole path (roots, `file://` URIs).
#[must_use]
pub fn encode_path(path: &Path) -> String {
    encode(path.as_os_str())
}

/// The path a stored text form stands for.
#[must_use]
pub fn decode_path(text: &str) -> PathBuf {
    PathBuf::from(decode(text))
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::ffi::OsStrExt;

    #[test]
    fn names_differing_in_invalid_bytes_stay_distinct_and_round_trip() {
        let names: [&[u8]; 9] = [
            b"plain.md",
            b"bad\xff.md",
            b"bad\xfe.md",
            b"bad\\xff.md",
            b"a\\",
            b"a\\\xff",
            b"\\\\x41",
            "caf\u{e9} \u{1b}[2J.md".as_bytes(),
            b"\xc3",
        ];
        let encoded: Vec<String> = names.iter().map(|n| encode(OsStr::from_bytes(n))).collect();
        assert_eq!(encoded[0], "plain.md");
        assert_eq!(encoded[1], "bad\\xff.md");
        assert_eq!(encoded[2], "bad\\xfe.md");
        assert_eq!(encoded[3], "bad\\\\xff.md");
        assert_eq!(
            encoded[7], "caf\u{e9} \u{1b}[2J.md",
            "valid UTF-8 is kept exactly"
        );
        let unique: std::collections::BTreeSet<&String> = encoded.iter().collect();
        assert_eq!(unique.len(), names.len(), "{encoded:?}");
        for (name, text) in names.iter().zip(&encoded) {
            assert_eq!(decode(text).as_bytes(), *name, "{text}");
        }
    }
}
