use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use wsbench_schedulers::{Builder, SchedulerKind};

fn kinds() -> Vec<(SchedulerKind, usize)> {
    let mut v = vec![(SchedulerKind::CurrentThread, 1)];
    for k in [
        SchedulerKind::Global,
        SchedulerKind::PerWorker,
        SchedulerKind::StealOne,
        SchedulerKind::StealHalf,
        SchedulerKind::ThreadPerCore,
        SchedulerKind::Bwos,
    ] {
        for w in [1, 2, 8] {
            v.push((k, w));
        }
    }
    v
}

#[test]
fn smoke_spawn_join_yield() {
    for (k, w) in kinds() {
        let rt = Builder::new(k).workers(w).build().unwrap();
        let count = Arc::new(AtomicUsize::new(0));
        let c = count.clone();
        let v = rt.block_on(async move {
            let mut hs = Vec::new();
            for i in 0..1000u64 {
                let c = c.clone();
                hs.push(wsbench_schedulers::spawn(async move {
                    wsbench_schedulers::task::yield_now().await;
                    c.fetch_add(1, Ordering::Relaxed);
                    i
                }));
            }
            let mut sum = 0;
            for h in hs {
                sum += h.await.unwrap();
            }
            sum
        });
        assert_eq!(v, 999 * 1000 / 2, "{k} {w}");
        assert_eq!(count.load(Ordering::Relaxed), 1000);
        let m = rt.metrics();
        eprintln!("{k} {w}: {:?}", m.totals());
        rt.shutdown_timeout(std::time::Duration::from_secs(5));
    }
}

#[test]
fn smoke_sleep_and_spawned_sleep() {
    use std::time::{Duration, Instant};
    for (k, w) in kinds() {
        let rt = Builder::new(k).workers(w).build().unwrap();
        let start = Instant::now();
        rt.block_on(async {
            wsbench_schedulers::time::sleep(Duration::from_millis(20)).await;
            let h = wsbench_schedulers::spawn(async {
                wsbench_schedulers::time::sleep(Duration::from_millis(10)).await;
                7
            });
            assert_eq!(h.await.unwrap(), 7);
        });
        let el = start.elapsed();
        assert!(el >= Duration::from_millis(30), "{k} {w}: {el:?}");
        eprintln!("{k} {w}: sleep ok {el:?}");
    }
}
