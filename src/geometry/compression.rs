//! GeometryDefinitionCompressionType: None, GZip, Deflate, Zip (the archive's first file entry).

use std::io::Read;

/// The most bytes one compressed geometry may decompress to.
pub const MAX_DECODED: usize = 256 << 20;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Compression {
    #[default]
    None,
    GZip,
    Deflate,
    Zip,
}

impl Compression {
    pub const NAMES: &'static str = "None, GZip, Deflate, Zip";

    pub fn parse(s: &str) -> Option<Compression> {
        let k = crate::lenient::enum_key(s);
        Some(match k.as_str() {
            "" | "none" | "0" => Compression::None,
            "gzip" | "gz" | "1" => Compression::GZip,
            "deflate" | "2" => Compression::Deflate,
            "zip" | "3" => Compression::Zip,
            _ => return None,
        })
    }

    /// Decompresses `data`; the error says what was wrong with it. Output beyond
    /// `MAX_DECODED` is refused (a small compressed bomb must not exhaust memory).
    pub fn decode(self, data: &[u8]) -> Result<Vec<u8>, String> {
        let mut out = Vec::new();
        let limit = MAX_DECODED as u64 + 1;
        match self {
            Compression::None => return Ok(data.to_vec()),
            Compression::GZip => {
                flate2::read::MultiGzDecoder::new(data)
                    .take(limit)
                    .read_to_end(&mut out)
                    .map_err(|e| format!("not valid GZip data ({e})"))?;
            }
            Compression::Deflate => {
                // .NET's DeflateStream writes raw deflate; accept zlib-wrapped data as well.
                if flate2::read::DeflateDecoder::new(data)
                    .take(limit)
                    .read_to_end(&mut out)
                    .is_err()
                    || out.is_empty()
                {
                    out.clear();
                    flate2::read::ZlibDecoder::new(data)
                        .take(limit)
                        .read_to_end(&mut out)
                        .map_err(|e| format!("not valid Deflate data ({e})"))?;
                }
            }
            Compression::Zip => {
                let mut archive = zip::ZipArchive::new(std::io::Cursor::new(data))
                    .map_err(|e| format!("not a valid Zip archive ({e})"))?;
                let index = (0..archive.len())
                    .find(|&i| archive.by_index(i).map(|f| f.is_file()).unwrap_or(false))
                    .ok_or("the Zip archive holds no file")?;
                let f = archive
                    .by_index(index)
                    .map_err(|e| format!("cannot read the Zip entry ({e})"))?;
                f.take(limit)
                    .read_to_end(&mut out)
                    .map_err(|e| format!("cannot read the Zip entry ({e})"))?;
            }
        }
        if out.len() > MAX_DECODED {
            return Err(format!(
                "decompresses to more than {} MiB, the most one geometry may take",
                MAX_DECODED >> 20
            ));
        }
        Ok(out)
    }
}
