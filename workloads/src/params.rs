//! Typed, validated `--param name=value` reading.
//!
//! A workload reads each of its parameters once through [`Params`]; the
//! value given (or the default, with `auto` resolved) is remembered so the
//! run can record exactly what it used.

use crate::api::WorkloadInfo;
use crate::Error;

/// The parameters given for one workload, read with types and ranges.
pub(crate) struct Params<'a> {
    info: &'static WorkloadInfo,
    given: &'a [(String, String)],
    resolved: Vec<(String, String)>,
}

impl<'a> Params<'a> {
    /// Rejects unknown and repeated names.
    pub(crate) fn new(info: &'static WorkloadInfo, given: &'a [(String, String)]) -> Result<Self, Error> {
        for (i, (name, _)) in given.iter().enumerate() {
            if !info.params.iter().any(|p| p.name == name) {
                let allowed = if info.params.is_empty() {
                    "none (this workload has no parameters)".to_string()
                } else {
                    info.params.iter().map(|p| p.name).collect::<Vec<_>>().join(", ")
                };
                return Err(Error::UnknownParam { workload: info.name.into(), name: name.clone(), allowed });
            }
            if given[..i].iter().any(|(n, _)| n == name) {
                return Err(Error::BadParam {
                    workload: info.name.into(),
                    name: name.clone(),
                    value: given[i].1.clone(),
                    allowed: "each parameter at most once".into(),
                });
            }
        }
        Ok(Params { info, given, resolved: Vec::new() })
    }

    /// The workload's name.
    pub(crate) fn workload(&self) -> &'static str {
        self.info.name
    }

    fn raw(&self, name: &str) -> &'a str {
        if let Some((_, v)) = self.given.iter().find(|(n, _)| n == name) {
            return v.as_str();
        }
        let info = self.info.params.iter().find(|p| p.name == name);
        info.unwrap_or_else(|| panic!("workload `{}` reads undeclared parameter `{name}`", self.info.name)).default
    }

    fn remember(&mut self, name: &str, value: String) {
        // Shared parameters (distribution shapes) may be read twice.
        if !self.resolved.iter().any(|(n, _)| n == name) {
            self.resolved.push((name.to_string(), value));
        }
    }

    /// An error naming `name`, `value` and what is allowed.
    pub(crate) fn bad(&self, name: &str, value: &str, allowed: impl Into<String>) -> Error {
        Error::BadParam {
            workload: self.info.name.into(),
            name: name.into(),
            value: value.into(),
            allowed: allowed.into(),
        }
    }

    /// A finite number in `lo..=hi`.
    pub(crate) fn f64_in(&mut self, name: &str, lo: f64, hi: f64) -> Result<f64, Error> {
        let raw = self.raw(name);
        match raw.parse::<f64>() {
            Ok(v) if v.is_finite() && (lo..=hi).contains(&v) => {
                self.remember(name, raw.to_string());
                Ok(v)
            }
            _ => Err(self.bad(name, raw, format!("a number in {lo}..={hi}"))),
        }
    }

    /// A finite number in the open-below range `(lo, hi]`.
    pub(crate) fn f64_above(&mut self, name: &str, lo: f64, hi: f64) -> Result<f64, Error> {
        let raw = self.raw(name);
        match raw.parse::<f64>() {
            Ok(v) if v.is_finite() && v > lo && v <= hi => {
                self.remember(name, raw.to_string());
                Ok(v)
            }
            _ => Err(self.bad(name, raw, format!("a number > {lo} and <= {hi}"))),
        }
    }

    /// A finite number strictly between `lo` and `hi`.
    pub(crate) fn f64_open(&mut self, name: &str, lo: f64, hi: f64) -> Result<f64, Error> {
        let raw = self.raw(name);
        match raw.parse::<f64>() {
            Ok(v) if v.is_finite() && v > lo && v < hi => {
                self.remember(name, raw.to_string());
                Ok(v)
            }
            _ => Err(self.bad(name, raw, format!("a number in ({lo}, {hi})"))),
        }
    }

    /// An integer in `lo..=hi`.
    pub(crate) fn u64_in(&mut self, name: &str, lo: u64, hi: u64) -> Result<u64, Error> {
        let raw = self.raw(name);
        match raw.parse::<u64>() {
            Ok(v) if (lo..=hi).contains(&v) => {
                self.remember(name, raw.to_string());
                Ok(v)
            }
            _ => Err(self.bad(name, raw, format!("an integer in {lo}..={hi}"))),
        }
    }

    /// An integer in `lo..=hi`, or `auto` which resolves to `auto_value`
    /// (recorded as the number it resolved to).
    pub(crate) fn u64_or_auto(&mut self, name: &str, lo: u64, hi: u64, auto_value: u64) -> Result<u64, Error> {
        let raw = self.raw(name);
        if raw == "auto" {
            self.remember(name, auto_value.to_string());
            return Ok(auto_value);
        }
        match raw.parse::<u64>() {
            Ok(v) if (lo..=hi).contains(&v) => {
                self.remember(name, raw.to_string());
                Ok(v)
            }
            _ => Err(self.bad(name, raw, format!("auto or an integer in {lo}..={hi}"))),
        }
    }

    /// One of the named options.
    pub(crate) fn choice<T: Copy>(&mut self, name: &str, options: &[(&str, T)]) -> Result<T, Error> {
        let raw = self.raw(name);
        match options.iter().find(|(n, _)| *n == raw) {
            Some(&(_, v)) => {
                self.remember(name, raw.to_string());
                Ok(v)
            }
            None => {
                let allowed = options.iter().map(|(n, _)| *n).collect::<Vec<_>>().join("|");
                Err(self.bad(name, raw, allowed))
            }
        }
    }

    /// Every parameter read so far, with the value used.
    pub(crate) fn into_resolved(self) -> Vec<(String, String)> {
        self.resolved
    }
}
