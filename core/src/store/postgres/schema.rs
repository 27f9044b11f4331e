//! The PostgreSQL schema and its migrations.
//!
//! Migrations run in one transaction under a transaction-scoped advisory lock, so many
//! processes opening a fresh database at once create it once. A database whose schema
//! version is newer than this build's is refused.

use postgres::Client;

use super::errors::pg_error;
use crate::error::{Error, Result};

/// The schema version this build writes and reads.
pub const SCHEMA_VERSION: i64 = 3;

/// Every migration, in order: the version it brings the schema to and its statements.
const MIGRATIONS: [(i64, &str); 3] = [
    (
        1,
        "CREATE TABLE flows (
         flow_id       TEXT PRIMARY KEY,
         flow_type     BYTEA NOT NULL,
         run_id        TEXT NOT NULL,
         started_at_ms BIGINT NOT NULL
     );
     CREATE TABLE attribute_values (
         flow_id TEXT NOT NULL,
         name    BYTEA NOT NULL,
         value   TEXT NOT NULL,
         PRIMARY KEY (flow_id, name)
     );
     -- Names and flow types are UTF-8 bytes: attrflow allows any character in them,
     -- NUL included, which a TEXT column cannot hold. Values are JSON text, which never
     -- holds a raw NUL.
     -- One row per locked physical name. An RPC holds its locks as row locks
     -- (FOR UPDATE NOWAIT) and bumps `grants`, so a transaction whose snapshot predates the
     -- previous holder's commit fails with a serialization error instead of reading stale
     -- values.
     CREATE TABLE attribute_locks (
         flow_id TEXT NOT NULL,
         name    BYTEA NOT NULL,
         grants  BIGINT NOT NULL DEFAULT 0,
         PRIMARY KEY (flow_id, name)
     );",
    ),
    (
        2,
        // Every append rewrites its log's open chunk, a value of up to about 8 KB that TOAST
        // compresses on each write; lz4 costs the server a fraction of the CPU of the default
        // pglz for about the same size. Values already stored keep their compression (both
        // stay readable). A server built without lz4 (or older than PostgreSQL 14, which has
        // no column compression setting) keeps pglz.
        "DO $$
     BEGIN
         EXECUTE 'ALTER TABLE attribute_values ALTER COLUMN value SET COMPRESSION lz4';
     EXCEPTION WHEN feature_not_supported OR syntax_error THEN
         NULL;
     END
     $$;",
    ),
    (
        3,
        // The record of a stopped run (crate::lifecycle), NULL while the flow runs. The core
        // keeps it as the value `/run`; here it lives in the flow's row, which the opening
        // statement of every RPC reads anyway, so checking it costs an RPC nothing, where a
        // row of attribute_values would cost it one more index probe (about a tenth of the
        // appends per second of 16 appenders, measured).
        "ALTER TABLE flows ADD COLUMN closed_run TEXT;",
    ),
];

/// A key of `pg_advisory_xact_lock` taken by every migration ("attrflow" in ASCII).
const MIGRATION_LOCK_KEY: i64 = 0x6174_7472_666c_6f77;

/// Creates the schema `schema` and its tables, or brings them up to date.
pub(crate) fn migrate(client: &mut Client, schema: &str, location: &str) -> Result<()> {
    let err = |doing: &str| {
        let doing = doing.to_owned();
        move |e| pg_error(location, &doing, e)
    };
    let mut tx = client.transaction().map_err(err("starting migration"))?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK_KEY])
        .map_err(err("waiting for other migrations"))?;
    let exists = tx
        .query_opt("SELECT 1 FROM pg_namespace WHERE nspname = $1", &[&schema])
        .map_err(err("looking up the schema"))?
        .is_some();
    if !exists {
        tx.batch_execute(&format!("CREATE SCHEMA \"{schema}\""))
            .map_err(err("creating the schema"))?;
    }
    tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS attrflow_schema (
             id      INTEGER PRIMARY KEY CHECK (id = 1),
             version BIGINT NOT NULL
         )",
    )
    .map_err(err("creating the schema table"))?;
    let version: i64 = tx
        .query_opt("SELECT version FROM attrflow_schema WHERE id = 1", &[])
        .map_err(err("reading the schema version"))?
        .map_or(0, |row| row.get(0));
    if version > SCHEMA_VERSION {
        return Err(Error::storage(format!(
            "store {location} has schema version {version}; this attrflow reads version {SCHEMA_VERSION}"
        )));
    }
    for (target, statements) in MIGRATIONS.iter().filter(|(v, _)| *v > version) {
        tx.batch_execute(statements)
            .map_err(err(&format!("migrating to schema version {target}")))?;
    }
    if version < SCHEMA_VERSION {
        tx.execute(
            "INSERT INTO attrflow_schema (id, version) VALUES (1, $1)
             ON CONFLICT (id) DO UPDATE SET version = excluded.version",
            &[&SCHEMA_VERSION],
        )
        .map_err(err("recording the schema version"))?;
    }
    tx.commit().map_err(err("committing migration"))
}
