//! `ge_bytes`: a byte buffer ge returns (an `.om` image, printed text).

use crate::args;
use crate::status::entry;

/// Bytes owned by ge: read them with `ge_bytes_data`/`ge_bytes_size`, free
/// them with `ge_bytes_free`. The data is followed by a NUL byte (not
/// counted in the size), so text can be used as a C string.
pub struct ge_bytes {
    /// The bytes and a trailing NUL.
    data: Vec<u8>,
}

impl ge_bytes {
    pub fn new(mut data: Vec<u8>) -> ge_bytes {
        data.push(0);
        ge_bytes { data }
    }
    pub fn as_slice(&self) -> &[u8] {
        &self.data[..self.data.len() - 1]
    }
}

/// The bytes (NUL-terminated); NULL for a NULL handle.
#[no_mangle]
pub unsafe extern "C" fn ge_bytes_data(bytes: *const ge_bytes) -> *const u8 {
    // SAFETY: NULL or a live ge_bytes (the ge.h contract).
    unsafe { bytes.as_ref() }.map_or(std::ptr::null(), |b| b.data.as_ptr())
}

/// The number of bytes (without the trailing NUL); 0 for a NULL handle.
#[no_mangle]
pub unsafe extern "C" fn ge_bytes_size(bytes: *const ge_bytes) -> usize {
    // SAFETY: NULL or a live ge_bytes (the ge.h contract).
    unsafe { bytes.as_ref() }.map_or(0, |b| b.as_slice().len())
}

/// Free bytes returned by ge (NULL is ignored).
#[no_mangle]
pub unsafe extern "C" fn ge_bytes_free(bytes: *mut ge_bytes) {
    entry("ge_bytes_free", || {
        // SAFETY: NULL or a live ge_bytes, not used afterwards.
        unsafe { args::free(bytes) };
        Ok(())
    });
}
