//! The results file of a finished job, written atomically: a temporary file
//! in the same directory, fsync'd, renamed over the target, and the directory
//! fsync'd, so a crash leaves either the old file or the complete new one.

use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::Path;

pub fn write_results_file(path: &Path, lines: &[String]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    fs::create_dir_all(dir)?;
    let tmp = path.with_extension("txt.tmp");
    {
        let file = File::create(&tmp)?;
        let mut w = BufWriter::new(file);
        for line in lines {
            w.write_all(line.as_bytes())?;
            w.write_all(b"\n")?;
        }
        let file = w.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
    }
    fs::rename(&tmp, path)?;
    File::open(dir)?.sync_all()?;
    Ok(())
}
