//! `JoinError`: why a task produced no value (cancelled, or its future
//! panicked), in its own module so that the raw task and the `JoinHandle`
//! both use it without importing each other.

use std::any::Any;
use std::fmt;

/// Why a task produced no value.
pub struct JoinError {
    repr: Repr,
}

enum Repr {
    Cancelled,
    Panic(Box<dyn Any + Send + 'static>),
}

impl JoinError {
    pub(crate) fn cancelled() -> JoinError {
        JoinError { repr: Repr::Cancelled }
    }

    pub(crate) fn panic(payload: Box<dyn Any + Send + 'static>) -> JoinError {
        JoinError { repr: Repr::Panic(payload) }
    }

    /// The task was aborted, or dropped by runtime shutdown.
    pub fn is_cancelled(&self) -> bool {
        matches!(self.repr, Repr::Cancelled)
    }

    /// The task panicked.
    pub fn is_panic(&self) -> bool {
        matches!(self.repr, Repr::Panic(_))
    }

    /// The panic payload; `Err(self)` when the task was cancelled.
    pub fn try_into_panic(self) -> Result<Box<dyn Any + Send + 'static>, JoinError> {
        match self.repr {
            Repr::Panic(p) => Ok(p),
            Repr::Cancelled => Err(self),
        }
    }
}

impl fmt::Display for JoinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.repr {
            Repr::Cancelled => f.write_str("task was cancelled"),
            Repr::Panic(p) => write!(f, "task panicked: {}", panic_message(p.as_ref())),
        }
    }
}

impl fmt::Debug for JoinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.repr {
            Repr::Cancelled => f.write_str("JoinError::Cancelled"),
            Repr::Panic(p) => write!(f, "JoinError::Panic({:?})", panic_message(p.as_ref())),
        }
    }
}

impl std::error::Error for JoinError {}

/// A panic payload as text, for `JoinError`'s Display.
pub(crate) fn panic_message(payload: &(dyn Any + Send)) -> &str {
    if let Some(s) = payload.downcast_ref::<&'static str>() {
        s
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s
    } else {
        "Box<dyn Any>"
    }
}
