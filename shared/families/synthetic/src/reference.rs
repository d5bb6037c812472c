//! The plain second implementation: the tree materialised node by node, in
//! depth-first order, each node's own hash computed from its children's
//! checksums. No budget, no whole-subtree shortcut: for small trees only.

use crate::tree::{Node, Tree};

/// One node of the materialised tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Visited {
    /// The path of child indices, the first among the root units.
    pub path: Vec<u32>,
    pub size: u64,
    /// The node's own hash.
    pub hash: u64,
}

/// Every node of `tree` in depth-first order. Checks on the way that each
/// node's size is one more than its children's.
pub fn nodes(tree: &Tree) -> Vec<Visited> {
    fn walk(tree: &Tree, node: Node, path: &mut Vec<u32>, out: &mut Vec<Visited>) {
        let children = tree.children(&node);
        let below: u64 = children.iter().map(|c| c.size).sum();
        assert_eq!(node.size, below + 1, "node {path:?}: sizes do not add up");
        let hash = children
            .iter()
            .fold(node.checksum, |h, c| h.wrapping_sub(c.checksum));
        out.push(Visited {
            path: path.clone(),
            size: node.size,
            hash,
        });
        for (i, c) in children.into_iter().enumerate() {
            path.push(i as u32);
            walk(tree, c, path, out);
            path.pop();
        }
    }
    let mut out = Vec::new();
    for (i, top) in tree.top().iter().enumerate() {
        walk(tree, *top, &mut vec![i as u32], &mut out);
    }
    out
}
