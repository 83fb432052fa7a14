//! Constant operands a kernel prepares once at load — a filter or weights
//! packed for its GEMM (`Conv::prepare`, `MatMul::prepare`, `Gemm::prepare`,
//! [`super::Kernel::prepare`]) — found again at run time by the address and
//! shape of the bytes they were made from. Those bytes are a weight, a
//! kernel constant or a value folded at load: memory that lives and stays
//! unchanged as long as the model. A run whose operand is not here (an
//! input, a computed value) takes the kernel's unprepared path. Shared by
//! the clones of a kernel (one op's kernel may serve several launches).

use super::Slot;
use std::sync::{Arc, RwLock};

/// The prepared forms of a kernel's constant operands.
pub struct Prepared<T>(Arc<RwLock<Vec<Entry<T>>>>);

struct Entry<T> {
    addr: usize,
    shape: Vec<usize>,
    value: Arc<T>,
}

impl<T> Prepared<T> {
    /// The prepared form of the operand `s`, if it was prepared.
    pub fn find(&self, s: &Slot) -> Option<Arc<T>> {
        let v = self.0.read().ok()?;
        v.iter()
            .find(|e| e.addr == s.ptr as usize && e.shape == s.shape)
            .map(|e| e.value.clone())
    }

    /// Keep `value`, prepared from the constant `s` in `bytes` bytes;
    /// returns the bytes kept (0 when a run panicked holding the lock).
    pub fn insert(&self, s: &Slot, value: T, bytes: usize) -> usize {
        match self.0.write() {
            Ok(mut v) => {
                v.push(Entry {
                    addr: s.ptr as usize,
                    shape: s.shape.clone(),
                    value: Arc::new(value),
                });
                bytes
            }
            Err(_) => 0,
        }
    }

    /// The first one prepared.
    pub fn first(&self) -> Option<Arc<T>> {
        self.0.read().ok()?.first().map(|e| e.value.clone())
    }
}

// By hand: the derives would ask `T: Default` and `T: Clone`.
impl<T> Default for Prepared<T> {
    fn default() -> Self {
        Prepared(Arc::default())
    }
}

impl<T> Clone for Prepared<T> {
    fn clone(&self) -> Self {
        Prepared(self.0.clone())
    }
}

impl<T> std::fmt::Debug for Prepared<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.0.read().map_or(0, |v| v.len());
        write!(f, "Prepared({n} operands)")
    }
}
