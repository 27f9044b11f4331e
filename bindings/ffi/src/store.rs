//! [`Store`]: one attrflow runtime over one store, shared by every thread of the app.

use std::sync::Arc;

use attrflow::store::{StoreUrl, Synchronous};
use attrflow::Runtime;

use crate::error::Result;

/// How hard a commit is pushed to disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, uniffi::Enum)]
pub enum Durability {
    /// `fsync` on every commit: an acknowledged call survives a crash and a power loss.
    Full,
    /// Faster: survives a process crash; the last calls before a power loss may be lost.
    Normal,
}

impl From<Durability> for Synchronous {
    fn from(durability: Durability) -> Self {
        match durability {
            Durability::Full => Synchronous::Full,
            Durability::Normal => Synchronous::Normal,
        }
    }
}

/// A store opened by path or URL, with the built-in flows.
///
/// Every method is a plain blocking call, safe to make from many threads at once. Calls
/// that append take locks fail-fast: a concurrent append to the same log or archive fails
/// with `LockConflict`, which the caller retries.
#[derive(Debug, uniffi::Object)]
pub struct Store {
    pub(crate) runtime: Runtime,
}

#[uniffi::export]
impl Store {
    /// Opens (creating if needed) the store at `location`: a file path, or an `sqlite:`
    /// URL. `durability`, when given, overrides the URL's `synchronous` setting; the URL's
    /// own default is [`Durability::Full`].
    #[uniffi::constructor(default(durability = None))]
    pub fn open(location: String, durability: Option<Durability>) -> Result<Arc<Self>> {
        let mut url = StoreUrl::parse(&location)?;
        if let Some(durability) = durability {
            url = url.with_synchronous(durability.into());
        }
        let runtime = Runtime::new(url.open()?);
        Ok(Arc::new(Store { runtime }))
    }

    /// Where the store lives.
    pub fn location(&self) -> String {
        self.runtime.store().location()
    }
}
