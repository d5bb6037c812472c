//! Prints the shape of synthetic trees: the share of the nodes held by the
//! largest 1% of the subtrees at each depth, and the depth of the deepest
//! exploration paths. `cargo run --release -p orchard-synthetic --example shape`
use orchard_synthetic::Tree;

fn main() {
    for tail in 0..=3 {
        let tree = Tree::new(1, 1 << 40, tail, 8, 1);
        let mut level = vec![tree.top()[0]];
        let mut line = format!("tail {tail}:");
        for depth in 1..=7 {
            level = level.iter().flat_map(|n| tree.children(n)).collect();
            let mut sizes: Vec<u64> = level.iter().map(|n| n.size).collect();
            sizes.sort_unstable_by(|a, b| b.cmp(a));
            let total: u64 = sizes.iter().sum();
            let top: u64 = sizes[..(sizes.len() / 100).max(1)].iter().sum();
            line += &format!(
                " d{depth}({}) {:.0}%",
                sizes.len(),
                100.0 * top as f64 / total as f64
            );
        }
        // Depth: the longest rest path of explorations cut at many budgets.
        let mut deepest = 0;
        for b in 1..200u64 {
            let (_, rest) = tree
                .explore(&[0], &[], b * 5_000_000_007, &|| false, true)
                .unwrap();
            deepest = deepest.max(
                rest.iter()
                    .map(|(r, f)| r.len() + f.len())
                    .max()
                    .unwrap_or(0),
            );
        }
        println!("{line}; deepest cut {deepest}");
    }
    // How many units a job becomes: every unit explored with the budget,
    // every rest handed back followed (one piece per budget; fanned out,
    // as a stop request would, one per level of the path).
    for (nodes, budget) in [
        (1u64 << 40, 1u64 << 32),
        (1 << 36, 1 << 30),
        (1 << 30, 1 << 20),
    ] {
        let tree = Tree::new(1, nodes, 2, 8, 1);
        for fan_out in [false, true] {
            let (mut units, mut splits) = (0u64, 0u64);
            let mut pending = vec![(vec![0u32], Vec::new())];
            while let Some((root, from)) = pending.pop() {
                units += 1;
                let (_, rest) = tree
                    .explore(&root, &from, budget, &|| false, fan_out)
                    .unwrap();
                splits += u64::from(!rest.is_empty());
                pending.extend(rest);
            }
            println!(
                "{nodes} nodes, budget {budget}, fanned out {fan_out}: {units} units, {splits} split"
            );
        }
    }
}
