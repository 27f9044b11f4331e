//! The command line's `--name value` options.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::str::FromStr;

use crate::BenchResult;

/// Options given as `--name value` pairs; each read marks its name as used.
#[derive(Debug, Default)]
pub struct Args {
    values: BTreeMap<String, String>,
    used: RefCell<BTreeSet<String>>,
}

impl Args {
    /// Parses `--name value` pairs.
    pub fn parse(argv: impl Iterator<Item = String>) -> BenchResult<Self> {
        let mut values = BTreeMap::new();
        let mut argv = argv.peekable();
        while let Some(flag) = argv.next() {
            let name = flag
                .strip_prefix("--")
                .ok_or_else(|| format!("expected an option --name, got {flag:?}"))?;
            let value = argv
                .next()
                .ok_or_else(|| format!("option --{name} needs a value"))?;
            values.insert(name.to_owned(), value);
        }
        Ok(Args {
            values,
            used: RefCell::default(),
        })
    }

    fn raw(&self, name: &str) -> Option<&str> {
        self.used.borrow_mut().insert(name.to_owned());
        self.values.get(name).map(String::as_str)
    }

    /// A number, or `default` when the option is absent.
    pub fn number<T: FromStr>(&self, name: &str, default: T) -> BenchResult<T> {
        match self.raw(name) {
            None => Ok(default),
            Some(text) => text
                .parse()
                .map_err(|_| format!("--{name} must be a number, not {text:?}").into()),
        }
    }

    /// A comma-separated list of numbers, or `default` when the option is absent.
    pub fn numbers(&self, name: &str, default: &[u64]) -> BenchResult<Vec<u64>> {
        match self.raw(name) {
            None => Ok(default.to_vec()),
            Some(text) => text
                .split(',')
                .map(|item| {
                    item.trim()
                        .parse()
                        .map_err(|_| format!("--{name} must list numbers, not {item:?}").into())
                })
                .collect(),
        }
    }

    /// A text option, or `None` when it is absent.
    pub fn text(&self, name: &str) -> Option<String> {
        self.raw(name).map(str::to_owned)
    }

    /// A required path.
    pub fn path(&self, name: &str) -> BenchResult<PathBuf> {
        self.raw(name)
            .map(PathBuf::from)
            .ok_or_else(|| format!("--{name} PATH is required").into())
    }

    /// Fails when an option was given that the command does not read.
    pub fn reject_unused(&self) -> BenchResult<()> {
        let used = self.used.borrow();
        match self.values.keys().find(|name| !used.contains(*name)) {
            Some(name) => Err(format!("unknown option --{name}").into()),
            None => Ok(()),
        }
    }
}
