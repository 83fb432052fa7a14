//! A value one call at a time takes while it holds the GIL (issue 20).
//!
//! `Session.run` keeps what a call learned for the next (the feed, the
//! runtime's output tensors, the last result) in a scratch that one call
//! at a time may use; a second thread's call that finds it taken starts
//! afresh. A `Mutex` with `try_lock` did that, but its locked
//! compare-and-swap and exchange drain the store buffer twice per call:
//! on a model that runs in ~2 µs, a measurable part of what a call from
//! Python adds (docs/benchmarks.md). A call takes and gives back the
//! scratch with the GIL held — it is the GIL, not the flag, that orders
//! two threads' calls — so a flag read and written with plain loads and
//! stores is enough.
//!
//! Sound only where the GIL is one lock for all the threads that can
//! reach a session: pyo3 is built for CPython's limited API (`abi3-py310`
//! in the workspace's Cargo.toml), which the free-threaded build (no GIL)
//! does not load, and pyo3 refuses to import the module in a
//! sub-interpreter (which has a GIL of its own).

use pyo3::Python;
use std::cell::UnsafeCell;
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicBool, Ordering};

/// A `T` taken by one call at a time, with the GIL held ([`GilSlot::take`]).
pub struct GilSlot<T> {
    taken: AtomicBool,
    value: UnsafeCell<T>,
}

// SAFETY: the value is reached only through `GilSlot::take`, which needs
// the GIL (`Python<'py>`) and hands it to one `Taken` at a time; the flag
// is read and set by a thread holding the GIL and cleared by the `Taken`'s
// drop, which cannot leave that thread (`Taken` is not `Send`) and runs
// with the GIL held again (see `Taken`). The GIL's release and acquisition
// order one holder's use of the value before the next's. `T: Send`: the
// value moves between the threads that take it.
unsafe impl<T: Send> Sync for GilSlot<T> {}

impl<T> GilSlot<T> {
    pub fn new(value: T) -> Self {
        GilSlot {
            taken: AtomicBool::new(false),
            value: UnsafeCell::new(value),
        }
    }

    /// The value, unless another call has it (`None`: a call of another
    /// thread that released the GIL while it runs the model, a call that
    /// panicked with it, or a `Taken` leaked with `mem::forget`).
    pub fn take<'a, 'py>(&'a self, _py: Python<'py>) -> Option<Taken<'a, 'py, T>> {
        // Plain load and store (Relaxed): no other thread runs this
        // between them, since this one holds the GIL.
        if self.taken.load(Ordering::Relaxed) {
            return None;
        }
        self.taken.store(true, Ordering::Relaxed);
        Some(Taken {
            slot: self,
            _gil: PhantomData,
        })
    }
}

/// The value of a [`GilSlot`], given back when dropped. Bound to the
/// `Python<'py>` token it was taken with, it is not `Send`: it cannot move
/// into `py.detach` (which needs `Send`), so it is dropped on the thread
/// that took it, outside any stretch without the GIL.
pub struct Taken<'a, 'py, T> {
    slot: &'a GilSlot<T>,
    _gil: PhantomData<Python<'py>>,
}

impl<T> Deref for Taken<'_, '_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: this `Taken` alone has the value (`GilSlot::take`).
        unsafe { &*self.slot.value.get() }
    }
}

impl<T> DerefMut for Taken<'_, '_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: this `Taken` alone has the value (`GilSlot::take`), and
        // `&mut self` makes this borrow the only one.
        unsafe { &mut *self.slot.value.get() }
    }
}

impl<T> Drop for Taken<'_, '_, T> {
    fn drop(&mut self) {
        // A panic (reported as ge.InternalError) may have left the value
        // half updated: it stays taken, and later calls start afresh, as
        // with a poisoned lock. (`panicking` reads a global count first: a
        // load, no thread-local, when no thread panics.)
        if !std::thread::panicking() {
            self.slot.taken.store(false, Ordering::Relaxed);
        }
    }
}
