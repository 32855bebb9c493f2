use std::alloc::Layout;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;

use super::*;
use crate::task::cell::ALLOC_BASE_ALIGN;
use crate::task::JoinHandle;

/// A scheduler that keeps no list: the test holds the list reference.
struct Unlisted;

impl Schedule for Unlisted {
    fn schedule(&self, task: Notified) {
        drop(task);
    }

    fn release(&self, _task: RawTask) -> Option<Task> {
        None
    }
}

/// Counts its drops.
struct Counted<T>(Arc<AtomicUsize>, #[allow(dead_code)] T);

impl<T> Drop for Counted<T> {
    fn drop(&mut self) {
        self.0.fetch_add(1, Relaxed);
    }
}

#[repr(align(256))]
struct OverAligned(#[allow(dead_code)] [u8; 300]);

/// Spawns `payload` (held by the future, returned as its output) at
/// `align`, checks where the cell landed, runs it, drops every
/// reference; the payload must be dropped exactly once.
fn place<T: Send + 'static>(payload: T, align: CellAlign) -> usize {
    let drops = Arc::new(AtomicUsize::new(0));
    let value = Counted(Arc::clone(&drops), payload);
    let (task, notified, raw) = new_task(async move { value }, Unlisted, 0, align);
    let addr = raw.0.as_ptr() as usize;
    // SAFETY: `raw` carries the JoinHandle reference; the output type
    // is that of the future above.
    let join = unsafe { JoinHandle::<Counted<T>>::new(raw) };
    notified.run();
    assert_eq!(drops.load(Relaxed), 0, "the output is stored, not dropped");
    drop(task);
    drop(join);
    assert_eq!(drops.load(Relaxed), 1, "the output is dropped once, with the JoinHandle");
    addr
}

#[test]
fn cells_start_on_the_requested_boundary_and_free_cleanly() {
    for _ in 0..64 {
        for bytes in [64, 128] {
            let align = CellAlign::new(bytes);
            assert_eq!(place(7u8, align) % bytes, 0);
            assert_eq!(place([0u64; 40], align) % bytes, 0);
            assert_eq!(place(String::from("x"), align) % bytes, 0);
            // A cell aligned beyond the boundary keeps its own alignment.
            assert_eq!(place(OverAligned([1; 300]), align) % 256, 0);
        }
        assert_eq!(place(7u8, CellAlign::NATURAL) % mem::align_of::<Header>(), 0);
        assert_eq!(place(OverAligned([1; 300]), CellAlign::NATURAL) % 256, 0);
    }
}

#[test]
#[cfg(target_pointer_width = "64")]
fn the_header_stays_six_words() {
    // The placement fields and the 32-bit schedule stamp share the 16-bit
    // id's word; the header is what every pending task pays on top of its
    // future.
    assert_eq!(mem::size_of::<Header>(), 48);
}

#[test]
fn slack_is_the_boundary_minus_the_base_alignment() {
    type C = Cell<std::future::Ready<u8>, Unlisted>;
    let plain = Layout::new::<C>();
    let at128 = cell_alloc_layout::<std::future::Ready<u8>, Unlisted>(CellAlign::new(128));
    assert_eq!(at128.size(), plain.size() + 128 - ALLOC_BASE_ALIGN);
    assert_eq!(at128.align(), ALLOC_BASE_ALIGN);
    let natural = cell_alloc_layout::<std::future::Ready<u8>, Unlisted>(CellAlign::NATURAL);
    assert_eq!(natural, plain);
}
