//! What was measured, as data: the row model every layer speaks
//! (`record`, with the ideal scheduler's columns in `ideal`), what a run of the matrix produced (`outcome`), results
//! files read back (`load`) through the one guard every reader uses
//! (`input`), and `wsbench merge`, which joins the files of several
//! processes. Nothing here runs a workload.

pub mod ideal;
pub mod input;
pub mod load;
pub mod merge;
pub mod outcome;
pub mod record;
