//! The proof-number tree the coordinator holds: nodes, proof and disproof
//! numbers with held leaves counted virtually, settling and the walk to the
//! most-proving leaf (see the [parent module](super)).

use std::collections::HashMap;

use super::PnGame;

/// Proof numbers' infinity.
pub(super) const INF: u64 = u64::MAX / 4;

#[derive(Debug, Clone)]
pub(super) struct Node {
    pub(super) pos: usize,
    pub(super) parent: Option<usize>,
    pub(super) or: bool,
    pub(super) children: Vec<usize>,
    pub(super) expanded: bool,
    /// The position has children to expand into.
    pub(super) expandable: bool,
    /// An open leaf's proof and disproof numbers, before virtual ones.
    pub(super) init: (u64, u64),
    pub(super) value: Option<bool>,
    /// A worker searches this leaf.
    pub(super) held: bool,
    /// Proof and disproof numbers, held leaves counted virtually.
    pub(super) pn: u64,
    pub(super) dn: u64,
    /// Open leaves below that no worker holds.
    pub(super) free: u64,
}

/// The tree at the coordinator.
pub(super) struct Tree {
    pub(super) nodes: Vec<Node>,
    /// What is settled, by position (a transposition settles for free).
    pub(super) settled: HashMap<usize, bool>,
    /// The nodes of each position.
    pub(super) by_pos: HashMap<usize, Vec<usize>>,
    /// Positions settled since [`Tree::update`] last looked.
    pub(super) newly: Vec<usize>,
    pub(super) virtual_pn: u64,
    pub(super) mobility: bool,
}

impl Tree {
    /// A new node for position `pos`, settled if the rules or the tree
    /// already know its answer.
    pub(super) fn add<G: PnGame>(
        &mut self,
        game: &mut G,
        pos: usize,
        parent: Option<usize>,
    ) -> Result<usize, G::Error> {
        let p = game.position(pos)?;
        let value = p.settled.or_else(|| self.settled.get(&pos).copied());
        let i = self.nodes.len();
        let kids = (p.children.len() as u64).max(1);
        let init = match (self.mobility, p.or) {
            (false, _) => (1, 1),
            (true, true) => (1, kids),
            (true, false) => (kids, 1),
        };
        self.nodes.push(Node {
            pos,
            parent,
            or: p.or,
            children: Vec::new(),
            expanded: false,
            expandable: !p.children.is_empty(),
            init,
            value,
            held: false,
            pn: 1,
            dn: 1,
            free: 1,
        });
        self.by_pos.entry(pos).or_default().push(i);
        self.refresh(i);
        Ok(i)
    }

    /// Expands leaf `i`: its children become leaves.
    pub(super) fn expand<G: PnGame>(&mut self, game: &mut G, i: usize) -> Result<(), G::Error> {
        let kids = game.position(self.nodes[i].pos)?.children;
        let mut made = Vec::with_capacity(kids.len());
        for k in kids {
            made.push(self.add(game, k, Some(i))?);
        }
        let n = &mut self.nodes[i];
        n.children = made;
        n.expanded = true;
        Ok(())
    }

    /// Recomputes node `i` from its children (or its own state); whether
    /// anything changed.
    pub(super) fn refresh(&mut self, i: usize) -> bool {
        let n = &self.nodes[i];
        let before = (n.pn, n.dn, n.free, n.value);
        let (mut value, pn, dn, free);
        value = n.value;
        if value.is_none() && n.expanded {
            let kids = n.children.iter().map(|&c| &self.nodes[c]);
            let (sum_pn, sum_dn, min_pn, min_dn, f) =
                kids.fold((0u64, 0u64, INF, INF, 0u64), |(sp, sd, mp, md, f), k| {
                    (
                        (sp + k.pn).min(INF),
                        (sd + k.dn).min(INF),
                        mp.min(k.pn),
                        md.min(k.dn),
                        f + k.free,
                    )
                });
            let (p, d) = if n.or {
                (min_pn, sum_dn)
            } else {
                (sum_pn, min_dn)
            };
            if p == 0 {
                value = Some(true);
            } else if d == 0 {
                value = Some(false);
            }
            (pn, dn, free) = match value {
                Some(_) => (0, 0, 0),
                None => (p, d, f),
            };
        } else {
            let v = if n.held { self.virtual_pn } else { 0 };
            (pn, dn, free) = (
                n.init.0 + v,
                n.init.1 + v,
                u64::from(!n.held && value.is_none()),
            );
        }
        let (pn, dn) = match value {
            Some(true) => (0, INF),
            Some(false) => (INF, 0),
            None => (pn, dn),
        };
        let pos = n.pos;
        let n = &mut self.nodes[i];
        n.pn = pn;
        n.dn = dn;
        n.free = if value.is_some() { 0 } else { free };
        n.value = value;
        if let Some(v) = value {
            if self.settled.insert(pos, v).is_none() {
                self.newly.push(pos);
            }
        }
        before != (pn, dn, self.nodes[i].free, value)
    }

    /// Refreshes `i` and its ancestors, as far as something changes; a
    /// position newly settled settles its other nodes (transpositions),
    /// and their ancestors in turn.
    pub(super) fn update(&mut self, i: usize) {
        let mut work = vec![i];
        while let Some(mut i) = work.pop() {
            loop {
                let changed = self.refresh(i);
                match self.nodes[i].parent {
                    Some(p) if changed => i = p,
                    _ => break,
                }
            }
            for pos in std::mem::take(&mut self.newly) {
                let v = self.settled[&pos];
                for &j in &self.by_pos[&pos] {
                    if self.nodes[j].value.is_none() {
                        self.nodes[j].value = Some(v);
                        work.push(j);
                    }
                }
            }
        }
    }

    /// The most-proving leaf no worker holds (see the module's doc).
    #[cfg(test)]
    pub(super) fn most_proving(&self) -> Option<usize> {
        self.most_proving_toward(None, 0)
    }

    /// The most-proving leaf no worker holds, with affinity to `home`: at
    /// each node of the walk, a child on the path to `home` (an ancestor
    /// of it, or itself) is taken over the best child if its number is at
    /// most `percent` per cent of the best's; `percent` 0 or no `home`:
    /// the plain walk.
    pub(super) fn most_proving_toward(&self, home: Option<usize>, percent: u64) -> Option<usize> {
        let mut i = 0;
        if self.nodes[0].free == 0 {
            return None;
        }
        let mut path = Vec::new();
        if percent > 0 {
            let mut h = home;
            while let Some(j) = h {
                path.push(j);
                h = self.nodes[j].parent;
            }
        }
        while self.nodes[i].expanded {
            let n = &self.nodes[i];
            let number = |c: usize| {
                if n.or {
                    self.nodes[c].pn
                } else {
                    self.nodes[c].dn
                }
            };
            let open = n
                .children
                .iter()
                .copied()
                .filter(|&c| self.nodes[c].free > 0);
            let best = open
                .clone()
                .min_by_key(|&c| number(c))
                .expect("a node with a free leaf has a child with one");
            let near = |c: usize| {
                u128::from(number(c)) * 100 <= u128::from(number(best)) * u128::from(percent)
            };
            i = open
                .filter(|c| path.contains(c))
                .find(|&c| near(c))
                .unwrap_or(best);
        }
        Some(i)
    }

    /// Marks every open leaf of `i`'s position held by a worker (or no
    /// longer): one search settles them all.
    pub(super) fn hold(&mut self, i: usize, held: bool) {
        let pos = self.nodes[i].pos;
        for j in self.by_pos[&pos].clone() {
            let n = &mut self.nodes[j];
            if !n.expanded && n.value.is_none() && n.held != held {
                n.held = held;
                self.update(j);
            }
        }
    }

    /// Whether some node of `i`'s position is outside every settled
    /// subtree (the root may still need its answer).
    pub(super) fn needed(&self, i: usize) -> bool {
        self.by_pos[&self.nodes[i].pos]
            .iter()
            .any(|&j| !self.under_settled(j))
    }

    /// Whether node `i` or one of its ancestors is settled.
    pub(super) fn under_settled(&self, mut i: usize) -> bool {
        loop {
            let n = &self.nodes[i];
            if n.value.is_some() {
                return true;
            }
            match n.parent {
                Some(p) => i = p,
                None => return false,
            }
        }
    }
}
