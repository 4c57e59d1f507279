//! Adjacency lists and per-destination route data for [`Topology`]: one
//! breadth-first search and one dynamic-programming pass per destination,
//! `O(V + E)` each, so building every switch's tables costs
//! `O(V (V + E))`; and Dijkstra's least delay over any path,
//! `O((V + E) log V)`.

use alloc::collections::{BTreeMap, BinaryHeap, VecDeque};
use alloc::vec::Vec;
use core::cmp::Reverse;

use crate::topology::Topology;

/// A topology's DCs as indices `0..n` (in [`Topology::dcs`] order) with
/// adjacency lists sorted by neighbour id, then link index.
pub(crate) struct Graph {
    ids: Vec<u16>,
    index: BTreeMap<u16, usize>,
    /// `adj[v]`: `(neighbour index, link index)`.
    adj: Vec<Vec<(usize, usize)>>,
}

/// What every DC knows about one destination.
pub(crate) struct ToDst {
    /// Minimum hop count to the destination, `None` if unreachable.
    pub(crate) hops: Vec<Option<u32>>,
    /// The best minimum-hop path: least delay, then widest bottleneck.
    pub(crate) best: Vec<Option<(u64, u64)>>,
}

impl Graph {
    pub(crate) fn new(topo: &Topology) -> Graph {
        let ids: Vec<u16> = topo.dcs.iter().map(|d| d.id).collect();
        let mut index = BTreeMap::new();
        for (i, &id) in ids.iter().enumerate() {
            index.entry(id).or_insert(i);
        }
        let mut adj: Vec<Vec<(usize, usize)>> = alloc::vec![Vec::new(); ids.len()];
        for (li, l) in topo.links.iter().enumerate() {
            let (Some(&a), Some(&b)) = (index.get(&l.a), index.get(&l.b)) else {
                continue;
            };
            if a == b {
                continue;
            }
            if let Some(v) = adj.get_mut(a) {
                v.push((b, li));
            }
            if let Some(v) = adj.get_mut(b) {
                v.push((a, li));
            }
        }
        for v in &mut adj {
            v.sort_unstable_by_key(|&(n, li)| (ids.get(n).copied().unwrap_or(u16::MAX), li));
        }
        Graph { ids, index, adj }
    }

    pub(crate) fn index(&self, id: u16) -> Option<usize> {
        self.index.get(&id).copied()
    }

    pub(crate) fn id(&self, i: usize) -> Option<u16> {
        self.ids.get(i).copied()
    }

    pub(crate) fn len(&self) -> usize {
        self.ids.len()
    }

    /// Hop counts and best minimum-hop paths of every DC towards `dst`.
    pub(crate) fn to_dst(&self, topo: &Topology, dst: usize) -> ToDst {
        let n = self.ids.len();
        let mut hops: Vec<Option<u32>> = alloc::vec![None; n];
        let mut best: Vec<Option<(u64, u64)>> = alloc::vec![None; n];
        let mut order = Vec::with_capacity(n);
        if let (Some(h), Some(b)) = (hops.get_mut(dst), best.get_mut(dst)) {
            *h = Some(0);
            *b = Some((0, u64::MAX));
        } else {
            return ToDst { hops, best };
        }
        let mut queue = VecDeque::from([dst]);
        while let Some(v) = queue.pop_front() {
            order.push(v);
            let Some(Some(h)) = hops.get(v).copied() else {
                continue;
            };
            for &(u, _) in self.adj.get(v).map_or(&[][..], Vec::as_slice) {
                if let Some(slot @ None) = hops.get_mut(u) {
                    *slot = Some(h.saturating_add(1));
                    queue.push_back(u);
                }
            }
        }
        // BFS order has non-decreasing hop counts: every node's next hops
        // are final before it is visited. Delay is additive and the
        // bottleneck a monotone min, so the per-node lexicographic optimum
        // (least delay, then widest) is the global one.
        for &v in order.iter().skip(1) {
            let Some(Some(h)) = hops.get(v).copied() else {
                continue;
            };
            let mut pick: Option<(u64, u64)> = None;
            for &(u, li) in self.adj.get(v).map_or(&[][..], Vec::as_slice) {
                if hops.get(u).copied().flatten() != Some(h.saturating_sub(1)) {
                    continue;
                }
                let (Some(Some((d, c))), Some(l)) = (best.get(u).copied(), topo.links.get(li))
                else {
                    continue;
                };
                let cand = (d.saturating_add(l.delay_us), c.min(l.capacity_bps));
                pick = match pick {
                    Some(p) if (p.0, u64::MAX - p.1) <= (cand.0, u64::MAX - cand.1) => Some(p),
                    _ => Some(cand),
                };
            }
            if let Some(b) = best.get_mut(v) {
                *b = pick;
            }
        }
        ToDst { hops, best }
    }

    /// `(neighbour index, link index, port)` of `v`'s links to neighbours
    /// one hop closer to the destination, in port order, one per neighbour.
    /// The port is the link's position in `v`'s adjacency list, which is
    /// sorted like [`Topology::ports`] (neighbour id, then link index).
    pub(crate) fn next_hops(&self, to: &ToDst, v: usize) -> Vec<(usize, usize, usize)> {
        let Some(Some(h)) = to.hops.get(v).copied() else {
            return Vec::new();
        };
        if h == 0 {
            return Vec::new();
        }
        let mut out: Vec<(usize, usize, usize)> = Vec::new();
        for (port, &(u, li)) in self.neighbors(v).iter().enumerate() {
            let closer = to.hops.get(u).copied().flatten() == Some(h.saturating_sub(1));
            if closer && out.last().is_none_or(|&(p, _, _)| p != u) {
                out.push((u, li, port));
            }
        }
        out
    }

    /// Neighbours of `v` with link indices (port order).
    pub(crate) fn neighbors(&self, v: usize) -> &[(usize, usize)] {
        self.adj.get(v).map_or(&[][..], Vec::as_slice)
    }

    /// The least summed link delay from `start` to `goal` over any path
    /// (Dijkstra with a binary heap), microseconds; `None` if unreachable.
    pub(crate) fn least_delay(&self, topo: &Topology, start: usize, goal: usize) -> Option<u64> {
        let mut dist: Vec<Option<u64>> = alloc::vec![None; self.len()];
        let mut done: Vec<bool> = alloc::vec![false; self.len()];
        let mut heap = BinaryHeap::new();
        *dist.get_mut(start)? = Some(0);
        heap.push(Reverse((0u64, start)));
        while let Some(Reverse((d, i))) = heap.pop() {
            match done.get_mut(i) {
                Some(true) | None => continue,
                Some(flag) => *flag = true,
            }
            if i == goal {
                return Some(d);
            }
            for &(j, li) in self.neighbors(i) {
                let Some(l) = topo.links.get(li) else {
                    continue;
                };
                let nd = d.saturating_add(l.delay_us);
                if let Some(slot) = dist.get_mut(j) {
                    if slot.is_none_or(|old| nd < old) {
                        *slot = Some(nd);
                        heap.push(Reverse((nd, j)));
                    }
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::topology::{Dc, Link};
    use alloc::vec;

    /// Every simple path from `s` to `d` as `(hops, delay, bottleneck, first
    /// neighbour)`, by depth-first search.
    fn all_paths(t: &Topology, s: u16, d: u16) -> Vec<(u32, u64, u64, u16)> {
        fn walk(
            t: &Topology,
            at: u16,
            d: u16,
            seen: &mut Vec<u16>,
            acc: (u32, u64, u64, u16),
            out: &mut Vec<(u32, u64, u64, u16)>,
        ) {
            if at == d {
                out.push(acc);
                return;
            }
            for l in &t.links {
                let Some(n) = l.other(at) else { continue };
                if seen.contains(&n) {
                    continue;
                }
                seen.push(n);
                let first = if acc.0 == 0 { n } else { acc.3 };
                let next = (
                    acc.0 + 1,
                    acc.1 + l.delay_us,
                    acc.2.min(l.capacity_bps),
                    first,
                );
                walk(t, n, d, seen, next, out);
                seen.pop();
            }
        }
        let mut out = Vec::new();
        walk(t, s, d, &mut vec![s], (0, 0, u64::MAX, 0), &mut out);
        out
    }

    quickcheck::quickcheck! {
        fn matches_brute_force(edges: Vec<(u8, u8, u8, u8)>, s: u8, d: u8) -> bool {
            let n = 7u16;
            let mut t = Topology {
                name: "r".into(),
                dcs: (1..=n).map(|id| Dc { id, name: alloc::format!("D{id}") }).collect(),
                links: Vec::new(),
                buffer_bytes: 1,
            };
            for (a, b, c, ms) in edges.into_iter().take(12) {
                let (a, b) = (u16::from(a) % n + 1, u16::from(b) % n + 1);
                if a == b || t.link_between(a, b).is_some() {
                    continue;
                }
                t.links.push(Link { a, b, capacity_bps: u64::from(c % 4) + 1, delay_us: u64::from(ms % 5) });
            }
            let (s, d) = (u16::from(s) % n + 1, u16::from(d) % n + 1);
            let paths = all_paths(&t, s, d);
            let min_hops = paths.iter().map(|p| p.0).min();
            if t.hops(s, d) != min_hops {
                return false;
            }
            let shortest: Vec<_> = paths.iter().filter(|p| Some(p.0) == min_hops).collect();
            let best = shortest.iter().map(|p| (p.1, u64::MAX - p.2)).min().map(|(a, b)| (a, u64::MAX - b));
            let mut firsts: Vec<u16> = if s == d { Vec::new() } else { shortest.iter().map(|p| p.3).collect() };
            firsts.sort_unstable();
            firsts.dedup();
            let least = paths.iter().map(|p| p.1).min();
            t.best_min_hop_path(s, d) == best
                && t.next_hops(s, d) == firsts
                && t.shortest_delay_us(s, d) == least
        }
    }

    #[test]
    fn large_grid_gives_a_typed_error_and_right_paths() {
        // 32 x 32 grid: 1024 DCs, 1984 links; every destination's search
        // for the automatic saturation runs once. (How long it takes is a
        // benchmark's business, not a test's.)
        let side = 32u16;
        let id = |r: u16, c: u16| r * side + c + 1;
        let mut t = Topology {
            name: "grid".into(),
            dcs: (1..=side * side)
                .map(|i| Dc {
                    id: i,
                    name: alloc::format!("G{i}"),
                })
                .collect(),
            links: Vec::new(),
            buffer_bytes: 1,
        };
        for r in 0..side {
            for c in 0..side {
                if c + 1 < side {
                    t.links.push(Link {
                        a: id(r, c),
                        b: id(r, c + 1),
                        capacity_bps: 1,
                        delay_us: 1000,
                    });
                }
                if r + 1 < side {
                    t.links.push(Link {
                        a: id(r, c),
                        b: id(r + 1, c),
                        capacity_bps: 1,
                        delay_us: 1000,
                    });
                }
            }
        }
        let opts = crate::BuildOptions {
            saturation: crate::Saturation::Auto,
            metric: crate::PathMetric::Path,
            ..crate::BuildOptions::default()
        };
        assert_eq!(
            crate::build_tables(&t, 1, &opts),
            Err(crate::TablesError::TooMany {
                what: crate::Count::Groups,
                count: 1023
            })
        );
        assert_eq!(t.hops(1, side * side), Some(62));
        assert_eq!(t.next_hops(1, side * side), [2, 33]);
    }
}
