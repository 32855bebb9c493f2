use super::*;

#[test]
fn cpulists_parse_the_kernels_syntax() {
    assert_eq!(parse_cpulist("0-3,8-11\n").unwrap(), [0, 1, 2, 3, 8, 9, 10, 11]);
    assert_eq!(parse_cpulist("5").unwrap(), [5]);
    assert_eq!(parse_cpulist("0,2,4-5").unwrap(), [0, 2, 4, 5]);
    assert_eq!(parse_cpulist("64-65,0-1").unwrap(), [0, 1, 64, 65], "sorted");
    assert_eq!(parse_cpulist("0-2,1-3").unwrap(), [0, 1, 2, 3], "distinct");
    assert_eq!(parse_cpulist("").unwrap(), Vec::<usize>::new(), "a node without CPUs");
    assert_eq!(parse_cpulist("\n").unwrap(), Vec::<usize>::new());
    for bad in ["3-1", "a", "0-", "-1", "1-2-3", "99999999"] {
        let e = parse_cpulist(bad).unwrap_err();
        assert_eq!(e.text, bad);
        assert!(e.to_string().contains(&format!("`{bad}`")) && e.to_string().contains("0-3,8-11"), "{e}");
    }
}

/// A 2-socket machine, 2 L3 caches per socket, 4 CPUs per L3, as sysfs
/// lists it: one `shared_cpu_list` per CPU (repeats), one list per node.
fn two_sockets() -> CpuTopology {
    let l3: Vec<&str> = (0..16).map(|cpu| ["0-3", "4-7", "8-11", "12-15"][cpu / 4]).collect();
    CpuTopology::from_lists(l3, ["8-15\n", "0-7\n"]).unwrap()
}

#[test]
fn sysfs_lists_become_distinct_groups() {
    let t = two_sockets();
    assert_eq!(t.l3_groups, vec![vec![0, 1, 2, 3], vec![4, 5, 6, 7], vec![8, 9, 10, 11], vec![12, 13, 14, 15]]);
    assert_eq!(t.numa_nodes, vec![(0..8).collect::<Vec<_>>(), (8..16).collect()]);
    let e = CpuTopology::from_lists(["0-3", "x"], ["0-3"]).unwrap_err();
    assert_eq!(e.text, "x");
}

/// Whatever this machine has: every CPU listed at most once per list.
#[test]
fn this_machines_sysfs_reads() {
    let t = CpuTopology::read_sysfs();
    for lists in [&t.l3_groups, &t.numa_nodes] {
        let mut all: Vec<usize> = lists.iter().flatten().copied().collect();
        let n = all.len();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), n, "a CPU in two groups: {t:?}");
    }
}

#[test]
fn pinned_workers_take_their_cores_groups() {
    let t = two_sockets();
    // Workers 0..6 on cores 0, 5, 9, 13, then round again: 0, 5.
    let w = WorkerTopology::from_pinning(&t, &[0, 5, 9, 13], 6).unwrap();
    assert_eq!(w.l3, [0, 1, 2, 3, 0, 1]);
    assert_eq!(w.numa, [0, 0, 1, 1, 0, 0]);
    assert_eq!(WorkerTopology::from_pinning(&t, &[], 4), None, "unpinned: unknown");
    assert_eq!(WorkerTopology::from_pinning(&CpuTopology::default(), &[0], 2), None);
    // No L3 lists: grouped by node.
    let numa_only = CpuTopology::from_lists([], ["0-1", "2-3"]).unwrap();
    let w = WorkerTopology::from_pinning(&numa_only, &[0, 1, 2, 3], 4).unwrap();
    assert!(w.same_group(0, 1) && w.same_group(2, 3) && !w.same_group(1, 2));
}

#[test]
fn imposed_groupings_parse_and_print() {
    assert_eq!("8x16".parse::<Imposed>().unwrap(), Imposed { groups: 8, size: 16 });
    assert_eq!("2x1".parse::<Imposed>().unwrap().workers(), 2);
    assert_eq!(Imposed { groups: 8, size: 16 }.to_string(), "8x16");
    for bad in ["0x4", "4x0", "x", "8*16", "2x", "x2", "-1x2", "4096x2", "2x1x1", ""] {
        let e = bad.parse::<Imposed>().unwrap_err().to_string();
        assert!(e.contains(&format!("`{bad}`")) && e.contains("GROUPSxSIZE"), "{e}");
    }
    let w = WorkerTopology::imposed(Imposed { groups: 3, size: 2 });
    assert_eq!(w.l3, [0, 0, 1, 1, 2, 2]);
    assert_eq!(w.numa, [0; 6]);
}

#[test]
fn levels_are_same_l3_then_same_node_then_the_rest() {
    // Workers on cores 0, 1, 4, 5, 8, 12: L3 groups 0, 0, 1, 1, 2, 3;
    // nodes 0, 0, 0, 0, 1, 1.
    let w = WorkerTopology::from_pinning(&two_sockets(), &[0, 1, 4, 5, 8, 12], 6).unwrap();
    let want: [(usize, [&[usize]; 3]); 6] = [
        (0, [&[1], &[2, 3], &[4, 5]]),
        (1, [&[0], &[2, 3], &[4, 5]]),
        (2, [&[3], &[0, 1], &[4, 5]]),
        (3, [&[2], &[0, 1], &[4, 5]]),
        (4, [&[], &[5], &[0, 1, 2, 3]]),
        (5, [&[], &[4], &[0, 1, 2, 3]]),
    ];
    for (me, levels) in want {
        assert_eq!(w.levels(me), levels.map(<[usize]>::to_vec), "worker {me}");
    }
    // 2x1: each worker alone in its group; the other shares the (only)
    // node.
    let w = WorkerTopology::imposed(Imposed { groups: 2, size: 1 });
    assert_eq!(w.levels(0), [vec![], vec![1], vec![]]);
    assert_eq!(w.levels(1), [vec![], vec![0], vec![]]);
}
