//! Reading the files a scenario names (the scenario itself, CDF tables, flow
//! lists): only regular files, and never more than a stated number of bytes,
//! so that `cdf = "/dev/zero"`, a FIFO or a huge file is a clear error
//! instead of a hang or an exhausted memory.

use std::io::Read;
use std::path::Path;

/// The largest CDF table read: 16 MiB. The largest bundled table has 843
/// points (25 KB); 16 MiB holds over a million points.
pub const MAX_INPUT_FILE_BYTES: u64 = 16 << 20;

/// The largest flow file (`workload.flow_file`) read: 64 MiB, about three
/// million flows (HPCC's 10 ms fat-tree trace has 6,706).
pub const MAX_FLOW_FILE_BYTES: u64 = 64 << 20;

/// Reads `path` as UTF-8 text if it is a regular file of at most `cap` bytes.
///
/// The error says what is wrong and how to fix it, without the key (the
/// caller knows it): "`/dev/zero` is not a regular file (a character
/// device); give the path of a file", "... is 225.0 MB, above the 16 MiB
/// limit". The size is checked before reading and again while reading (a
/// file may grow), so no more than `cap + 1` bytes are ever held.
pub fn read_input_file(path: &Path, cap: u64) -> Result<String, String> {
    let shown = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let shown = shown.display();
    // `metadata` follows symbolic links, so a link to a regular file is fine.
    let meta = std::fs::metadata(path).map_err(|e| format!("`{shown}` cannot be read: {e}"))?;
    if !meta.is_file() {
        return Err(format!(
            "`{shown}` is not a regular file ({}); give the path of a file",
            kind_of(&meta)
        ));
    }
    let too_big = |size: u64| {
        format!(
            "`{shown}` is {}, above the limit of {} for this kind of file; \
             use a smaller file",
            human_bytes(size),
            human_bytes(cap)
        )
    };
    if meta.len() > cap {
        return Err(too_big(meta.len()));
    }
    let file = std::fs::File::open(path).map_err(|e| format!("`{shown}` cannot be read: {e}"))?;
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(cap + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("`{shown}` cannot be read: {e}"))?;
    if bytes.len() as u64 > cap {
        return Err(too_big(bytes.len() as u64));
    }
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "`{shown}` is not UTF-8 text (invalid byte at offset {}); \
             give a text file",
            e.utf8_error().valid_up_to()
        )
    })
}

fn kind_of(meta: &std::fs::Metadata) -> &'static str {
    let t = meta.file_type();
    if t.is_dir() {
        return "a directory";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    "not a file"
}

/// `16 MiB`, `225.0 MB`, `512 B`.
fn human_bytes(b: u64) -> String {
    if b >= 1 << 20 && b % (1 << 20) == 0 {
        format!("{} MiB", b >> 20)
    } else if b >= 1_000_000 {
        format!("{:.1} MB", b as f64 / 1e6)
    } else {
        format!("{b} B")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(tag: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("incast-files-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn regular_files_are_read_others_are_refused() {
        let d = temp_dir("kinds");
        let f = d.join("ok.txt");
        std::fs::write(&f, "0 0\n1 1\n").unwrap();
        assert_eq!(read_input_file(&f, 100).unwrap(), "0 0\n1 1\n");
        let e = read_input_file(&d, 100).unwrap_err();
        assert!(e.contains("not a regular file (a directory)"), "{e}");
        #[cfg(unix)]
        {
            let e = read_input_file(Path::new("/dev/zero"), 100).unwrap_err();
            assert!(e.contains("a character device"), "{e}");
            let e = read_input_file(Path::new("/dev/urandom"), 100).unwrap_err();
            assert!(e.contains("a character device"), "{e}");
            // A FIFO is refused before it is opened (opening it would block).
            let fifo = d.join("fifo");
            let _ = std::fs::remove_file(&fifo);
            let made = std::process::Command::new("mkfifo").arg(&fifo).status();
            if made.is_ok_and(|s| s.success()) {
                let e = read_input_file(&fifo, 100).unwrap_err();
                assert!(e.contains("a FIFO"), "{e}");
            }
        }
        let e = read_input_file(&d.join("missing"), 100).unwrap_err();
        assert!(e.contains("cannot be read"), "{e}");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn the_size_cap_is_exact_and_stated() {
        let d = temp_dir("cap");
        let f = d.join("big.txt");
        std::fs::write(&f, vec![b'1'; 1000]).unwrap();
        assert_eq!(read_input_file(&f, 1000).unwrap().len(), 1000);
        let e = read_input_file(&f, 999).unwrap_err();
        assert!(e.contains("is 1000 B, above the limit of 999 B"), "{e}");
        let e = read_input_file(&f, 16 << 20);
        assert!(e.is_ok());
        std::fs::write(&f, [0xff, 0xfe, b'\n']).unwrap();
        let e = read_input_file(&f, 100).unwrap_err();
        assert!(e.contains("not UTF-8"), "{e}");
        std::fs::remove_dir_all(&d).unwrap();
    }
}
