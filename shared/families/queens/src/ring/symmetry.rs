//! The eight symmetries of the square: on squares ([`image`], which maps
//! rings to rings) and on whole solutions ([`Images`]: a completion of a
//! ring with symmetries is distinct only if it is the smallest of its
//! images under them, and the listing names an orbit by its smallest
//! member).

use super::MAX;

/// The eight symmetries of the square, as maps of squares: symmetry `g`
/// takes `(r, c)` to `image(g, r, c, m)` on a board whose last index is `m`.
/// 0 is the identity; the table is that of [`crate::is_canonical`].
#[inline]
pub fn image(g: u8, r: u8, c: u8, m: u8) -> (u8, u8) {
    match g {
        0 => (r, c),
        1 => (r, m - c),
        2 => (m - r, c),
        3 => (m - r, m - c),
        4 => (c, r),
        5 => (m - c, m - r),
        6 => (c, m - r),
        _ => (m - c, r),
    }
}

/// The eight images of a solution (`p[row]` = column), read entry by entry
/// without writing them out: image `g` of [`image`] has `entry(g, k)` in
/// row `k`.
pub(super) struct Images<'p> {
    p: &'p [u8],
    inverse: [u8; MAX],
    m: usize,
}

impl<'p> Images<'p> {
    pub(super) fn of(p: &'p [u8]) -> Images<'p> {
        let mut inverse = [0u8; MAX];
        for (r, &c) in p.iter().enumerate() {
            inverse[c as usize] = r as u8;
        }
        Images {
            p,
            inverse,
            m: p.len() - 1,
        }
    }

    #[inline]
    pub(super) fn entry(&self, g: u8, k: usize) -> u8 {
        let (p, inv, m) = (self.p, &self.inverse, self.m);
        let mu = m as u8;
        match g {
            0 => p[k],
            1 => mu - p[k],
            2 => p[m - k],
            3 => mu - p[m - k],
            4 => inv[k],
            5 => mu - inv[m - k],
            6 => mu - inv[k],
            _ => inv[m - k],
        }
    }

    /// The symmetry of `group` (bit `g`; the identity among them) whose
    /// image is the smallest, the lowest `g` on ties. Images are compared
    /// row by row and the first row nearly always decides.
    pub(super) fn least(&self, group: u8) -> u8 {
        let mut best = 0;
        for g in 1..8 {
            if group >> g & 1 == 0 {
                continue;
            }
            for k in 0..=self.m {
                let (x, y) = (self.entry(g, k), self.entry(best, k));
                if x != y {
                    if x < y {
                        best = g;
                    }
                    break;
                }
            }
        }
        best
    }
}
