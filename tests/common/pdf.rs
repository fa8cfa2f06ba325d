//! A minimal PDF writer for tests: pages of Helvetica text lines, written
//! object by object with a correct cross-reference table, so fixtures are
//! generated here rather than copied from anywhere.

/// One page: its text lines, top to bottom (empty: a page with a drawing
/// but no text, like a scan).
pub type Page<'a> = &'a [&'a str];

/// What else goes into the file.
#[derive(Default)]
pub struct Extras {
    /// Bytes of an extra (unreferenced) binary stream, to make a big file.
    pub padding: usize,
    /// A standard-security `/Encrypt` dictionary in the trailer.
    pub encrypted: bool,
}

/// A PDF string literal with `(`, `)` and `\` escaped.
fn literal(text: &str) -> String {
    let mut out = String::from("(");
    for c in text.chars() {
        if matches!(c, '(' | ')' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push(')');
    out
}

fn content(lines: &[&str]) -> Vec<u8> {
    if lines.is_empty() {
        // Vector graphics only: what a scanned page's text layer looks like.
        return b"0 0 1 rg 72 72 400 600 re f".to_vec();
    }
    let mut s = String::from("BT /F1 12 Tf 14 TL 72 740 Td\n");
    for line in lines {
        s.push_str(&literal(line));
        s.push_str(" Tj T*\n");
    }
    s.push_str("ET");
    s.into_bytes()
}

/// A PDF of `pages`, Helvetica 12 pt.
pub fn pdf(pages: &[Page]) -> Vec<u8> {
    pdf_with(pages, &Extras::default())
}

pub fn pdf_with(pages: &[Page], extras: &Extras) -> Vec<u8> {
    let mut objects: Vec<Vec<u8>> = Vec::new();
    let kids: Vec<String> = (0..pages.len()).map(|i| format!("{} 0 R", 4 + 2 * i)).collect();
    objects.push(b"<< /Type /Catalog /Pages 2 0 R >>".to_vec());
    objects.push(format!("<< /Type /Pages /Kids [{}] /Count {} >>", kids.join(" "), pages.len()).into_bytes());
    objects.push(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>".to_vec());
    for (i, lines) in pages.iter().enumerate() {
        let page = format!(
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents {} 0 R >>",
            5 + 2 * i
        );
        objects.push(page.into_bytes());
        let body = content(lines);
        let mut stream = format!("<< /Length {} >>\nstream\n", body.len()).into_bytes();
        stream.extend_from_slice(&body);
        stream.extend_from_slice(b"\nendstream");
        objects.push(stream);
    }
    if extras.padding > 0 {
        let mut stream = format!("<< /Length {} >>\nstream\n", extras.padding).into_bytes();
        // Not all zeros, so nothing along the way can shortcut it.
        stream.extend((0..extras.padding).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8));
        stream.extend_from_slice(b"\nendstream");
        objects.push(stream);
    }
    let encrypt = if extras.encrypted {
        let key = "0".repeat(64);
        objects.push(format!("<< /Filter /Standard /V 1 /R 2 /O <{key}> /U <{key}> /P -44 >>").into_bytes());
        Some(objects.len())
    } else {
        None
    };

    let mut out = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n".to_vec();
    let mut offsets = Vec::new();
    for (i, body) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n", i + 1).as_bytes());
        out.extend_from_slice(body);
        out.extend_from_slice(b"\nendobj\n");
    }
    let xref = out.len();
    out.extend_from_slice(format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes());
    for off in offsets {
        out.extend_from_slice(format!("{off:010} 00000 n \n").as_bytes());
    }
    let mut trailer = format!("trailer\n<< /Size {} /Root 1 0 R", objects.len() + 1);
    if let Some(n) = encrypt {
        trailer.push_str(&format!(" /Encrypt {n} 0 R /ID [<{id}> <{id}>]", id = "ab".repeat(16)));
    }
    trailer.push_str(&format!(" >>\nstartxref\n{xref}\n%%EOF\n"));
    out.extend_from_slice(trailer.as_bytes());
    out
}
