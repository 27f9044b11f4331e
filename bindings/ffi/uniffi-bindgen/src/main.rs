//! `uniffi-bindgen`, pinned through the workspace to the UniFFI version attrflow-ffi is
//! built with, so generated Kotlin and Swift always match the library's scaffolding.
//!
//! ```sh
//! cargo run -p uniffi-bindgen -- generate --library target/release/libattrflow_ffi.so \
//!     --language kotlin --out-dir out/
//! ```

fn main() {
    uniffi::uniffi_bindgen_main()
}
