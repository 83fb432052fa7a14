//! [`Shared`]: the one raw-pointer wrapper that may cross threads.
//!
//! Raw pointers are neither `Send` nor `Sync`, so the closures the compute
//! pool runs (`kernels::Par`) and the stream workers of a run (`exec.rs`)
//! cannot capture the buffers they work on as pointers. Kernels and the
//! executor wrap those pointers in `Shared`; reading one back goes through
//! [`Shared::p`] inside a closure (a method call captures the whole wrapper;
//! naming the field `.0` there would capture only the bare pointer).
//!
//! # The invariant
//!
//! Whoever makes a `Shared` guarantees, for every use of every copy of it:
//!
//! 1. **The memory outlives the use.** A pointer handed to a parallel
//!    region points into a slot, arena or scratch buffer that outlives the
//!    region (`Par::run` returns only after every worker has finished its
//!    part); a pointer handed to stream workers points into an arena of the
//!    run, which outlives the run (`Session::run` joins every stream before
//!    it releases the execution context or returns the outputs).
//! 2. **Concurrent accesses do not race.** Threads of one region read shared
//!    inputs and write disjoint ranges of the outputs (each part of a region
//!    owns its rows, columns, tiles or channels); tasks of different streams
//!    touch overlapping bytes only when the plan orders them with events,
//!    which `verify-memory` checked at compile time and the loader's
//!    validation keeps inside each arena.
//!
//! Under that invariant, moving or sharing the pointer *value* between
//! threads is sound; every dereference is still an `unsafe` block of its
//! own, with its bounds argued where it happens.

/// A `*mut T` or `*const T` that may be sent to and shared with other
/// threads (see the module's invariant).
#[derive(Clone, Copy, Debug)]
pub struct Shared<P>(pub P);

impl<P: Copy> Shared<P> {
    /// The pointer (call this inside closures; see the module docs).
    #[inline(always)]
    pub fn p(self) -> P {
        self.0
    }
}

// SAFETY: the module's invariant — the pointee outlives every use on any
// thread, and threads access it without data races (disjoint ranges within a
// parallel region, event-ordered across streams).
unsafe impl<T> Send for Shared<*mut T> {}
// SAFETY: as for `Send`: sharing `&Shared` only shares the pointer value.
unsafe impl<T> Sync for Shared<*mut T> {}
// SAFETY: as above; a `*const T` is only read through.
unsafe impl<T> Send for Shared<*const T> {}
// SAFETY: as above.
unsafe impl<T> Sync for Shared<*const T> {}
