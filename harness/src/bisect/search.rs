//! The search, without measuring: points `0..=n+1` in order, 0 the good
//! end and `n + 1` the bad end, each point between marked good, bad or
//! skipped as it is measured. As `git bisect`: the next point is the
//! unskipped one nearest the middle of the range still open (the last
//! good point before the first bad one); the first bad point is found when
//! nothing lies between them, and the search is undecidable when only
//! skipped points do (then the first bad point is one of them or the bad
//! end of the range).

/// What measuring a point said.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    /// It behaves like the good end.
    Good,
    /// It behaves like the bad end.
    Bad,
    /// It could not be judged (does not build, does not run, undecided).
    Skip,
}

/// Where the search stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum State {
    /// Measure this point next.
    Next(usize),
    /// The first bad point.
    Found(usize),
    /// Only skipped points are left: the first bad one is among these.
    Undecidable(Vec<usize>),
}

/// The marks of every point.
#[derive(Debug, Clone)]
pub struct Search {
    marks: Vec<Option<Mark>>,
}

impl Search {
    /// A search over `between` points between the good and the bad end.
    pub fn new(between: usize) -> Search {
        let mut marks = vec![None; between + 2];
        marks[0] = Some(Mark::Good);
        marks[between + 1] = Some(Mark::Bad);
        Search { marks }
    }

    /// Records what point `i` (strictly between the ends) turned out to be.
    pub fn mark(&mut self, i: usize, mark: Mark) {
        assert!(i > 0 && i + 1 < self.marks.len(), "point {i} is not between the ends of {} points", self.marks.len());
        self.marks[i] = Some(mark);
    }

    /// The open range: the last good point before the first bad one, and
    /// that bad one.
    fn bounds(&self) -> (usize, usize) {
        let hi = (1..self.marks.len()).find(|&i| self.marks[i] == Some(Mark::Bad)).unwrap_or(self.marks.len() - 1);
        let lo = (0..hi).rev().find(|&i| self.marks[i] == Some(Mark::Good)).unwrap_or(0);
        (lo, hi)
    }

    /// What to do next.
    pub fn state(&self) -> State {
        let (lo, hi) = self.bounds();
        if hi == lo + 1 {
            return State::Found(hi);
        }
        let open: Vec<usize> = (lo + 1..hi).filter(|&i| self.marks[i] != Some(Mark::Skip)).collect();
        // The middle of the range, in halves so that ties go down.
        let middle2 = lo + hi;
        match open.iter().min_by_key(|&&i| ((2 * i).abs_diff(middle2), i)) {
            Some(&i) => State::Next(i),
            None => State::Undecidable((lo + 1..=hi).collect()),
        }
    }

    /// The most measured steps a search over `between` points takes when
    /// nothing is skipped: ceil(log2(between + 1)).
    pub fn most_steps(between: usize) -> usize {
        (usize::BITS - between.leading_zeros()) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs the search with point k the first bad one and `skip` points
    /// that cannot be judged; returns the state it ends in and the points
    /// it visited.
    fn run(between: usize, first_bad: usize, skip: &[usize]) -> (State, Vec<usize>) {
        let mut s = Search::new(between);
        let mut visited = Vec::new();
        loop {
            match s.state() {
                State::Next(i) => {
                    visited.push(i);
                    let mark = if skip.contains(&i) {
                        Mark::Skip
                    } else if i >= first_bad {
                        Mark::Bad
                    } else {
                        Mark::Good
                    };
                    s.mark(i, mark);
                }
                end => return (end, visited),
            }
        }
    }

    #[test]
    fn every_first_bad_point_is_found_within_the_bound() {
        for between in 0..40 {
            for first_bad in 1..=between + 1 {
                let (end, visited) = run(between, first_bad, &[]);
                assert_eq!(end, State::Found(first_bad), "{between} points, first bad {first_bad}");
                assert!(visited.len() <= Search::most_steps(between), "{between}: {visited:?}");
            }
        }
        assert_eq!([0, 1, 2, 3, 6, 7, 8].map(Search::most_steps), [0, 1, 2, 2, 3, 3, 4]);
    }

    #[test]
    fn the_midpoint_is_the_middle_and_ties_go_down() {
        assert_eq!(Search::new(6).state(), State::Next(3));
        assert_eq!(Search::new(5).state(), State::Next(3));
        assert_eq!(Search::new(1).state(), State::Next(1));
        assert_eq!(Search::new(0).state(), State::Found(1));
    }

    #[test]
    fn a_skipped_point_is_stepped_around() {
        // 8 commits: ends 0 and 7, the slowdown planted in 4, 5 does not
        // build: 3 (good), 5 (skipped), 4 (bad) -> 4.
        assert_eq!(run(6, 4, &[5]), (State::Found(4), vec![3, 5, 4]));
        // The skipped point beside the first bad one: the answer is one of
        // the two, as git bisect says.
        assert_eq!(run(6, 4, &[3]), (State::Undecidable(vec![3, 4]), vec![3, 4, 2]));
        // Nothing can be judged: any point could be the first bad one.
        assert_eq!(run(2, 1, &[1, 2]), (State::Undecidable(vec![1, 2, 3]), vec![1, 2]));
    }
}
