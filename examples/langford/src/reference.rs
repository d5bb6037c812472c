//! A plain second implementation, for the tests: a different algorithm on
//! purpose (the row filled from the left, each empty cell taking every
//! unused number that fits), so that a mistake shared by both is unlikely.

/// Every Langford sequence of `1, 1, ..., n, n`, as rows of numbers.
pub fn sequences(n: u32) -> Vec<Vec<u32>> {
    let mut row = vec![0u32; 2 * n as usize];
    let mut used = vec![false; n as usize + 1];
    let mut out = Vec::new();
    fill(&mut row, &mut used, &mut out);
    out
}

fn fill(row: &mut [u32], used: &mut [bool], out: &mut Vec<Vec<u32>>) {
    let Some(i) = row.iter().position(|&x| x == 0) else {
        out.push(row.to_vec());
        return;
    };
    for k in 1..used.len() {
        let j = i + k + 1;
        if !used[k] && j < row.len() && row[j] == 0 {
            used[k] = true;
            row[i] = k as u32;
            row[j] = k as u32;
            fill(row, used, out);
            row[i] = 0;
            row[j] = 0;
            used[k] = false;
        }
    }
}
