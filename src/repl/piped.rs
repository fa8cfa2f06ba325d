//! The REPL with stdin not a terminal: one question or command per line,
//! each echoed after the prompt, plain text, exit at end of input.

use std::io::BufRead;
use std::sync::atomic::Ordering;
use std::sync::mpsc::RecvTimeoutError;

use anyhow::Result;

use super::{Flow, Repl};
use crate::script::one_line;

/// Reads one line of piped input into `line`, its end included: `\n`,
/// `\r\n`, or a lone `\r` (old Mac files), as ingest reads notes. A line
/// ended by `\r` is returned at once, not after waiting to see whether `\n`
/// follows: `after_cr` carries that over, so the next call skips the `\n`
/// of a `\r\n` rather than reading it as an empty line. `Ok(0)` at the end.
fn read_line(input: &mut impl BufRead, after_cr: &mut bool, line: &mut Vec<u8>) -> std::io::Result<usize> {
    let mut total = 0;
    loop {
        let buf = match input.fill_buf() {
            Ok(buf) => buf,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buf.is_empty() {
            return Ok(total);
        }
        if std::mem::take(after_cr) && buf[0] == b'\n' {
            input.consume(1);
            continue;
        }
        match buf.iter().position(|&b| b == b'\n' || b == b'\r') {
            Some(i) => {
                *after_cr = buf[i] == b'\r';
                line.extend_from_slice(&buf[..=i]);
                input.consume(i + 1);
                return Ok(total + i + 1);
            }
            None => {
                let n = buf.len();
                line.extend_from_slice(buf);
                input.consume(n);
                total += n;
            }
        }
    }
}

pub(super) fn piped(mut repl: Repl) -> Result<i32> {
    // Stdin is read on a thread, a line ahead at most: a read cannot be
    // interrupted, and Ctrl-C while waiting for the next line must stop the
    // REPL then, not after one more line has come and been run.
    let (lines, received) = std::sync::mpsc::sync_channel::<std::io::Result<Vec<u8>>>(1);
    std::thread::spawn(move || {
        let mut stdin = std::io::stdin().lock();
        let mut after_cr = false;
        loop {
            let mut bytes = Vec::new();
            let read = read_line(&mut stdin, &mut after_cr, &mut bytes);
            let end = !matches!(read, Ok(n) if n > 0);
            if lines.send(read.map(|_| bytes)).is_err() || end {
                break;
            }
        }
    });
    let mut first = true;
    loop {
        let bytes = match received.recv_timeout(std::time::Duration::from_millis(100)) {
            Ok(Ok(bytes)) if !bytes.is_empty() => bytes,
            Ok(Ok(_)) | Err(RecvTimeoutError::Disconnected) => break,
            Ok(Err(e)) => return Err(e.into()),
            Err(RecvTimeoutError::Timeout) => {
                if repl.cancel.load(Ordering::SeqCst) {
                    return Ok(130);
                }
                continue;
            }
        };
        if repl.cancel.load(Ordering::SeqCst) {
            // Ctrl-C came with this line already read: it is not run.
            return Ok(130);
        }
        // Read as bytes: a line that is not UTF-8 is an error for that line,
        // not the end of the session and of every line after it.
        let text = String::from_utf8_lossy(&bytes);
        // A script saved by a Windows editor starts with a byte-order mark:
        // it made the first line `\u{feff}:session`, asked as a question.
        let text = if std::mem::take(&mut first) { crate::script::without_bom(&text) } else { &text };
        let line = text.trim_end_matches(['\n', '\r']);
        if line.trim().is_empty() {
            continue;
        }
        repl.out.line(format!("{}{}", repl.prompt(), one_line(line.trim())))?;
        if std::str::from_utf8(&bytes).is_err() {
            let what = if line.trim_start().starts_with(':') { "command" } else { "question" };
            let hint = format!("give the {what} as UTF-8 text (check the terminal's or the script's encoding)");
            repl.say_error(&format!("the {what} {:?} is not valid UTF-8", line.trim()), Some(&hint));
            continue;
        }
        if let Flow::Quit = repl.handle(line) {
            break;
        }
        if repl.cancel.load(Ordering::SeqCst) {
            // Ctrl-C outside an answer: stop reading, as a script would.
            return Ok(130);
        }
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(input: &[u8], capacity: usize) -> Vec<String> {
        let mut reader = std::io::BufReader::with_capacity(capacity, input);
        let (mut after_cr, mut out) = (false, Vec::new());
        loop {
            let mut line = Vec::new();
            if read_line(&mut reader, &mut after_cr, &mut line).unwrap() == 0 {
                return out;
            }
            out.push(String::from_utf8(line).unwrap());
        }
    }

    #[test]
    fn a_lone_cr_ends_a_line_and_a_crlf_is_one_line_end_however_it_is_read() {
        let input = b"one\rtwo\r\nthree\n\rfour\r\r\nfive";
        let want = ["one\r", "two\r", "three\n", "\r", "four\r", "\r", "five"];
        for capacity in [1, 2, 3, 64] {
            assert_eq!(lines(input, capacity), want, "capacity {capacity}");
        }
    }
}
