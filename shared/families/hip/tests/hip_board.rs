//! Hip board geometry: the square generator against every 4-cell subset, the
//! closed formula, and the symmetry group.

use orchard_hip::board::{square_count, Board};
use orchard_hip::{board_dims, reference};

/// Every board with `2 <= rows <= cols` and at most `max_cells` cells.
fn boards(max_cells: usize) -> Vec<(usize, usize)> {
    let mut v = Vec::new();
    for r in 2..=8 {
        for c in r..=32 {
            if r * c <= max_cells {
                v.push((r, c));
            }
        }
    }
    v
}

#[test]
fn squares_match_all_four_cell_subsets() {
    for (r, c) in boards(30) {
        let b = Board::new(r, c);
        let mut want: Vec<u64> = reference::squares_by_subsets(r, c)
            .iter()
            .map(|s| s.iter().fold(0u64, |m, &i| m | 1 << i))
            .collect();
        want.sort_unstable();
        assert_eq!(b.squares, want, "{r}x{c}");
    }
}

#[test]
fn square_counts_follow_the_formulas() {
    for (r, c) in boards(64) {
        let b = Board::new(r, c);
        let by_formula: usize = (1..r).map(|s| s * (r - s) * (c - s)).sum();
        assert_eq!(b.squares.len(), by_formula, "{r}x{c}");
        assert_eq!(square_count(r, c), by_formula);
        if r == c {
            assert_eq!(
                b.squares.len(),
                r * r * (r * r - 1) / 12,
                "n^2(n^2-1)/12 on {r}x{r}"
            );
        }
        // Each square through each of its cells once.
        let through: usize = (0..b.n).map(|cell| b.others(cell).len()).sum();
        assert_eq!(through, 4 * b.squares.len());
    }
    assert_eq!(
        Board::new(6, 6).squares.len(),
        105,
        "Funabiki & Takefuji, Fig. 1"
    );
}

#[test]
fn symmetries_form_the_board_group() {
    for (r, c) in boards(64) {
        let b = Board::new(r, c);
        assert_eq!(b.symmetries(), if r == c { 8 } else { 4 }, "{r}x{c}");
        let squares: std::collections::BTreeSet<u64> = b.squares.iter().copied().collect();
        let mut seen = std::collections::BTreeSet::new();
        for g in 0..b.symmetries() {
            let p = &b.perms[g];
            // A permutation of the cells...
            let mut cells: Vec<u8> = p[..b.n].to_vec();
            cells.sort_unstable();
            assert_eq!(cells, (0..b.n as u8).collect::<Vec<_>>());
            assert!(seen.insert(p[..b.n].to_vec()), "symmetries are distinct");
            // ...that maps squares to squares...
            for &s in &b.squares {
                assert!(squares.contains(&b.transform(g, s)));
            }
            // ...whose inverse is listed...
            let inv = &b.perms[b.inverse[g]];
            assert!((0..b.n).all(|i| inv[p[i] as usize] as usize == i));
            // ...and whose bitboard transform agrees with the permutation.
            let mut x = 0x9e37_79b9_7f4a_7c15u64 & b.full;
            for _ in 0..20 {
                let want = (0..b.n)
                    .filter(|&i| x >> i & 1 == 1)
                    .fold(0u64, |m, i| m | 1 << p[i]);
                assert_eq!(b.transform(g, x), want);
                x = x.rotate_left(7).wrapping_mul(0x2545_f491_4f6c_dd1d) & b.full;
            }
        }
        // Closed under composition.
        for g in 0..b.symmetries() {
            for h in 0..b.symmetries() {
                let comp: Vec<u8> = (0..b.n)
                    .map(|i| b.perms[g][b.perms[h][i] as usize])
                    .collect();
                assert!(seen.contains(&comp));
            }
        }
    }
}

#[test]
fn canonical_form_is_invariant() {
    let b = Board::new(5, 5);
    let mut x = 12345u64;
    for _ in 0..200 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let p1 = (x >> 7) & b.full;
        let p2 = (x >> 30) & b.full & !p1;
        let (k1, k2, g) = b.canonical2(p1, p2);
        assert_eq!((b.transform(g, p1), b.transform(g, p2)), (k1, k2));
        for h in 0..b.symmetries() {
            let (a, c, _) = b.canonical2(b.transform(h, p1), b.transform(h, p2));
            assert_eq!((a, c), (k1, k2));
        }
    }
}

#[test]
fn dimensions_are_validated_and_normalised() {
    assert_eq!(board_dims(5, 4).unwrap(), (4, 5));
    assert_eq!(board_dims(2, 32).unwrap(), (2, 32));
    assert_eq!(board_dims(8, 8).unwrap(), (8, 8));
    assert_eq!(board_dims(9, 9).unwrap_err().name, "cols");
    assert_eq!(board_dims(1, 5).unwrap_err().name, "rows");
    assert_eq!(board_dims(5, 1).unwrap_err().name, "cols");
    assert_eq!(board_dims(2, 33).unwrap_err().name, "cols");
}

/// The unbounded enumeration (`square_corners`, `symmetry_perms`) beyond the
/// 64 cells of a bitboard: every listed quadruple is a square walked round
/// (equal sides, equal diagonals of twice the squared side), none twice, as
/// many as the closed formula, and every symmetry maps the set onto itself.
#[test]
fn unbounded_squares_and_symmetries_beyond_64_cells() {
    use orchard_hip::board::{square_corners, symmetry_perms};
    for (r, c) in [(8, 9), (10, 10), (9, 13), (12, 12), (16, 16)] {
        let squares = square_corners(r, c);
        assert_eq!(squares.len(), square_count(r, c), "{r}x{c}");
        let pt = |i: usize| ((i / c) as i64, (i % c) as i64);
        let d2 = |a: usize, b: usize| {
            let (p, q) = (pt(a), pt(b));
            (p.0 - q.0).pow(2) + (p.1 - q.1).pow(2)
        };
        let mut set = std::collections::BTreeSet::new();
        for q in &squares {
            let side = d2(q[0], q[1]);
            assert!(side > 0);
            for i in 0..4 {
                assert_eq!(d2(q[i], q[(i + 1) % 4]), side, "{q:?}");
            }
            assert_eq!(d2(q[0], q[2]), 2 * side);
            assert_eq!(d2(q[1], q[3]), 2 * side);
            let mut s = *q;
            s.sort_unstable();
            assert!(set.insert(s), "{q:?} listed twice");
        }
        let perms = symmetry_perms(r, c);
        assert_eq!(perms.len(), if r == c { 8 } else { 4 });
        for p in &perms {
            for q in &squares {
                let mut s = q.map(|cell| p[cell]);
                s.sort_unstable();
                assert!(set.contains(&s));
            }
        }
    }
}
