//! How the index spells a file or folder name: text, with a byte that is
//! not UTF-8 as `\xNN`, so a name on disk is never lost (documents' paths
//! and the `roots` table alike), and the way back to the name on disk.

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// One file or folder name as the index spells it: its stray bytes as `\xNN`.
pub fn name_in_index(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        out.push_str(chunk.valid());
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02X}"));
        }
    }
    out
}

/// The name on disk behind one name of an index path: `name_in_index`
/// undone, each `\xNN` back to its byte, so a citation's link opens the
/// file itself. A name that merely holds the text `\xNN` (a real backslash)
/// is kept as written: the decoding is used only when spelling it again
/// gives the same name back.
pub fn name_on_disk(name: &str) -> std::ffi::OsString {
    use std::os::unix::ffi::OsStringExt;
    let upper_hex = |b: &u8| b.is_ascii_digit() || (b'A'..=b'F').contains(b);
    let text = name.as_bytes();
    let mut bytes = Vec::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        match text.get(i..i + 4) {
            Some([b'\\', b'x', hi, lo]) if upper_hex(hi) && upper_hex(lo) => {
                let hex = |d: u8| if d.is_ascii_digit() { d - b'0' } else { d - b'A' + 10 };
                bytes.push((hex(*hi) << 4) | hex(*lo));
                i += 4;
            }
            _ => {
                bytes.push(text[i]);
                i += 1;
            }
        }
    }
    if name_in_index(&bytes) == name { std::ffi::OsString::from_vec(bytes) } else { name.into() }
}

/// A root folder as the `roots` table spells it: a byte that is not UTF-8 as
/// `\xNN`, as document paths spell a name, so nothing of the path is lost.
pub fn dir_in_index(dir: &Path) -> String {
    name_in_index(dir.as_os_str().as_bytes())
}

/// The folder on disk behind a `roots` row's path: `dir_in_index` undone.
pub fn dir_on_disk(text: &str) -> PathBuf {
    PathBuf::from(name_on_disk(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_in_the_index_maps_back_to_the_bytes_on_disk() {
        use std::os::unix::ffi::OsStrExt;
        for bytes in [&b"caf\xE9.md"[..], b"back\\slash.md", b"my notes.md", "한글.md".as_bytes(), b"\xFF\xFE", b"a\\xZZ"] {
            let name = name_in_index(bytes);
            assert_eq!(name_on_disk(&name).as_bytes(), bytes, "{name}");
        }
        assert_eq!(name_in_index(b"caf\xE9.md"), "caf\\xE9.md");
        // The text `\xC3\xA9` decodes to `é`, which the index spells as itself: not a stray byte.
        assert_eq!(name_on_disk("\\xC3\\xA9.md").as_bytes(), b"\\xC3\\xA9.md");
        assert_eq!(name_on_disk("caf\\xe9.md").as_bytes(), b"caf\\xe9.md", "the index writes upper-case hex");
    }
}
