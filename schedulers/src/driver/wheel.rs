//! A hierarchical timing wheel (Varghese & Lauck, "Hashed and Hierarchical
//! Timing Wheels", SOSP'87): [`LEVELS`] levels of [`SLOTS`] slots, one tick
//! per millisecond.
//!
//! This module is pure bookkeeping over integer ticks — no clock, no lock, no
//! waker — so it is unit-tested exhaustively here and benchmarked on its own
//! (`benches/timers.rs` includes this file directly).
//!
//! # Layout
//! A slot of level `k` covers `64^k` ticks; level `k` as a whole covers
//! `64^(k+1)` ticks. An entry due at `when` is filed, relative to the wheel's
//! current time `elapsed`, at the level of the highest 6-bit digit in which
//! `when` and `elapsed` differ, in the slot given by `when`'s digit at that
//! level. So level 0 holds what is due within the current 64 ms window,
//! level 1 what is due within the current 4 s window, and so on.
//!
//! Entries live in one arena (`Vec<Entry>`) and each slot is a doubly linked
//! list threaded through the arena by index, so insert and cancel are O(1):
//! no search, no allocation once the arena has grown.
//!
//! # Advancing
//! 1. Find the earliest occupied slot: the first level (from 0 up) with an
//!    occupied slot; within it, the first occupied slot after the current
//!    digit. Lower levels are always earlier than higher ones.
//! 2. If that slot starts after `now`, stop and set `elapsed = now`.
//! 3. Otherwise set `elapsed` to the slot's start and take its whole list.
//!    Each entry due by then fires; every other entry is re-filed relative to
//!    the new `elapsed`, which puts it on a lower level (cascading). Repeat.
//!
//! Entries therefore fire in deadline order, each at the first `advance`
//! whose `now` reaches its tick.
//!
//! # Beyond the span
//! An entry more than one top-level span (`64^6` ms, about 2.2 years) ahead is
//! parked in the top-level slot just behind the current one, the last slot
//! the wheel reaches on its way round. When that slot comes due the entry is
//! re-filed: into its real slot if it is now within the span, or parked
//! again one turn further on.

/// Levels in the wheel.
pub(crate) const LEVELS: usize = 6;
/// Bits of a tick consumed by one level.
const SLOT_BITS: u32 = 6;
/// Slots per level.
pub(crate) const SLOTS: usize = 1 << SLOT_BITS;
/// Mask of one level's digit.
const SLOT_MASK: u64 = SLOTS as u64 - 1;
/// Index of the top level.
const TOP: usize = LEVELS - 1;
/// Ticks covered by the whole wheel (`64^6`).
pub(crate) const SPAN_TICKS: u64 = 1 << (SLOT_BITS as usize * LEVELS);
/// The "no entry" index in the intrusive lists.
const NIL: u32 = u32::MAX;

/// Identifies one inserted entry. Stale once the entry is removed: its arena
/// slot's generation moves on, so a stale key never reaches a new entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct TimerKey {
    index: u32,
    generation: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// On the free list.
    Free,
    /// Filed in `levels[level].heads[slot]`.
    Pending { level: u8, slot: u8 },
    /// Fired; kept until its owner removes it (so it can see that it fired).
    Fired,
}

#[derive(Debug)]
struct Entry<T> {
    /// Tick the entry is due at.
    when: u64,
    prev: u32,
    /// Next in the slot list, or next on the free list.
    next: u32,
    generation: u32,
    state: State,
    payload: Option<T>,
}

#[derive(Debug)]
struct Level {
    /// Bit `s` set iff `heads[s]` is non-empty.
    occupied: u64,
    heads: [u32; SLOTS],
}

/// The wheel. `T` is the payload each entry carries (the driver stores a
/// waker and the precise deadline).
#[derive(Debug)]
pub(crate) struct Wheel<T> {
    /// Current time in ticks; never decreases.
    elapsed: u64,
    levels: [Level; LEVELS],
    entries: Vec<Entry<T>>,
    free_head: u32,
    pending: usize,
}

/// Ticks covered by one slot of `level`.
const fn slot_ticks(level: usize) -> u64 {
    1 << (SLOT_BITS as usize * level)
}

/// `tick`'s digit at `level`.
const fn digit(tick: u64, level: usize) -> u64 {
    (tick >> (SLOT_BITS as usize * level)) & SLOT_MASK
}

/// Start of the `level` slot that contains `tick`.
const fn slot_floor(tick: u64, level: usize) -> u64 {
    tick & !(slot_ticks(level) - 1)
}

impl<T> Default for Wheel<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Wheel<T> {
    /// An empty wheel at tick 0.
    pub(crate) fn new() -> Self {
        Wheel {
            elapsed: 0,
            levels: std::array::from_fn(|_| Level { occupied: 0, heads: [NIL; SLOTS] }),
            entries: Vec::new(),
            free_head: NIL,
            pending: 0,
        }
    }

    /// The wheel's current time in ticks.
    #[cfg(test)]
    pub(crate) fn elapsed(&self) -> u64 {
        self.elapsed
    }

    /// Entries waiting to fire.
    #[cfg(any(loom, test))]
    pub(crate) fn pending(&self) -> usize {
        self.pending
    }

    /// Files `payload` to fire at tick `when`. `Err(payload)` if `when` is
    /// not in the future of the wheel (it is due already).
    pub(crate) fn insert(&mut self, when: u64, payload: T) -> Result<TimerKey, T> {
        if when <= self.elapsed {
            return Err(payload);
        }
        let index = self.alloc(when, payload);
        self.link(index);
        self.pending += 1;
        Ok(TimerKey { index, generation: self.entries[index as usize].generation })
    }

    /// Removes the entry, pending (cancelled, it will never fire) or fired,
    /// and returns its payload. `None` for a stale key.
    pub(crate) fn remove(&mut self, key: TimerKey) -> Option<T> {
        let state = self.entry(key)?.state;
        if let State::Pending { .. } = state {
            self.unlink(key.index);
            self.pending -= 1;
        }
        self.free(key.index)
    }

    /// Puts a detached (or fired) entry on the free list; its key goes
    /// stale.
    fn free(&mut self, index: u32) -> Option<T> {
        let e = &mut self.entries[index as usize];
        let payload = e.payload.take();
        e.state = State::Free;
        e.generation = e.generation.wrapping_add(1);
        e.prev = NIL;
        e.next = self.free_head;
        self.free_head = index;
        payload
    }

    /// The entry's payload and whether it has fired; `None` for a stale key.
    pub(crate) fn get_mut(&mut self, key: TimerKey) -> Option<(&mut T, bool)> {
        let index = key.index as usize;
        self.entry(key)?;
        let e = &mut self.entries[index];
        let fired = e.state == State::Fired;
        e.payload.as_mut().map(|p| (p, fired))
    }

    /// The tick at which `advance` next has work: the start of the earliest
    /// occupied slot. A lower bound on the next deadline (a higher-level
    /// slot only cascades). `None` when nothing is pending.
    pub(crate) fn next_expiration(&self) -> Option<u64> {
        self.next_slot().map(|(_, _, start)| start)
    }

    /// Advances the wheel to `now`, firing (in deadline order) every entry
    /// due at or before it: `on_fire` gets its payload. Fired entries stay
    /// in the arena, marked fired, until removed. Returns how many fired.
    /// A `now` in the wheel's past fires nothing.
    pub(crate) fn advance(&mut self, now: u64, mut on_fire: impl FnMut(&mut T)) -> usize {
        self.advance_with(now, &mut |w, i| w.fire(i, &mut on_fire))
    }

    /// [`Wheel::advance`] for payloads that carry their own fired state
    /// (`timer=per-worker`): each due entry is freed as it fires (its key
    /// goes stale at once) and `on_fire` gets its payload by value.
    pub(crate) fn advance_free(&mut self, now: u64, mut on_fire: impl FnMut(T)) -> usize {
        self.advance_with(now, &mut |w, i| w.fire_free(i, &mut on_fire))
    }

    /// [`Wheel::fire_all`] that frees every entry, as [`Wheel::advance_free`].
    pub(crate) fn fire_all_free(&mut self, mut on_fire: impl FnMut(T)) -> usize {
        self.fire_all_with(&mut |w, i| w.fire_free(i, &mut on_fire))
    }

    /// Fires every pending entry now, whatever its deadline (runtime
    /// shutdown). Returns how many fired.
    pub(crate) fn fire_all(&mut self, mut on_fire: impl FnMut(&mut T)) -> usize {
        self.fire_all_with(&mut |w, i| w.fire(i, &mut on_fire))
    }

    /// The live entry `key` names, if it is not stale.
    fn entry(&self, key: TimerKey) -> Option<&Entry<T>> {
        self.entries.get(key.index as usize).filter(|e| e.generation == key.generation && e.state != State::Free)
    }

    fn alloc(&mut self, when: u64, payload: T) -> u32 {
        if self.free_head != NIL {
            let index = self.free_head;
            let e = &mut self.entries[index as usize];
            self.free_head = e.next;
            e.when = when;
            e.payload = Some(payload);
            return index;
        }
        let index = u32::try_from(self.entries.len())
            .ok()
            .filter(|&i| i != NIL)
            .expect("timer wheel arena is full: 2^32 - 1 timers alive at once");
        self.entries.push(Entry {
            when,
            prev: NIL,
            next: NIL,
            generation: 0,
            state: State::Free,
            payload: Some(payload),
        });
        index
    }

    /// Where an entry due at `when` (> `elapsed`) is filed now.
    fn position(&self, when: u64) -> (usize, usize) {
        debug_assert!(when > self.elapsed, "filing a due entry: when {when} elapsed {}", self.elapsed);
        let differing = (self.elapsed ^ when) | SLOT_MASK;
        let highest_bit = u64::BITS - 1 - differing.leading_zeros();
        let level = (highest_bit / SLOT_BITS) as usize;
        if level < TOP {
            return (level, digit(when, level) as usize);
        }
        let top_floor = slot_floor(self.elapsed, TOP);
        if when - top_floor < SPAN_TICKS {
            (TOP, digit(when, TOP) as usize)
        } else {
            // Beyond the span: park in the last slot of this turn.
            (TOP, ((digit(self.elapsed, TOP) + SLOT_MASK) & SLOT_MASK) as usize)
        }
    }

    /// Pushes entry `index` onto the front of its slot list.
    fn link(&mut self, index: u32) {
        let (level, slot) = self.position(self.entries[index as usize].when);
        let lvl = &mut self.levels[level];
        let head = lvl.heads[slot];
        lvl.heads[slot] = index;
        lvl.occupied |= 1 << slot;
        if head != NIL {
            self.entries[head as usize].prev = index;
        }
        let e = &mut self.entries[index as usize];
        e.prev = NIL;
        e.next = head;
        e.state = State::Pending { level: level as u8, slot: slot as u8 };
    }

    fn unlink(&mut self, index: u32) {
        let e = &self.entries[index as usize];
        let State::Pending { level, slot } = e.state else {
            panic!("unlinking entry {index} in state {:?}", e.state);
        };
        let (prev, next, level, slot) = (e.prev, e.next, level as usize, slot as usize);
        if prev == NIL {
            self.levels[level].heads[slot] = next;
        } else {
            self.entries[prev as usize].next = next;
        }
        if next != NIL {
            self.entries[next as usize].prev = prev;
        }
        if self.levels[level].heads[slot] == NIL {
            self.levels[level].occupied &= !(1 << slot);
        }
    }

    /// The earliest occupied slot: `(level, slot, start tick)`.
    fn next_slot(&self) -> Option<(usize, usize, u64)> {
        self.levels.iter().enumerate().find(|(_, l)| l.occupied != 0).map(|(level, l)| {
            let current = digit(self.elapsed, level);
            // Slots after the current digit, wrapping (only the top level
            // wraps: lower levels hold only slots after the current one).
            let ahead = u64::from(l.occupied.rotate_right(current as u32).trailing_zeros());
            let slot = ((current + ahead) & SLOT_MASK) as usize;
            let start = slot_floor(self.elapsed, level).saturating_add(ahead * slot_ticks(level));
            (level, slot, start)
        })
    }

    /// Detaches slot `(level, slot)`'s whole list and returns its head.
    fn take_slot(&mut self, level: usize, slot: usize) -> u32 {
        let lvl = &mut self.levels[level];
        lvl.occupied &= !(1 << slot);
        std::mem::replace(&mut lvl.heads[slot], NIL)
    }

    /// Advances to `now`, handing each due entry (detached) to `fire`.
    fn advance_with(&mut self, now: u64, fire: &mut impl FnMut(&mut Self, u32)) -> usize {
        let mut fired = 0;
        while let Some((level, slot, start)) = self.next_slot() {
            if start > now {
                break;
            }
            self.elapsed = self.elapsed.max(start);
            fired += self.expire_slot_with(level, slot, fire);
        }
        self.elapsed = self.elapsed.max(now);
        fired
    }

    /// Hands every pending entry (detached), due or not, to `fire`.
    fn fire_all_with(&mut self, fire: &mut impl FnMut(&mut Self, u32)) -> usize {
        let mut fired = 0;
        for level in 0..LEVELS {
            for slot in 0..SLOTS {
                let mut cur = self.take_slot(level, slot);
                while cur != NIL {
                    let next = self.entries[cur as usize].next;
                    fire(self, cur);
                    fired += 1;
                    cur = next;
                }
            }
        }
        fired
    }

    /// Fires (with `fire`) what in a taken slot is due at `elapsed`,
    /// re-files the rest.
    fn expire_slot_with(&mut self, level: usize, slot: usize, fire: &mut impl FnMut(&mut Self, u32)) -> usize {
        let mut fired = 0;
        let mut cur = self.take_slot(level, slot);
        while cur != NIL {
            let next = self.entries[cur as usize].next;
            if self.entries[cur as usize].when <= self.elapsed {
                fire(self, cur);
                fired += 1;
            } else {
                self.link(cur);
            }
            cur = next;
        }
        fired
    }

    /// Marks a detached entry fired and hands its payload to `on_fire`.
    fn fire(&mut self, index: u32, on_fire: &mut impl FnMut(&mut T)) {
        let e = &mut self.entries[index as usize];
        e.state = State::Fired;
        e.prev = NIL;
        e.next = NIL;
        self.pending -= 1;
        if let Some(p) = e.payload.as_mut() {
            on_fire(p);
        }
    }

    /// Frees a detached entry and hands its payload to `on_fire`.
    fn fire_free(&mut self, index: u32, on_fire: &mut impl FnMut(T)) {
        self.pending -= 1;
        if let Some(p) = self.free(index) {
            on_fire(p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    /// Advances to `now` and returns the payloads fired, in firing order.
    fn fire(wheel: &mut Wheel<u64>, now: u64) -> Vec<u64> {
        let mut out = Vec::new();
        wheel.advance(now, |p| out.push(*p));
        out
    }

    #[test]
    fn position_math_per_level() {
        let mut w: Wheel<()> = Wheel::new();
        assert_eq!(w.position(1), (0, 1));
        assert_eq!(w.position(63), (0, 63));
        assert_eq!(w.position(64), (1, 1));
        assert_eq!(w.position(64 * 64 - 1), (1, 63));
        for level in 1..LEVELS {
            let boundary = slot_ticks(level);
            assert_eq!(w.position(boundary), (level, 1), "level {level}");
            assert_eq!(w.position(boundary - 1), (level - 1, 63), "below level {level}");
        }
        assert_eq!(w.position(SPAN_TICKS - 1), (TOP, 63));
        // From a non-zero time the level is the highest differing digit.
        w.elapsed = 64 * 5 + 10;
        assert_eq!(w.position(64 * 5 + 11), (0, 11));
        assert_eq!(w.position(64 * 6 + 2), (1, 6));
        assert_eq!(w.position(64 * 64 * 3), (2, 3));
    }

    #[test]
    fn beyond_the_span_parks_in_the_last_top_slot() {
        let mut w: Wheel<()> = Wheel::new();
        assert_eq!(w.position(SPAN_TICKS), (TOP, 63));
        assert_eq!(w.position(u64::MAX), (TOP, 63));
        // Within one span of the current top slot but past the window's end:
        // its real slot, which is behind the current digit (wraps).
        w.elapsed = 10 * slot_ticks(TOP) + 5;
        assert_eq!(w.position(SPAN_TICKS + 3 * slot_ticks(TOP)), (TOP, 3));
        assert_eq!(w.position(SPAN_TICKS + 10 * slot_ticks(TOP)), (TOP, 9));
    }

    #[test]
    fn cascades_across_every_level_boundary() {
        for level in 1..=LEVELS {
            let boundary = 1u64 << (SLOT_BITS as usize * level);
            for when in [boundary - 1, boundary, boundary + 1] {
                let mut w = Wheel::new();
                w.insert(when, when).unwrap();
                assert_eq!(fire(&mut w, when - 1), Vec::<u64>::new(), "early at {when}");
                assert_eq!(w.pending(), 1);
                assert_eq!(fire(&mut w, when), vec![when], "missed {when}");
                assert_eq!(w.pending(), 0);
                assert_eq!(w.next_expiration(), None);
            }
        }
    }

    #[test]
    fn cascades_step_by_step_through_two_levels() {
        let mut w = Wheel::new();
        let whens: Vec<u64> = (1..=64 * 64 + 70).step_by(7).collect();
        for &t in &whens {
            w.insert(t, t).unwrap();
        }
        let mut fired = Vec::new();
        for now in 1..=64 * 64 + 70 {
            for t in fire(&mut w, now) {
                assert_eq!(t, now, "fired at the wrong tick");
                fired.push(t);
            }
        }
        assert_eq!(fired, whens);
    }

    #[test]
    fn far_future_is_refiled_and_fires_on_time() {
        let whens = [SPAN_TICKS - 1, SPAN_TICKS, SPAN_TICKS + 1, 3 * SPAN_TICKS + 12_345, 1 << 40];
        for when in whens {
            let mut w = Wheel::new();
            w.elapsed = 17;
            w.insert(when, when).unwrap();
            let mut now = 17;
            // Walk in large uneven strides so top-level slots re-file.
            while now + slot_ticks(TOP) / 3 < when {
                now += slot_ticks(TOP) / 3;
                assert_eq!(fire(&mut w, now), Vec::<u64>::new(), "{when} early at {now}");
                let next = w.next_expiration().unwrap();
                assert!(next > now && next <= when, "next {next} now {now} when {when}");
            }
            assert_eq!(fire(&mut w, when - 1), Vec::<u64>::new());
            assert_eq!(fire(&mut w, when), vec![when]);
        }
    }

    #[test]
    fn max_tick_is_accepted_without_overflow() {
        let mut w = Wheel::new();
        let key = w.insert(u64::MAX, 0).unwrap();
        assert_eq!(fire(&mut w, 1 << 40), Vec::<u64>::new());
        assert!(w.next_expiration().unwrap() > 1 << 40);
        assert_eq!(w.remove(key), Some(0));
        assert_eq!(w.pending(), 0);
    }

    #[test]
    fn due_or_past_is_rejected() {
        let mut w = Wheel::new();
        assert_eq!(w.insert(0, 7), Err(7));
        fire(&mut w, 100);
        assert_eq!(w.elapsed(), 100);
        assert_eq!(w.insert(100, 8), Err(8));
        assert_eq!(w.insert(99, 9), Err(9));
        assert!(w.insert(101, 10).is_ok());
    }

    #[test]
    fn cancelled_entries_never_fire_and_keys_go_stale() {
        let mut w = Wheel::new();
        let keys: Vec<_> = (1..=200u64).map(|t| (t, w.insert(t * 37, t).unwrap())).collect();
        for &(t, key) in keys.iter().filter(|(t, _)| t % 3 == 0) {
            assert_eq!(w.remove(key), Some(t));
            assert_eq!(w.remove(key), None, "double remove");
            assert!(w.get_mut(key).is_none());
        }
        let fired = fire(&mut w, 200 * 37);
        assert_eq!(fired, (1..=200u64).filter(|t| t % 3 != 0).collect::<Vec<_>>());
        // A fired entry reports it until removed; its slot is then reused
        // under a new generation, so the old key cannot reach the new entry.
        let (t, key) = keys[0];
        assert_eq!(w.get_mut(key).map(|(p, f)| (*p, f)), Some((t, true)));
        assert_eq!(w.remove(key), Some(t));
        let reused = w.insert(w.elapsed() + 5, 999).unwrap();
        assert_eq!(reused.index, key.index);
        assert!(w.get_mut(key).is_none());
        assert_eq!(w.get_mut(reused).map(|(p, f)| (*p, f)), Some((999, false)));
    }

    #[test]
    fn advance_free_frees_fired_entries_and_their_keys_go_stale() {
        let mut w = Wheel::new();
        let keys: Vec<_> = [5u64, 70, 70, 5000, SPAN_TICKS * 2].iter().map(|&t| (t, w.insert(t, t).unwrap())).collect();
        let mut out = Vec::new();
        assert_eq!(w.advance_free(70, |p| out.push(p)), 3);
        assert_eq!(out, vec![5, 70, 70]);
        assert_eq!(w.pending(), 2);
        for &(t, key) in &keys {
            // Fired entries are gone; pending ones still answer.
            assert_eq!(w.get_mut(key).is_some(), t > 70, "tick {t}");
        }
        assert_eq!(w.remove(keys[0].1), None, "a fired key is stale");
        // The freed slots are reused; the old keys do not reach the new entries.
        let reused = w.insert(71, 71).unwrap();
        assert!(keys[..3].iter().any(|(_, k)| k.index == reused.index));
        assert!(keys[..3].iter().all(|(_, k)| w.get_mut(*k).is_none()));
        out.clear();
        assert_eq!(w.fire_all_free(|p| out.push(p)), 3);
        out.sort_unstable();
        assert_eq!(out, vec![71, 5000, SPAN_TICKS * 2]);
        assert_eq!((w.pending(), w.next_expiration()), (0, None));
        assert_eq!(w.remove(keys[3].1), None);
    }

    #[test]
    fn same_millisecond_fires_together_in_deadline_order() {
        let mut w = Wheel::new();
        for (i, t) in [500u64, 3, 64, 500, 4097, 3, 65].into_iter().enumerate() {
            w.insert(t, t * 10 + i as u64).unwrap();
        }
        let fired = fire(&mut w, 10_000);
        let ticks: Vec<u64> = fired.iter().map(|p| p / 10).collect();
        assert_eq!(ticks, vec![3, 3, 64, 65, 500, 500, 4097]);
    }

    #[test]
    fn fire_all_fires_every_pending_entry() {
        let mut w = Wheel::new();
        let whens = [5u64, 70, 5000, SPAN_TICKS / 2, SPAN_TICKS * 4];
        for t in whens {
            w.insert(t, t).unwrap();
        }
        let mut out = Vec::new();
        assert_eq!(w.fire_all(|p| out.push(*p)), whens.len());
        out.sort_unstable();
        assert_eq!(out, whens);
        assert_eq!(w.pending(), 0);
        assert_eq!(w.next_expiration(), None);
    }

    /// Random inserts, cancels and advances (small steps and big jumps)
    /// against a reference model: every advance fires exactly the entries the
    /// model says are due, in deadline order.
    #[test]
    fn matches_a_reference_model() {
        let mut rng = StdRng::seed_from_u64(0x5eed_1234);
        let mut w = Wheel::new();
        let mut model: BTreeMap<(u64, u64), TimerKey> = BTreeMap::new();
        let mut id = 0u64;
        for _ in 0..20_000 {
            match rng.random_range(0..10) {
                0..=4 => {
                    let horizon = 1u64 << rng.random_range(1..40);
                    let when = w.elapsed() + 1 + rng.random_range(0..horizon);
                    id += 1;
                    model.insert((when, id), w.insert(when, id).unwrap());
                }
                5 | 6 if !model.is_empty() => {
                    let nth = rng.random_range(0..model.len());
                    let (&k, &key) = model.iter().nth(nth).unwrap();
                    model.remove(&k);
                    assert_eq!(w.remove(key), Some(k.1));
                }
                _ => {
                    let step =
                        if rng.random_bool(0.1) { 1 << rng.random_range(10..38) } else { rng.random_range(0..200) };
                    let now = w.elapsed() + step;
                    let due: Vec<(u64, u64)> = model.range(..(now + 1, 0)).map(|(k, _)| *k).collect();
                    let fired = fire(&mut w, now);
                    let mut fired_keys: Vec<(u64, u64)> = Vec::new();
                    for p in fired {
                        let k = *due.iter().find(|k| k.1 == p).expect("fired an entry that is not due");
                        fired_keys.push(k);
                    }
                    let mut sorted = fired_keys.clone();
                    sorted.sort_unstable_by_key(|k| k.0);
                    let in_order: Vec<u64> = fired_keys.iter().map(|k| k.0).collect();
                    assert_eq!(in_order, sorted.iter().map(|k| k.0).collect::<Vec<_>>(), "out of order");
                    assert_eq!(fired_keys.len(), due.len(), "missed due entries");
                    for k in due {
                        w.remove(model.remove(&k).unwrap()).unwrap();
                    }
                }
            }
            assert_eq!(w.pending(), model.len());
            if let (Some(next), Some(((first, _), _))) = (w.next_expiration(), model.first_key_value()) {
                assert!(next <= *first && next > w.elapsed(), "next {next} first {first}");
            }
        }
    }
}
