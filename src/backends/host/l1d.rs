//! The size of a core's level-1 data cache: past it, an elementwise loop's operands come
//! from L2, and the order it walks them in decides how much of them the cache still holds
//! (see `engine::Direction`).

use std::sync::OnceLock;

/// What to assume where the system does not say: the smallest L1d of the x86-64 and AArch64
/// cores this crate runs on (Zen 4, Skylake; Intel's newer cores have 48 KiB).
const ASSUMED: usize = 32 << 10;

/// Bytes of the first core's level-1 data cache, read once.
pub(crate) fn l1d_bytes() -> usize {
    static BYTES: OnceLock<usize> = OnceLock::new();
    *BYTES.get_or_init(|| from_sysfs().unwrap_or(ASSUMED))
}

/// The level-1 data cache's size as Linux lists it (`/sys/devices/system/cpu/cpu0/cache`).
fn from_sysfs() -> Option<usize> {
    let dir = std::path::Path::new("/sys/devices/system/cpu/cpu0/cache");
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let read = |name: &str| std::fs::read_to_string(entry.path().join(name)).ok();
        if read("level").as_deref().map(str::trim) == Some("1")
            && read("type").as_deref().map(str::trim) == Some("Data")
        {
            return read("size").as_deref().and_then(parse_size);
        }
    }
    None
}

/// `"32K"`, `"48K"`, `"1M"` or a plain byte count, as sysfs writes cache sizes; `None` for
/// anything else or zero.
fn parse_size(text: &str) -> Option<usize> {
    let text = text.trim();
    let (digits, unit) = match text.as_bytes().last()? {
        b'K' => (&text[..text.len() - 1], 1 << 10),
        b'M' => (&text[..text.len() - 1], 1 << 20),
        _ => (text, 1),
    };
    let bytes = digits.parse::<usize>().ok()?.checked_mul(unit)?;
    (bytes > 0).then_some(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_sysfs_writes_them() {
        assert_eq!(parse_size("32K\n"), Some(32 << 10));
        assert_eq!(parse_size("48K"), Some(48 << 10));
        assert_eq!(parse_size("1M"), Some(1 << 20));
        assert_eq!(parse_size("65536"), Some(65536));
        for bad in [
            "",
            "K",
            "0K",
            "-1K",
            "32KB",
            "x",
            "99999999999999999999999M",
        ] {
            assert_eq!(parse_size(bad), None, "{bad:?}");
        }
        let l1d = l1d_bytes();
        assert!((4 << 10..=4 << 20).contains(&l1d), "{l1d}");
    }
}
