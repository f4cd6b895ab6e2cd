//! A global allocator that asks Linux to back large tables with huge pages.
//!
//! A large network's per-hop state is spread over tens of megabytes: at
//! k = 34 the ports alone take 69 MB and the packets in flight 30 MB, and a
//! hop touches a line or two in each, far apart. With 4 KiB pages nearly
//! every such touch also misses the TLB, and a page walk costs about as much
//! as the cache miss itself. Transparent huge pages (2 MiB) cover the same
//! tables with a few dozen TLB entries.
//!
//! Most Linux systems enable them only where a program asks
//! (`/sys/kernel/mm/transparent_hugepage/enabled` = `madvise`), so
//! [`HugePages`] passes every request to the system allocator and advises
//! `MADV_HUGEPAGE` on each allocation of at least [`HUGE_FROM`] bytes. It
//! changes where memory sits, never what a run computes. Programs opt in:
//!
//! ```
//! #[global_allocator]
//! static ALLOC: incast_core::huge_pages::HugePages = incast_core::huge_pages::HugePages;
//!
//! fn main() {
//!     let ports = vec![0u64; 1 << 20]; // 8 MiB: advised
//!     assert!(ports.iter().all(|&x| x == 0));
//! }
//! ```
//!
//! On other systems, and where the kernel refuses the advice, it is the
//! system allocator and nothing more.

use std::alloc::{GlobalAlloc, Layout, System};

/// Allocations of at least this many bytes are advised (one huge page: a
/// smaller one could not hold a huge page of its own).
pub const HUGE_FROM: usize = 2 << 20;

/// The system allocator, advising huge pages for allocations of at least
/// [`HUGE_FROM`] bytes.
pub struct HugePages;

// SAFETY: every method forwards to `System` with the caller's arguments and
// returns what it returned; the advice only changes how the kernel backs the
// pages, never their contents or their validity.
unsafe impl GlobalAlloc for HugePages {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let ptr = unsafe { System.alloc(layout) };
        advise(ptr, layout.size());
        ptr
    }
    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let ptr = unsafe { System.alloc_zeroed(layout) };
        advise(ptr, layout.size());
        ptr
    }
    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let ptr = unsafe { System.realloc(ptr, layout, new_size) };
        advise(ptr, new_size);
        ptr
    }
}

/// Advises huge pages for the whole pages inside `[ptr, ptr + size)`.
#[inline]
fn advise(ptr: *mut u8, size: usize) {
    if size >= HUGE_FROM && !ptr.is_null() {
        advise_huge(ptr as usize, size);
    }
}

#[cfg(target_os = "linux")]
#[cold]
fn advise_huge(addr: usize, size: usize) {
    const PAGE: usize = 4096;
    let start = addr.next_multiple_of(PAGE);
    let end = (addr + size) & !(PAGE - 1);
    if end > start {
        // SAFETY: the range lies inside an allocation just made, and
        // MADV_HUGEPAGE changes no contents. A refusal (THP disabled, an
        // old kernel) leaves ordinary pages, which is still correct.
        unsafe {
            libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge(_addr: usize, _size: usize) {}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether the kernel's map of this process marks the mapping holding
    /// `addr` as advised for huge pages (`hg` among its `VmFlags`).
    #[cfg(target_os = "linux")]
    fn advised(addr: usize) -> bool {
        let smaps = std::fs::read_to_string("/proc/self/smaps").expect("/proc/self/smaps");
        let mut inside = false;
        for line in smaps.lines() {
            let range = line.split(' ').next().unwrap_or("");
            if let Some((lo, hi)) = range.split_once('-') {
                if let (Ok(lo), Ok(hi)) =
                    (usize::from_str_radix(lo, 16), usize::from_str_radix(hi, 16))
                {
                    inside = (lo..hi).contains(&addr);
                    continue;
                }
            }
            if inside && line.starts_with("VmFlags:") {
                return line.split_whitespace().any(|flag| flag == "hg");
            }
        }
        false
    }

    /// Allocations through it, small and large, hold what was written, and
    /// survive growth by `realloc` (the advice must never touch contents);
    /// a large one is advised (the kernel's map says so).
    #[test]
    fn it_allocates_like_the_system_allocator() {
        let alloc = HugePages;
        #[cfg(target_os = "linux")]
        let thp_kernel = std::path::Path::new("/sys/kernel/mm/transparent_hugepage").exists();
        for size in [16, 4096, HUGE_FROM, 3 * HUGE_FROM + 123] {
            let layout = Layout::from_size_align(size, 64).unwrap();
            unsafe {
                let ptr = alloc.alloc(layout);
                assert!(!ptr.is_null());
                assert_eq!(ptr as usize % 64, 0);
                for i in (0..size).step_by(997) {
                    *ptr.add(i) = (i % 251) as u8;
                }
                let grown = alloc.realloc(ptr, layout, 2 * size);
                assert!(!grown.is_null());
                for i in (0..size).step_by(997) {
                    assert_eq!(*grown.add(i), (i % 251) as u8);
                }
                // The advice covers whole pages: look in the middle (where
                // the kernel has huge pages at all).
                #[cfg(target_os = "linux")]
                if size >= HUGE_FROM && thp_kernel {
                    assert!(advised(grown as usize + size), "no advice at {size} bytes");
                }
                alloc.dealloc(grown, Layout::from_size_align(2 * size, 64).unwrap());
                let zeroed = alloc.alloc_zeroed(layout);
                assert!((0..size).step_by(997).all(|i| *zeroed.add(i) == 0));
                alloc.dealloc(zeroed, layout);
            }
        }
    }
}
