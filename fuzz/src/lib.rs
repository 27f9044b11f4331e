//! What the fuzz targets share: one subscriber archive on a real store in a temporary
//! folder, opened once per fuzzing process.

use std::sync::OnceLock;

use attrflow::flows::chunked_subscriber::{SubscriberArchive, FLOW_ID};
use attrflow::Runtime;

struct Fixture {
    _dir: tempfile::TempDir,
    runtime: Runtime,
}

/// A runtime on a fresh store (`synchronous=normal`) with the archive under [`FLOW_ID`]
/// started; the same one for every input of the process.
pub fn archive_runtime() -> &'static Runtime {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    &FIXTURE
        .get_or_init(|| {
            let dir = tempfile::tempdir().expect("a temporary folder");
            let path = dir.path().join("fuzz.db");
            let url = format!("sqlite:{}?synchronous=normal", path.display());
            let runtime = Runtime::open(&url).expect("open the store");
            SubscriberArchive::new(&runtime, FLOW_ID)
                .start()
                .expect("start the archive");
            Fixture { _dir: dir, runtime }
        })
        .runtime
}
