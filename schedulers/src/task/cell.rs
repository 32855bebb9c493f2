//! The memory layout of a task: the type-erased [`Header`] every task
//! starts with (state word, vtable, owned-list links), the full
//! `Cell<F, S>` behind it, where cells are placed ([`CellAlign`]), and the
//! vtable through which the runtime drives a cell without knowing `F` or
//! `S`. The code that drives them is in `raw.rs`.

use std::alloc::Layout;
use std::future::Future;
use std::ptr::NonNull;
use std::task::Waker;

use super::error::JoinError;
use super::state::State;
use crate::loom::cell::UnsafeCell;
use crate::loom::sync::atomic::{AtomicU32, Ordering};

/// Intrusive links of the owned-tasks list; only touched with the list
/// shard's mutex held.
#[derive(Default)]
pub(crate) struct Links {
    pub(crate) prev: Option<NonNull<Header>>,
    pub(crate) next: Option<NonNull<Header>>,
    pub(crate) linked: bool,
}

/// The type-erased front of every task cell.
#[repr(C)]
pub(crate) struct Header {
    pub(crate) state: State,
    pub(super) vtable: &'static Vtable,
    /// Owned-list links, guarded by the shard mutex of `id`.
    pub(crate) owned: UnsafeCell<Links>,
    /// When the task was last scheduled, in ticks of
    /// `metrics::TICK_NS` since its runtime's schedule-delay epoch (mod
    /// 2^32); written only under `sched-delay=on` (`runtime/delay.rs`).
    /// Written by the holder of the task's one `Notified` just before it
    /// is queued, read by the worker that took it from the queue: the
    /// queue's hand-off of the `Notified` orders the two, so the accesses
    /// are Relaxed (see [`Header::set_scheduled_at`]).
    scheduled_at: AtomicU32,
    /// Spawn sequence number (mod 2^16); picks the owned-list shard (at
    /// most `owned::MAX_SHARDS`, so 16 bits spread them all).
    pub(crate) id: u16,
    /// Bytes between the start of the allocation and this cell.
    pub(super) alloc_offset: u8,
    /// log2 of the boundary the cell was placed on (0: none); with
    /// `alloc_offset` it rebuilds the allocation's layout in `dealloc`.
    pub(super) align_log2: u8,
}

impl Header {
    /// A header for a new cell (not yet scheduled).
    pub(super) fn new(vtable: &'static Vtable, id: u16, alloc_offset: u8, align_log2: u8) -> Header {
        Header {
            state: State::new(),
            vtable,
            owned: UnsafeCell::new(Links::default()),
            scheduled_at: AtomicU32::new(0),
            id,
            alloc_offset,
            align_log2,
        }
    }

    /// Stamps the task as scheduled at `ticks`. Called by the holder of
    /// the task's `Notified` before it hands it to a queue.
    #[inline(always)]
    pub(crate) fn set_scheduled_at(&self, ticks: u32) {
        // Relaxed: only the holder of the task's one `Notified` writes the
        // stamp, and only the worker that pops that `Notified` reads it;
        // the queue's push/pop (a Release/Acquire pair, or a lock, in every
        // queue) orders this store before that load. The next store comes
        // from a later `Notified`, which exists only after the reader's
        // `transition_to_running` (AcqRel) has cleared NOTIFIED.
        self.scheduled_at.store(ticks, Ordering::Relaxed);
    }

    /// When the task was last scheduled ([`Header::set_scheduled_at`]).
    #[inline(always)]
    pub(crate) fn scheduled_at(&self) -> u32 {
        // Relaxed: ordered by the queue hand-off, see `set_scheduled_at`.
        self.scheduled_at.load(Ordering::Relaxed)
    }
}

/// Where task cells go: on a boundary of 2^n bytes (n = 0: wherever the
/// allocator puts them). Set by the `task-align` knob.
///
/// tokio aligns its cells to 128 bytes (on x86-64 the spatial prefetcher
/// moves 64-byte lines in pairs) so that tasks spawned back to back, then
/// run on different workers, share no line pair. Here it is a knob, default
/// packed, because on the 2-core machine this was built on it bought
/// nothing measurable and cost time on spawn-heavy benches (the slack below
/// lifts small cells out of glibc's fastbins, chunks up to 128 B), and each
/// task costs up to 112 B more; the figures are in `results/task-align/`.
/// Measure it with `--knob task-align=none,128` where the cores exist.
///
/// The alignment is not asked of the allocator: `posix_memalign` bypasses
/// malloc's thread cache, which made `spawn-many-local` slower still. The
/// cell is placed at the first boundary inside an ordinary 16-byte-aligned
/// allocation with `boundary - 16` bytes of slack.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CellAlign(pub(super) u8);

impl CellAlign {
    /// Packed: wherever the allocator puts the cell.
    pub(crate) const NATURAL: CellAlign = CellAlign(0);

    /// A boundary of `bytes` (a power of two up to 128; 1 = natural).
    pub(crate) fn new(bytes: usize) -> CellAlign {
        assert!(bytes.is_power_of_two() && bytes <= 128, "task cell boundary {bytes} is not a power of two <= 128");
        CellAlign(bytes.trailing_zeros() as u8)
    }

    pub(super) fn bytes(self) -> usize {
        1 << self.0
    }
}

/// Alignment asked of the allocator (malloc's own on 64-bit targets).
pub(super) const ALLOC_BASE_ALIGN: usize = 16;

/// The allocation that holds a `Cell<F, S>` at an `align` boundary: the
/// cell plus the slack to slide it there.
pub(super) fn cell_alloc_layout<F: Future, S>(align: CellAlign) -> Layout {
    let cell = Layout::new::<Cell<F, S>>();
    let boundary = align.bytes();
    if cell.align() >= boundary {
        return cell;
    }
    let base = cell.align().max(ALLOC_BASE_ALIGN);
    let slack = boundary.saturating_sub(base);
    Layout::from_size_align(cell.size() + slack, base).expect("task cell layout overflows isize")
}

pub(super) struct Vtable {
    pub(super) poll: unsafe fn(NonNull<Header>),
    pub(super) schedule: unsafe fn(NonNull<Header>),
    pub(super) dealloc: unsafe fn(NonNull<Header>),
    pub(super) try_read_output: unsafe fn(NonNull<Header>, *mut (), &Waker),
    pub(super) drop_join_handle: unsafe fn(NonNull<Header>),
    pub(super) shutdown: unsafe fn(NonNull<Header>),
}

pub(super) enum Stage<F: Future> {
    Running(F),
    Finished(Result<F::Output, JoinError>),
    Consumed,
}

#[repr(C)]
pub(super) struct Cell<F: Future, S> {
    pub(super) header: Header,
    pub(super) scheduler: S,
    pub(super) stage: UnsafeCell<Stage<F>>,
    /// The JoinHandle's waker; ownership per the JOIN_WAKER bit.
    pub(super) join_waker: UnsafeCell<Option<Waker>>,
}
