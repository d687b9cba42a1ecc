//! How the process asks its allocator for memory. A large buffer — a
//! multi-MiB reply, a session being encoded for its file — gets pages of
//! its own, which go back to the system when it is freed, instead of
//! staying in the heap. ADR 0037.

/// Buffers of at least this many bytes get pages of their own (glibc's
/// `M_MMAP_THRESHOLD`).
const OWN_PAGES_FROM_BYTES: i32 = 256 * 1024;

/// Fixes the size from which an allocation gets pages of its own. Left to
/// itself, glibc raises that size to the largest buffer freed so far (up
/// to 32 MiB), so after one huge reply every later one is carved from the
/// heap, whose pages a long session then holds: the soak's memory in use
/// crept from 80 to 105 MB over 1,000 turns, where with the size fixed it
/// stays at 29–34 MB. Call once, first thing in `main`. Does nothing on
/// other allocators.
pub fn give_large_buffers_own_pages() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt takes two integers and changes only the allocator's
    // settings, under its own lock.
    #[allow(unsafe_code)]
    unsafe {
        nix::libc::mallopt(nix::libc::M_MMAP_THRESHOLD, OWN_PAGES_FROM_BYTES);
    }
}
