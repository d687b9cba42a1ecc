//! Session ids: the UTC time the session started, then random hex
//! (`20261201-081500-3fa2c1`), so that names sort by time and two sessions
//! started in the same second still differ.

use std::hash::{BuildHasher, Hasher};

/// The longest id accepted from the person (`--resume`, `/resume`);
/// dashfloat's own are 22. ADR 0022.
pub const ID_MAX_CHARS: usize = 64;

/// A new id for a session started at `secs` (since the Unix epoch).
pub fn new_id(secs: u64) -> String {
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    let rest = secs % 86_400;
    let (year, month, day) = civil_from_days(days);
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(secs);
    hasher.write_u32(std::process::id());
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    hasher.write_u32(nanos);
    let random = hasher.finish() & 0xff_ffff;
    format!(
        "{year:04}{month:02}{day:02}-{:02}{:02}{:02}-{random:06x}",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

/// Whether `id` can name a session file: letters, digits and dashes, not
/// starting with a dash, so it never names a path outside the store.
pub fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= ID_MAX_CHARS
        && !id.starts_with('-')
        && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (Howard
/// Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}
