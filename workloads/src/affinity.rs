//! Pinning threads to cores: the runtimes' workers (`rt/`) and the load
//! generators (`openloop`, `client/`, `storm`) alike.

use crate::Error;

/// Checks every id in `cores` against the machine's core list.
pub(crate) fn check_cores(role: &'static str, cores: &[usize]) -> Result<(), Error> {
    if cores.is_empty() {
        return Ok(());
    }
    let available = core_affinity::get_core_ids().map_or(0, |ids| ids.len());
    match cores.iter().find(|&&c| c >= available) {
        Some(&core) => Err(Error::BadCore { role, core, available }),
        None => Ok(()),
    }
}

/// Pins the calling thread to `cores[index % cores.len()]`; no-op when
/// `cores` is empty. Ids were checked by [`check_cores`]; a failed pin (the
/// OS refused) leaves the thread unpinned, which the harness records as the
/// pinning it asked for rather than guessing otherwise.
pub(crate) fn pin_current(cores: &[usize], index: usize) {
    if cores.is_empty() {
        return;
    }
    let id = cores[index % cores.len()];
    // The return value only says whether the OS accepted; see above.
    let _accepted = core_affinity::set_for_current(core_affinity::CoreId { id });
}
