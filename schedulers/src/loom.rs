//! One place that chooses between `std` and `loom` primitives.
//!
//! Everything in this crate that is shared between threads imports its
//! atomics, `Arc`, `Mutex`, `UnsafeCell` and `thread` from here, so that the
//! same code is model-checked under `RUSTFLAGS="--cfg loom"`.

#[cfg(not(loom))]
#[allow(unused_imports)] // reason: the facade offers the full set; each build uses a subset
pub(crate) mod sync {
    pub(crate) use std::sync::{Arc, Condvar, Mutex, MutexGuard};
    pub(crate) mod atomic {
        pub(crate) use std::sync::atomic::{
            fence, AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicU8, AtomicUsize, Ordering,
        };
    }
}

#[cfg(loom)]
#[allow(unused_imports)] // reason: as above
pub(crate) mod sync {
    pub(crate) use loom::sync::{Arc, Condvar, Mutex, MutexGuard};
    pub(crate) mod atomic {
        pub(crate) use loom::sync::atomic::{
            fence, AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicU8, AtomicUsize, Ordering,
        };
    }
}

#[cfg(not(loom))]
pub(crate) mod cell {
    /// `std::cell::UnsafeCell` with loom's closure-based access API, so the
    /// same code compiles in both worlds.
    #[derive(Debug)]
    #[repr(transparent)]
    pub(crate) struct UnsafeCell<T>(std::cell::UnsafeCell<T>);

    impl<T> UnsafeCell<T> {
        pub(crate) const fn new(data: T) -> UnsafeCell<T> {
            UnsafeCell(std::cell::UnsafeCell::new(data))
        }

        #[inline(always)]
        pub(crate) fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
            f(self.0.get())
        }

        #[inline(always)]
        pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
            f(self.0.get())
        }
    }
}

#[cfg(loom)]
pub(crate) mod cell {
    pub(crate) use loom::cell::UnsafeCell;
}

#[cfg(not(loom))]
#[allow(unused_imports, dead_code)] // reason: the facade offers the full set; each build uses a subset
pub(crate) mod thread {
    pub(crate) use std::thread::{current, park, yield_now, Builder, Thread};
}

#[cfg(loom)]
#[allow(unused_imports, dead_code)] // reason: as above
pub(crate) mod thread {
    pub(crate) use loom::thread::{current, park, yield_now, Builder, Thread};
}

/// Locks `m`, first trying it: an acquisition that finds the lock held
/// counts one on `contended` before it blocks, so the uncontended path
/// costs what a plain `lock` costs. The one way this crate measures lock
/// contention (timer wheels, blocking pool): counted, never estimated.
/// A re-acquisition inside a `Condvar` wait is not seen (std offers no
/// way to observe it). Poison is ignored: no caller runs code that can
/// panic while it holds such a lock.
pub(crate) fn lock_counted<'a, T>(
    m: &'a sync::Mutex<T>,
    contended: &sync::atomic::AtomicU64,
) -> sync::MutexGuard<'a, T> {
    if let Ok(guard) = m.try_lock() {
        return guard;
    }
    // Relaxed: a statistic, no data depends on it.
    contended.fetch_add(1, sync::atomic::Ordering::Relaxed);
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}
