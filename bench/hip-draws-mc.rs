//! A Monte Carlo estimate of the draws of Hip with k colours: the fraction
//! of uniformly random k-colourings of an R x C board with no monochromatic
//! square (any tilt), times k^N; and of uniformly random colourings with the
//! playable stone counts (colour j holds q + 1 stones for j < r and q
//! otherwise, N = qk + r), times the multinomial number of such colourings.
//! An independent plausibility check of an exact count (the 6x6 three-colour
//! count of `hip-draws` above all): nothing of the orchard crates is used,
//! the squares are found by testing every 4-cell subset for equal sides and
//! diagonals, and each estimate comes with its standard error.
//!
//! Build: rustc -O bench/hip-draws-mc.rs -o hip-draws-mc
//! Usage: hip-draws-mc ROWS COLS COLOURS SAMPLES [SEED]
//! Prints two lines, `draws ESTIMATE SE HITS SAMPLES` and `playable ...`.

fn main() {
    let args: Vec<u64> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("a number"))
        .collect();
    if args.len() < 4 {
        eprintln!("usage: hip-draws-mc ROWS COLS COLOURS SAMPLES [SEED]");
        std::process::exit(2);
    }
    let (rows, cols, k, samples) = (
        args[0] as usize,
        args[1] as usize,
        args[2] as usize,
        args[3],
    );
    let seed = args.get(4).copied().unwrap_or(1);
    let n = rows * cols;
    assert!(n <= 64 && (2..=8).contains(&k), "at most 64 cells, 2..8 colours");
    let squares = squares(rows, cols);
    let mut rng = SplitMix(seed);
    // Uniform colourings.
    let mut hits = 0u64;
    for _ in 0..samples {
        let mut colour = [0u64; 8];
        for cell in 0..n {
            colour[rng.below(k as u64) as usize] |= 1 << cell;
        }
        hits += u64::from(no_square(&squares, &colour[..k]));
    }
    let all = (k as f64).powi(n as i32);
    report("draws", hits, samples, all);
    // Colourings with the playable stone counts: a shuffled multiset.
    let (q, r) = (n / k, n % k);
    let mut cells: Vec<usize> = (0..k)
        .flat_map(|j| std::iter::repeat_n(j, q + usize::from(j < r)))
        .collect();
    let mut hits = 0u64;
    for _ in 0..samples {
        for i in (1..n).rev() {
            let j = rng.below(i as u64 + 1) as usize;
            cells.swap(i, j);
        }
        let mut colour = [0u64; 8];
        for (cell, &c) in cells.iter().enumerate() {
            colour[c] |= 1 << cell;
        }
        hits += u64::from(no_square(&squares, &colour[..k]));
    }
    // N! / prod(stones!) in floating point (ln-gamma by sums of logs).
    let ln_fact = |m: usize| (1..=m).map(|v| (v as f64).ln()).sum::<f64>();
    let ln_multi = ln_fact(n)
        - (0..k)
            .map(|j| ln_fact(q + usize::from(j < r)))
            .sum::<f64>();
    report("playable", hits, samples, ln_multi.exp());
}

fn report(what: &str, hits: u64, samples: u64, space: f64) {
    let p = hits as f64 / samples as f64;
    let se = (p * (1.0 - p) / samples as f64).sqrt();
    println!(
        "{what} {:.6e} {:.3e} {hits} {samples}",
        p * space,
        se * space
    );
}

fn no_square(squares: &[u64], colour: &[u64]) -> bool {
    squares
        .iter()
        .all(|&sq| colour.iter().all(|&c| c & sq != sq))
}

/// Every square as a 4-cell mask: four points are the corners of a square
/// iff, of their six squared distances, the four smallest are equal and
/// positive and the two largest are twice that.
fn squares(rows: usize, cols: usize) -> Vec<u64> {
    let n = rows * cols;
    let d2 = |a: usize, b: usize| {
        let (ar, ac, br, bc) = (a / cols, a % cols, b / cols, b % cols);
        let (dr, dc) = (ar as i64 - br as i64, ac as i64 - bc as i64);
        dr * dr + dc * dc
    };
    let mut out = Vec::new();
    for a in 0..n {
        for b in a + 1..n {
            for c in b + 1..n {
                for d in c + 1..n {
                    let v = [a, b, c, d];
                    let mut ds = Vec::with_capacity(6);
                    for i in 0..4 {
                        for j in i + 1..4 {
                            ds.push(d2(v[i], v[j]));
                        }
                    }
                    ds.sort_unstable();
                    if ds[0] > 0 && ds[0] == ds[3] && ds[4] == ds[5] && ds[4] == 2 * ds[0] {
                        out.push(v.iter().fold(0u64, |m, &x| m | 1 << x));
                    }
                }
            }
        }
    }
    out
}

/// SplitMix64 (Steele, Lea and Flood), with Lemire's multiply-shift for a
/// number below `m`.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, m: u64) -> u64 {
        ((self.next() as u128 * m as u128) >> 64) as u64
    }
}
