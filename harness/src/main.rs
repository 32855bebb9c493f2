//! The `wsbench` binary: the whole CLI lives in the library
//! ([`wsbench::main`]), so that other binaries can add schedulers to it.
#![forbid(unsafe_code)]

fn main() -> std::process::ExitCode {
    wsbench::main()
}
