//! Tests of the search: keys, move order, counted endgames and windowed
//! searches against plain versions.

use super::*;
use crate::board::TRACKED_SQUARES;
use crate::reference;
use crate::square_set::SquareSet;

/// The move order of weights `w` as first written: one pass over the
/// squares, each square's penalty spread over its empty cells, branch by
/// branch.
fn plain_order(board: &Board, pos: &Pos, p1: bool, w: &[i32; 6]) -> Vec<u8> {
    let (mine, opp, dmine, dopp) = if p1 {
        (pos.p1, pos.p2, pos.d1, pos.d2)
    } else {
        (pos.p2, pos.p1, pos.d2, pos.d1)
    };
    let empty = board.full & !(mine | opp);
    let mut score = [0i32; 64];
    let spread = |score: &mut [i32; 64], cells: u64, v: i32| {
        (0..64)
            .filter(|c| cells >> c & 1 == 1)
            .for_each(|c| score[c] += v)
    };
    for &sq in &board.squares {
        let e = sq & empty;
        let (a, b) = ((sq & mine).count_ones(), (sq & opp).count_ones());
        match (a, b) {
            (0, 0) => spread(&mut score, e, -w[5]),
            (1, 0) => spread(&mut score, e, -w[4]),
            (2, 0) => {
                let x = e.trailing_zeros() as usize;
                let y = 63 - e.leading_zeros() as usize;
                if dmine >> y & 1 == 0 {
                    score[x] -= w[0];
                }
                if dmine >> x & 1 == 0 {
                    score[y] -= w[0];
                }
            }
            (0, 1) => spread(&mut score, e, -w[1]),
            (0, 2) => spread(&mut score, e, -w[2]),
            _ => {}
        }
    }
    let mut cells: Vec<(i32, u8)> = (0..board.n)
        .filter(|&c| (empty & !dmine) >> c & 1 == 1)
        .map(|c| {
            (
                score[c] - if dopp >> c & 1 == 1 { w[3] } else { 0 },
                c as u8,
            )
        })
        .collect();
    cells.sort_by_key(|&(s, c)| (-s, c));
    cells.into_iter().map(|(_, c)| c).collect()
}

/// The square sets and dead cells of a position, from its stones: the
/// squares not open for P1 (P2), and the empty cells where P1's (P2's)
/// stone completes his square.
fn counts(board: &Board, pos: &Pos) -> (SquareSet, SquareSet, u64, u64) {
    let empty = board.full & !(pos.p1 | pos.p2);
    let (mut d1, mut d2) = (0, 0);
    for &sq in &board.squares {
        if (sq & pos.p1).count_ones() == 3 {
            d1 |= sq & empty;
        }
        if (sq & pos.p2).count_ones() == 3 {
            d2 |= sq & empty;
        }
    }
    let (mut shut1, mut shut2) = (SquareSet::EMPTY, SquareSet::EMPTY);
    for (i, &sq) in board.squares.iter().enumerate().take(TRACKED_SQUARES) {
        let (a, b) = ((sq & pos.p1).count_ones(), (sq & pos.p2).count_ones());
        // Open: none of the other colour, at most two of his own, and
        // no empty cell of it dead for him.
        if !(b == 0 && a <= 2 && sq & empty & d1 == 0) {
            shut1 |= SquareSet::single(i);
        }
        if !(a == 0 && b <= 2 && sq & empty & d2 == 0) {
            shut2 |= SquareSet::single(i);
        }
    }
    (shut1, shut2, d1, d2)
}

/// P1's value of `pos` by plain minimax ([`reference::minimax`]).
pub(crate) fn plain_minimax(board: &Board, double: bool, pos: &Pos) -> i8 {
    let mut cells: Vec<u8> = (0..board.n)
        .map(|c| (pos.p1 >> c & 1) as u8 + 2 * (pos.p2 >> c & 1) as u8)
        .collect();
    reference::minimax(board.rows, board.cols, double, &mut cells)
}

/// A xorshift generator from `seed`: each call a number below its
/// argument.
pub(crate) fn below(mut seed: u64) -> impl FnMut(usize) -> usize {
    move |n| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n as u64) as usize
    }
}

/// Plays one random game from the empty board, a safe stone at a time
/// (`rand(n)` picks one of the `n` safe cells, in cell order), calling
/// `visit(pos, p1, empty)` at each position where the mover (`p1`) has a
/// safe cell. The game ends where `visit` returns false, or where the mover
/// has none.
pub(crate) fn random_game(
    board: &Board,
    double: bool,
    rand: &mut impl FnMut(usize) -> usize,
    mut visit: impl FnMut(&Pos, bool, u64) -> bool,
) {
    let mut pos = Pos::EMPTY;
    loop {
        let p1 = p1_moves(pos.stones(), double);
        let empty = board.full & !(pos.p1 | pos.p2);
        let safe = empty & !if p1 { pos.d1 } else { pos.d2 };
        if safe == 0 || !visit(&pos, p1, empty) {
            return;
        }
        let cells: Vec<usize> = (0..board.n).filter(|&c| safe >> c & 1 == 1).collect();
        pos = pos.play(board, cells[rand(cells.len())], p1);
    }
}

/// Random games on every board shape up to 6x6 (and on 6x7, 6x8 and 7x7): the
/// incrementally kept symmetry images give the same canonical key as
/// transforming the stones, the shut squares, dead cells and square
/// counts are those found from the stones, and the move order is the
/// plain one.
#[test]
fn keys_and_move_order_match_plain_versions() {
    let mut rand = below(0x2545_f491_4f6c_dd1du64);
    // Every board up to 6x6; 6x7 and 6x8, whose squares fill the sets past
    // their second word; 7x7, with more squares than are tracked (its move
    // order walks the squares).
    let mut boards: Vec<(usize, usize, usize)> = (2..=6)
        .flat_map(|rows| (rows..=6).map(move |cols| (rows, cols, 40)))
        .collect();
    boards.extend([(6, 7, 6), (6, 8, 4), (7, 7, 4)]);
    for (rows, cols, games) in boards {
        let board = Board::new(rows, cols);
        let mut picker = MovePicker::new(&board);
        for game in 0..games {
            let double = game % 2 == 1;
            let mut pos = Pos::EMPTY;
            loop {
                let p1 = p1_moves(pos.stones(), double);
                assert_eq!(
                    pos.key(&board),
                    board.canonical2(pos.p1, pos.p2),
                    "{rows}x{cols}"
                );
                assert_eq!(
                    counts(&board, &pos),
                    (
                        pos.shut1,
                        pos.shut2,
                        pos.d1 & board.full & !(pos.p1 | pos.p2),
                        pos.d2 & board.full & !(pos.p1 | pos.p2),
                    ),
                    "{rows}x{cols}"
                );
                for (q, &sq) in board.squares.iter().enumerate().take(TRACKED_SQUARES) {
                    assert_eq!(
                        (pos.in_squares1.count(q), pos.in_squares2.count(q)),
                        ((sq & pos.p1).count_ones(), (sq & pos.p2).count_ones()),
                        "{rows}x{cols}"
                    );
                }
                // Other weights than the tuned ones, and the tuned ones: a
                // kind's wrong condition cannot hide behind a weight both
                // sets give it.
                let other = [7, 2, 3, 5, 1, 4];
                let list = MoveOrder::new(other).moves(&board, &pos, p1, 0);
                assert_eq!(
                    list.cells[..list.len],
                    plain_order(&board, &pos, p1, &other),
                    "{rows}x{cols}"
                );
                let list = ordered_moves(&board, &pos, p1, double, 0);
                let order = list.cells[..list.len].to_vec();
                let tuned = tuned_weights(rows, cols, double);
                assert_eq!(
                    order,
                    plain_order(&board, &pos, p1, &tuned),
                    "{rows}x{cols}"
                );
                // The search's picker, reused from position to position as
                // the search reuses it (left with moves not picked every
                // other time), gives the same order a move at a time.
                picker.reset();
                MoveOrder::tuned(&board, double).score(&board, &pos, p1, 0, &mut picker);
                assert_eq!(picker.len, order.len(), "{rows}x{cols}");
                if pos.stones().is_multiple_of(2) {
                    assert_eq!(picker.first(1), &order[..order.len().min(1)]);
                } else {
                    let one_by_one: Vec<u8> = (0..).map_while(|j| picker.get(j)).collect();
                    assert_eq!(one_by_one, order, "{rows}x{cols}");
                }
                for &c in &order {
                    let k = pos.play(&board, c as usize, p1).key(&board);
                    assert_eq!(
                        pos.key_after(&board, c as usize, p1),
                        (k.0, k.1),
                        "{rows}x{cols}"
                    );
                }
                if order.is_empty() {
                    break;
                }
                pos = pos.play(&board, order[rand(order.len())] as usize, p1);
            }
        }
    }
}

/// Random positions with ten empty cells and a [`plain_weight`] above the
/// plain last moves' ([`PLAIN_MAX_WEIGHT`]), standard and Double,
/// searched in the three windows with one table per board (so the bounds
/// stored by one search serve the next): each fail-soft result bounds or
/// equals plain minimax's value, and so does every interval the table
/// holds for the positions up to three moves on. In Double Hip these
/// searches skip the second stones that repeat an earlier sibling's
/// pair, down to the plain last moves; a wrong bound from a skip, stored
/// or returned, shows here. Each board is searched twice: on a table
/// without busy marks, and on one whose every position marks and defers,
/// with a third of the marks' slots taken (see [`busy_table`]).
#[test]
fn windowed_searches_agree_with_plain_minimax() {
    let mut rand = below(0x6a09_e667_f3bc_c909u64);
    let mut checked = [0usize; 3];
    let mut stored = 0usize;
    for (rows, cols) in [(4, 4), (3, 5), (4, 5), (3, 6)] {
        let board = Board::new(rows, cols);
        for (double, busy) in [(false, false), (true, false), (false, true), (true, true)] {
            let table = busy_table(&board, double, busy, &mut rand);
            let mut solver = Solver::new(&board, double, &table, None);
            for _ in 0..12 {
                random_game(&board, double, &mut rand, |pos, p1, empty| {
                    // Some weight above the plain last moves, so that the
                    // layers below reach the table; few enough empty cells
                    // for plain minimax.
                    let empties = 10;
                    if empty.count_ones() < empties {
                        return false;
                    }
                    if empty.count_ones() == empties
                        && plain_weight(pos, empty) > PLAIN_MAX_WEIGHT + 2
                    {
                        let plain = plain_minimax(&board, double, pos);
                        let plain = if p1 { plain } else { -plain };
                        for (alpha, beta) in [(-1, 0), (0, 1), (-1, 1)] {
                            let v = solver.search(pos, alpha, beta).expect("no budget");
                            assert!(
                                (v <= alpha && plain <= v)
                                    || (v >= beta && plain >= v)
                                    || (alpha < v && v < beta && plain == v),
                                "{rows}x{cols} double {double}: ({alpha}, {beta}) gave {v}, \
                                 value {plain}: {pos:?}"
                            );
                        }
                        checked[(plain + 1) as usize] += 1;
                        let mut layer = vec![*pos];
                        for _ in 0..3 {
                            let mut next = Vec::new();
                            for q in &layer {
                                let mover = p1_moves(q.stones(), double);
                                let open = board.full & !(q.p1 | q.p2);
                                let mut safe = open & !if mover { q.d1 } else { q.d2 };
                                while safe != 0 {
                                    let c = safe.trailing_zeros() as usize;
                                    safe &= safe - 1;
                                    next.push(q.play(&board, c, mover));
                                }
                            }
                            for q in &next {
                                let key = q.key(&board);
                                if let Some((lo, hi, _)) = table.probe(key.0, key.1) {
                                    let v = plain_minimax(&board, double, q);
                                    assert!(
                                        lo <= v && v <= hi,
                                        "{rows}x{cols} double {double}: the table holds \
                                         {lo}..={hi} for value {v}: {q:?}"
                                    );
                                    stored += 1;
                                }
                            }
                            layer = next;
                        }
                    }
                    true
                });
            }
        }
    }
    assert!(checked.iter().all(|&n| n >= 10), "{checked:?}");
    assert!(stored > 1000, "{stored} intervals checked");
}

/// Every position of random games on small boards that [`Solver::counted`]
/// (no square open, or one) or [`Solver::counted_abstract`] (two or
/// three) values has that value by plain minimax, in both variants;
/// enough of each kind are met that a wrong count fails.
#[test]
fn counted_endgames_agree_with_plain_minimax() {
    let mut rand = below(0x9e37_79b9_7f4a_7c15u64);
    let mut checked = [0usize; 4];
    for (rows, cols) in [(3, 4), (4, 4), (3, 5), (4, 5), (5, 5), (3, 6)] {
        let board = Board::new(rows, cols);
        for double in [false, true] {
            let table = Table::new(&board, double, Some(1));
            let mut solver = Solver::new(&board, double, &table, None);
            for _ in 0..60 {
                random_game(&board, double, &mut rand, |pos, p1, empty| {
                    if empty.count_ones() <= 8 {
                        let stones = pos.stones();
                        let counted = solver.counted(pos, empty, stones, p1);
                        let counted =
                            counted.or_else(|| solver.counted_abstract(pos, empty, stones, p1));
                        if let Some(v) = counted {
                            let plain = plain_minimax(&board, double, pos);
                            assert_eq!(
                                if p1 { v } else { -v },
                                plain,
                                "{rows}x{cols} double {double}: p1 {:#x} p2 {:#x}",
                                pos.p1,
                                pos.p2
                            );
                            let every = board.every_square;
                            let open = (every & !pos.shut1).count() + (every & !pos.shut2).count();
                            checked[open as usize] += 1;
                        }
                    }
                    true
                });
            }
        }
    }
    assert!(
        checked[0] > 500 && checked[1] > 500 && checked[2] > 300 && checked[3] > 200,
        "{checked:?}"
    );
}

/// A table of `board`, with no busy marks; or with `busy`, one where every
/// position above the plain last moves marks itself and defers its busy
/// children, and about a third of the marks' slots are taken already (as
/// by other searches inside those positions).
fn busy_table(
    board: &Board,
    double: bool,
    busy: bool,
    rand: &mut impl FnMut(usize) -> usize,
) -> Table {
    if !busy {
        return Table::new(board, double, Some(1)).with_busy_weight(u32::MAX);
    }
    let table = Table::new(board, double, Some(1)).with_busy_weight(0);
    for _ in 0..1 << 19 {
        table.enter(rand(usize::MAX) as u64, rand(usize::MAX) as u64);
    }
    table
}

/// Busy marks only reorder a search. With about a third of the marks'
/// slots taken (as by other searches inside those positions) and every
/// position above the plain last moves marking and deferring, each small
/// board's value is what a table without marks gives, in both variants
/// (the Double Hip pairs a node skips included); the deferred moves change
/// the node counts, so the marks were met; and every mark a search made is
/// gone once it returns, finished or aborted.
#[test]
fn busy_marks_reorder_but_never_change_a_value() {
    let mut rand = below(0x2545_f491_4f6c_dd1d);
    let mut reordered = 0;
    for (rows, cols) in [(3, 4), (4, 4), (3, 5), (4, 5)] {
        let board = Board::new(rows, cols);
        for double in [false, true] {
            let plain = busy_table(&board, double, false, &mut rand);
            let (value, nodes) = solve_empty_board(&board, &plain, double);
            assert_eq!(plain.busy_marks(), 0);
            let busy = busy_table(&board, double, true, &mut rand);
            let taken = busy.busy_marks();
            let (v, n) = solve_empty_board(&board, &busy, double);
            assert_eq!(v, value, "{rows}x{cols} double {double}");
            assert_eq!(busy.busy_marks(), taken, "{rows}x{cols} double {double}");
            reordered += usize::from(n != nodes);

            let fresh = Table::new(&board, double, Some(1)).with_busy_weight(0);
            let mut s = Solver::new(&board, double, &fresh, None);
            s.budget = nodes / 2;
            assert_eq!(s.search(&Pos::EMPTY, -1, 1), None, "aborted");
            assert_eq!(fresh.busy_marks(), 0, "{rows}x{cols} double {double}");
        }
    }
    assert!(
        reordered >= 4,
        "{reordered} of 8 boards searched in another order"
    );
}
