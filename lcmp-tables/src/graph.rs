//! Adjacency lists and per-destination route data over nodes and
//! undirected edges: one breadth-first search and one dynamic-programming
//! pass per destination, `O(V + E)` each, so building every switch's
//! tables costs `O(V (V + E))`; and Dijkstra's least delay over any path,
//! `O((V + E) log V)`.
//!
//! It knows nothing of topologies (`crate::topology` builds a [`Graph`]
//! from its DCs and links; nothing here imports it back).

use alloc::collections::{BTreeMap, BinaryHeap, VecDeque};
use alloc::vec::Vec;
use core::cmp::Reverse;

/// An undirected edge between two node ids (a topology's link).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Edge {
    /// One end (node id).
    pub(crate) a: u16,
    /// The other end (node id).
    pub(crate) b: u16,
    /// Capacity, bits per second.
    pub(crate) capacity_bps: u64,
    /// Delay, microseconds.
    pub(crate) delay_us: u64,
}

/// Nodes as indices `0..n` (in the order given) with adjacency lists
/// sorted by neighbour id, then edge index.
pub(crate) struct Graph {
    ids: Vec<u16>,
    index: BTreeMap<u16, usize>,
    /// `adj[v]`: `(neighbour index, edge index)`.
    adj: Vec<Vec<(usize, usize)>>,
    edges: Vec<Edge>,
}

/// What every DC knows about one destination.
pub(crate) struct ToDst {
    /// Minimum hop count to the destination, `None` if unreachable.
    pub(crate) hops: Vec<Option<u32>>,
    /// The best minimum-hop path: least delay, then widest bottleneck.
    pub(crate) best: Vec<Option<(u64, u64)>>,
}

impl Graph {
    /// The graph of nodes `ids` and `edges` (edge indices are positions
    /// in `edges`; edges to unknown ids and loops are ignored).
    pub(crate) fn new(ids: Vec<u16>, edges: Vec<Edge>) -> Graph {
        let mut index = BTreeMap::new();
        for (i, &id) in ids.iter().enumerate() {
            index.entry(id).or_insert(i);
        }
        let mut adj: Vec<Vec<(usize, usize)>> = alloc::vec![Vec::new(); ids.len()];
        for (li, l) in edges.iter().enumerate() {
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
        Graph {
            ids,
            index,
            adj,
            edges,
        }
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
    pub(crate) fn to_dst(&self, dst: usize) -> ToDst {
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
                let (Some(Some((d, c))), Some(l)) = (best.get(u).copied(), self.edges.get(li))
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
    /// sorted like `Topology::ports` (neighbour id, then link index).
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
    pub(crate) fn least_delay(&self, start: usize, goal: usize) -> Option<u64> {
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
                let Some(l) = self.edges.get(li) else {
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

    fn edge(a: u16, b: u16, capacity_bps: u64, delay_us: u64) -> Edge {
        Edge {
            a,
            b,
            capacity_bps,
            delay_us,
        }
    }

    /// 1 reaches 4 over two hops through 2 or 3, equally delayed: the
    /// best path is the wider bottleneck whichever neighbour comes first;
    /// a shorter-delay path wins over a wider one.
    #[test]
    fn best_paths_are_least_delay_then_widest() {
        for (first, second) in [(10, 100), (100, 10)] {
            let g = Graph::new(
                alloc::vec![1, 2, 3, 4],
                alloc::vec![
                    edge(1, 2, first, 1000),
                    edge(1, 3, second, 1000),
                    edge(2, 4, 1000, 1000),
                    edge(3, 4, 1000, 1000),
                ],
            );
            let to = g.to_dst(g.index(4).expect("4"));
            let one = g.index(1).expect("1");
            assert_eq!(to.hops[one], Some(2));
            assert_eq!(to.best[one], Some((2000, 100)), "{first}, {second}");
        }
        let g = Graph::new(
            alloc::vec![1, 2, 3, 4],
            alloc::vec![
                edge(1, 2, 1000, 1000),
                edge(1, 3, 10, 900),
                edge(2, 4, 1000, 1000),
                edge(3, 4, 1000, 1000),
            ],
        );
        let to = g.to_dst(g.index(4).expect("4"));
        assert_eq!(to.best[g.index(1).expect("1")], Some((1900, 10)));
    }

    #[test]
    fn least_delay_takes_any_path() {
        // 1-2-3 costs 2 ms in two hops; the direct 1-3 link costs 5 ms.
        let g = Graph::new(
            alloc::vec![1, 2, 3, 9],
            alloc::vec![
                edge(1, 2, 1, 1000),
                edge(2, 3, 1, 1000),
                edge(1, 3, 1, 5000)
            ],
        );
        let (a, c) = (g.index(1).expect("1"), g.index(3).expect("3"));
        assert_eq!(g.least_delay(a, c), Some(2000));
        assert_eq!(g.least_delay(a, a), Some(0));
        assert_eq!(
            g.least_delay(a, g.index(9).expect("9")),
            None,
            "unreachable"
        );
    }
}
