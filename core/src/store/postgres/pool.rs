//! A small, bounded pool of PostgreSQL connections with prepared statements.
//!
//! At most `pool_max_size` connections are open; a caller that finds every one in use
//! waits up to `pool_timeout` for one to come back and then gets a retryable lock
//! conflict. A connection that broke (the server restarted or failed over, a timeout ended
//! its session) is dropped instead of going back into the pool, and so is every connection
//! that sat idle while it broke: they were opened to the same server and most likely broke
//! with it.

use std::cell::Cell;
use std::time::Instant;

use crate::sync::{Condvar, Mutex};
use postgres::{Client, Statement};
use tokio_postgres_rustls::MakeRustlsConnect;

use super::errors::{connect_error, pg_error};
use super::PostgresOptions;
use crate::error::{Error, Result};

/// The statements every RPC uses, prepared once per connection.
pub(crate) struct Statements {
    /// Reads the type, run, run state and start time (ms since the epoch) of flow `$1`.
    pub load_flow: Statement,
    /// Reads the run of flow `$1` and its run state, taking a share lock on its row: a stop
    /// or a new run (which update the row) waits for the transaction to end.
    pub lock_flow: Statement,
    /// Records the run state `$2` of flow `$1` (a closed run, or the ID of a run that
    /// replaced another; `NULL`: a first run, running), the value `/run` of the core
    /// (`crate::lifecycle`), kept in the flow's row.
    pub close_run: Statement,
    pub insert_flow: Statement,
    /// Replaces the run `$5` of flow `$1` with the run `$3` of type `$2` started at `$4`
    /// (no row when the run is no longer `$5`): deletes every value of the flow and changes
    /// every lock row of it, so that a transaction whose snapshot predates the new run and
    /// takes one of those locks fails with a serialization error instead of writing into
    /// the new run (`crate::lifecycle`).
    pub replace_run: Statement,
    pub read_values: Statement,
    /// Reads every value of flow `$1` whose name lies in `[$2, $3)`, by name: the
    /// instances of one map ([`crate::store::map_name_range`]).
    pub read_range: Statement,
    pub upsert_values: Statement,
    pub delete_values: Statement,
    /// Creates the lock rows `$2` of flow `$1` that do not exist yet (see
    /// [`CREATE_LOCK_ROWS`]); its one row counts the names another transaction is creating.
    pub create_lock_rows: Statement,
    /// The first statement of an exclusive RPC, in one round trip: takes and bumps the lock
    /// rows (`$2`), reads the flow (its run state included) with a share lock on its row,
    /// and reads the values of the locked names and of the names the RPC will read
    /// without locking them (`$3`), all in the transaction's snapshot. The share lock makes
    /// a stop or a new run, which update the row, wait for the transaction; and a
    /// transaction whose snapshot predates one fails with a serialization error instead of
    /// writing into a stopped or a new run, whatever lock rows it takes (a lock row created
    /// after the new run began was never bumped).
    pub open_rpc: Statement,
}

/// The start of the first statement of an exclusive RPC or group member (see
/// `Statements::open_rpc`): takes and bumps the lock rows `$2` of flow `$1` and finds the
/// values of the names `known` lists (the locked ones, and those the call reads without
/// locking them), in the transaction's snapshot.
fn open_locks_and_values(known: &str) -> String {
    format!(
        "WITH locked AS (
             SELECT name FROM attribute_locks WHERE flow_id = $1 AND name = ANY($2)
             ORDER BY name FOR UPDATE NOWAIT
         ), bumped AS (
             UPDATE attribute_locks a SET grants = a.grants + 1 FROM locked
             WHERE a.flow_id = $1 AND a.name = locked.name RETURNING 1
         ), known AS (
             SELECT name, value FROM attribute_values WHERE flow_id = $1 AND name = ANY({known})
         )"
    )
}

/// The rows of `attrflow_open` and `attrflow_open_reading` after
/// [`open_locks_and_values`]: one per value found, or one without a value.
const OPENED_ROWS: &str = "
    SELECT encode(f.flow_type, 'hex'), f.run_id, (SELECT count(*) FROM bumped),
           encode(k.name, 'hex'), k.value, f.closed_run
    FROM flows f LEFT JOIN known k ON true WHERE f.flow_id = $1 FOR SHARE OF f";

/// Creates the missing lock rows `$2` of flow `$1` in the open transaction, without waiting
/// on another transaction that is creating one of them, and counts the names it found being
/// created: the call then conflicts at once, as it does on a lock row that exists and is
/// held.
///
/// A row another transaction inserted and has not committed is a lock that transaction
/// holds, and an `INSERT` of the same key would wait for it to end. So each name is first
/// claimed with a transaction-scoped advisory try-lock, keyed by a hash of the schema, the
/// flow and the name; a name already claimed is counted and nothing is inserted. Every
/// other wait the `INSERT` may meet (a relation-extension lock, a table lock) is an
/// ordinary wait, bounded by `lock_timeout`, not a conflict. The claims end with the
/// transaction, or with the savepoint of the group member that took them. A hash collision
/// costs a retryable conflict between two calls creating their rows at the same moment.
const CREATE_LOCK_ROWS: &str = "
    WITH wanted AS MATERIALIZED (
        SELECT n, pg_try_advisory_xact_lock(hashtextextended(format('%s:%s:%s:%s',
                   length(current_schema()), current_schema(), $1::text, encode(n, 'hex')), 0))
               AS claimed
        FROM unnest($2::bytea[]) AS n
    ), created AS (
        INSERT INTO attribute_locks (flow_id, name)
        SELECT $1, n FROM wanted WHERE (SELECT bool_and(claimed) FROM wanted)
        ON CONFLICT DO NOTHING
    )
    SELECT count(*) FILTER (WHERE NOT claimed) FROM wanted";

/// The statements of simple-query batches, prepared once per connection with SQL `PREPARE`:
/// a batch then carries `EXECUTE attrflow_put(…)`, which the server parses in a few
/// microseconds and runs on its cached plan, instead of an `INSERT … ON CONFLICT` it would
/// parse, analyse and plan again for every RPC. The writes (`end_batch` in the parent
/// module) use `attrflow_put`, `attrflow_drop` and `attrflow_close`; a group member opens with
/// `attrflow_open` (`open_rpc` as one row per value found, names and flow types in hex),
/// sent in one batch behind the previous member's writes, or `attrflow_open_reading` when
/// the member also reads names it does not lock (`$3`); a lock-free read starts with
/// `attrflow_peek`, the same rows without locks (`postgres/snapshot.rs`). A group member
/// reading what its opening did not (a map loaded whole, with `attrflow_range`, or other
/// values, with `attrflow_values`) reads it behind the statements waiting in the group.
fn batch_statements() -> String {
    let open = open_locks_and_values("$2");
    let open_reading = open_locks_and_values("$2 || $3");
    format!(
        "PREPARE attrflow_put (text, bytea, text) AS
             INSERT INTO attribute_values (flow_id, name, value) VALUES ($1, $2, $3)
             ON CONFLICT (flow_id, name) DO UPDATE SET value = excluded.value;
         PREPARE attrflow_drop (text, bytea) AS
             DELETE FROM attribute_values WHERE flow_id = $1 AND name = $2;
         PREPARE attrflow_close (text, text) AS
             UPDATE flows SET closed_run = $2 WHERE flow_id = $1;
         PREPARE attrflow_open (text, bytea[]) AS {open} {OPENED_ROWS};
         PREPARE attrflow_open_reading (text, bytea[], bytea[]) AS {open_reading} {OPENED_ROWS};
         PREPARE attrflow_peek (text, bytea[]) AS
             SELECT encode(f.flow_type, 'hex'), f.run_id, 0, encode(k.name, 'hex'), k.value,
                    f.closed_run
             FROM flows f LEFT JOIN attribute_values k ON k.flow_id = $1 AND k.name = ANY($2)
             WHERE f.flow_id = $1;
         PREPARE attrflow_values (text, bytea[]) AS
             SELECT encode(name, 'hex'), value FROM attribute_values
             WHERE flow_id = $1 AND name = ANY($2);
         PREPARE attrflow_range (text, bytea, bytea) AS
             SELECT encode(name, 'hex'), value FROM attribute_values
             WHERE flow_id = $1 AND name >= $2 AND name < $3 ORDER BY name"
    )
}

impl Statements {
    fn prepare(client: &mut Client) -> Result<Self, postgres::Error> {
        client.batch_execute(&batch_statements())?;
        Ok(Statements {
            load_flow: client.prepare(
                "SELECT flow_type, run_id, closed_run, started_at_ms FROM flows WHERE flow_id = $1",
            )?,
            lock_flow: client
                .prepare("SELECT run_id, closed_run FROM flows WHERE flow_id = $1 FOR SHARE")?,
            close_run: client.prepare("UPDATE flows SET closed_run = $2 WHERE flow_id = $1")?,
            insert_flow: client.prepare(
                "INSERT INTO flows (flow_id, flow_type, run_id, started_at_ms)
                 VALUES ($1, $2, $3, $4) ON CONFLICT (flow_id) DO NOTHING",
            )?,
            replace_run: client.prepare(
                "WITH dropped AS (
                     DELETE FROM attribute_values WHERE flow_id = $1 RETURNING 1
                 ), bumped AS (
                     UPDATE attribute_locks SET grants = grants + 1 WHERE flow_id = $1 RETURNING 1
                 )
                 UPDATE flows SET flow_type = $2, run_id = $3, started_at_ms = $4, closed_run = NULL
                 WHERE flow_id = $1 AND run_id = $5",
            )?,
            read_values: client.prepare(
                "SELECT name, value FROM attribute_values WHERE flow_id = $1 AND name = ANY($2)",
            )?,
            read_range: client.prepare(
                "SELECT name, value FROM attribute_values
                 WHERE flow_id = $1 AND name >= $2 AND name < $3 ORDER BY name",
            )?,
            upsert_values: client.prepare(
                "INSERT INTO attribute_values (flow_id, name, value)
                 SELECT $1, n, v FROM unnest($2::bytea[], $3::text[]) AS w(n, v)
                 ON CONFLICT (flow_id, name) DO UPDATE SET value = excluded.value",
            )?,
            delete_values: client
                .prepare("DELETE FROM attribute_values WHERE flow_id = $1 AND name = ANY($2)")?,
            create_lock_rows: client.prepare(CREATE_LOCK_ROWS)?,
            open_rpc: client.prepare(&format!(
                "{}
                 SELECT f.flow_type, f.run_id, (SELECT count(*) FROM bumped),
                        ARRAY(SELECT name FROM known ORDER BY name),
                        ARRAY(SELECT value FROM known ORDER BY name), f.closed_run
                 FROM flows f WHERE f.flow_id = $1 FOR SHARE OF f",
                open_locks_and_values("$2 || $3")
            ))?,
        })
    }
}

/// One open connection and its prepared statements.
pub(crate) struct Connection {
    pub client: Client,
    pub statements: Statements,
    /// Set when a statement found the connection itself failed; it is then dropped.
    pub broken: Cell<bool>,
    /// Whether it served an earlier call (and may have broken while it sat idle).
    pub reused: bool,
    /// Whether the call it serves has not had a statement succeed yet.
    pub untouched: Cell<bool>,
}

struct PoolState {
    idle: Vec<Connection>,
    open: usize,
}

/// The store's connections.
pub(crate) struct Pool {
    config: postgres::Config,
    tls: MakeRustlsConnect,
    options: PostgresOptions,
    location: String,
    state: Mutex<PoolState>,
    returned: Condvar,
}

impl Pool {
    pub(crate) fn new(
        config: postgres::Config,
        tls: MakeRustlsConnect,
        options: PostgresOptions,
        location: String,
    ) -> Self {
        Pool {
            config,
            tls,
            options,
            location,
            state: Mutex::new(PoolState {
                idle: Vec::new(),
                open: 0,
            }),
            returned: Condvar::new(),
        }
    }

    /// A connection with the session set up but no statements prepared, for migrations.
    pub(crate) fn connect_bare(&self) -> Result<Client> {
        self.open_client(false)
    }

    fn open_client(&self, for_a_call: bool) -> Result<Client> {
        let mut client = self
            .config
            .connect(self.tls.clone())
            .map_err(|e| connect_error(&self.location, for_a_call, e))?;
        client
            .batch_execute(&self.options.session_setup())
            .map_err(|e| pg_error(&self.location, "setting up the session", e))?;
        Ok(client)
    }

    fn connect(&self) -> Result<Connection> {
        let mut client = self.open_client(true)?;
        let statements = Statements::prepare(&mut client)
            .map_err(|e| pg_error(&self.location, "preparing statements", e))?;
        Ok(Connection {
            client,
            statements,
            broken: Cell::new(false),
            reused: false,
            untouched: Cell::new(true),
        })
    }

    /// Drops every idle connection: one of them was found broken, and the others were
    /// opened to the same server.
    pub(crate) fn discard_idle(&self) {
        let mut state = self.state.lock();
        let dropped = state.idle.len();
        state.idle.clear();
        state.open -= dropped;
        drop(state);
        self.returned.notify_all();
    }

    /// A connection for one call; it goes back to the pool when the guard drops.
    pub(crate) fn get(&self) -> Result<PooledConnection<'_>> {
        let deadline = Instant::now() + self.options.pool_timeout;
        let mut state = self.state.lock();
        loop {
            if let Some(mut conn) = state.idle.pop() {
                if conn.client.is_closed() {
                    state.open -= 1;
                    continue;
                }
                conn.reused = true;
                return Ok(self.lend(conn));
            }
            if state.open < self.options.pool_max_size {
                state.open += 1;
                drop(state);
                return match self.connect() {
                    Ok(conn) => Ok(self.lend(conn)),
                    Err(e) => {
                        self.forget_one();
                        Err(e)
                    }
                };
            }
            let (guard, timed_out) = self.returned.wait_until(state, deadline);
            state = guard;
            if timed_out {
                return Err(Error::LockConflict(format!(
                    "store {}: all {} connections stayed busy for {:?}; retry, or raise \
                     pool_max_size or pool_timeout_ms",
                    self.location, self.options.pool_max_size, self.options.pool_timeout
                )));
            }
        }
    }

    /// A connection out of the pool (for a group transaction that outlives any one call),
    /// until [`Pool::put_back`]; it counts against `pool_max_size` meanwhile.
    pub(crate) fn take(&self) -> Result<Connection> {
        let mut pooled = self.get()?;
        pooled
            .conn
            .take()
            .ok_or_else(|| Error::storage("a pooled connection was used after it was returned"))
    }

    /// Returns a connection [`Pool::take`] gave out (a broken one is dropped).
    pub(crate) fn put_back(&self, conn: Connection) {
        self.give_back(conn);
    }

    fn lend(&self, conn: Connection) -> PooledConnection<'_> {
        PooledConnection {
            pool: self,
            conn: Some(conn),
        }
    }

    fn forget_one(&self) {
        self.state.lock().open -= 1;
        self.returned.notify_one();
    }

    fn give_back(&self, conn: Connection) {
        let mut state = self.state.lock();
        if conn.broken.get() || conn.client.is_closed() {
            state.open -= 1;
        } else {
            state.idle.push(conn);
        }
        drop(state);
        self.returned.notify_one();
    }
}

/// A connection lent to one call.
pub(crate) struct PooledConnection<'p> {
    pool: &'p Pool,
    conn: Option<Connection>,
}

impl PooledConnection<'_> {
    /// The connection; present until the guard drops.
    pub(crate) fn get(&mut self) -> Result<&mut Connection> {
        self.conn
            .as_mut()
            .ok_or_else(|| Error::storage("a pooled connection was used after it was returned"))
    }
}

impl Drop for PooledConnection<'_> {
    fn drop(&mut self) {
        if let Some(conn) = self.conn.take() {
            self.pool.give_back(conn);
        }
    }
}
