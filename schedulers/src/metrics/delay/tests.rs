use super::*;

/// Every tick value falls in the bucket `bucket_of` names, checked
/// against the bucket bounds computed the other way round, at every
/// bucket edge and between.
#[test]
fn every_value_lands_in_the_bucket_that_covers_it() {
    let mut previous_high = 0;
    for i in 0..BUCKETS {
        let (low, high) = bucket_ticks(i);
        assert_eq!(low, previous_high, "bucket {i} does not start where {} ended", i.saturating_sub(1));
        previous_high = high;
        for v in [low, (low + high) / 2, high - 1] {
            assert_eq!(bucket_of(v as u32), i, "value {v} (bucket {i}: {low}..{high})");
        }
        // No bucket is wider than 1/32 of its lower bound.
        assert!(high - low <= (low / SUB_BUCKETS as u64).max(1), "bucket {i}: {low}..{high}");
    }
    assert_eq!(previous_high, 1u64 << VALUE_BITS, "the buckets cover every 32-bit value");
    assert_eq!(bucket_of(u32::MAX), BUCKETS - 1);
}

#[test]
fn a_window_is_the_difference_and_cores_merge() {
    let blocks = delay_blocks(2);
    blocks[0].record(0);
    blocks[1].record(100);
    let before = snapshot(&blocks);
    blocks[0].record(100);
    blocks[1].record(5_000_000);
    let window = snapshot(&blocks).since(&before);
    assert_eq!(window.count(), 2);
    let buckets: Vec<_> = window.buckets().collect();
    // 100 ticks: bucket [100, 102) (width 2 between 64 and 128 ticks).
    assert_eq!(buckets[0], (100 * TICK_NS, 102 * TICK_NS, 1));
    assert!(buckets[1].0 <= 5_000_000 * TICK_NS && 5_000_000 * TICK_NS < buckets[1].1, "{buckets:?}");
    let mut merged = window.clone();
    merged.merge(&before);
    assert_eq!(merged.count(), 4);
    assert_eq!(DelayHistogram::default().count(), 0);
}
