//! The `attrflow` command-line tool: look inside a store (flows, a flow's values, a chunked
//! log's pages), check it (`verify`), and move a log between stores (`export`, `import`,
//! SQLite ↔ PostgreSQL). Stores are named as everywhere else: a path, a `sqlite:` URL or a
//! `postgresql://` URL. Every rule it checks or follows is core's
//! ([`attrflow::chunked_log::ChunkedLog::verify`], the flows' own paging and appends).

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::{self, BufRead, Write};

use attrflow::flows::app_log::{self, AppLog};
use attrflow::flows::chunked_subscriber::{self, SubscriberArchive};
use attrflow::flows::follow::{FollowCursor, ForwardRead};
use attrflow::flows::inspect::chunked_logs;
use attrflow::limits::MAX_READ_RECORDS;
use attrflow::store::{open_store, FlowRecord, StoreUrl};
use attrflow::Runtime;
use clap::{Parser, Subcommand};
use indicatif::ProgressBar;
use serde_json::Value;

mod verifiable;

/// What can go wrong; each is reported on one line.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// An error of the store or of a flow.
    #[error(transparent)]
    Attrflow(#[from] attrflow::Error),
    /// The store breaks an invariant (`verify`).
    #[error("flow {flow_id:?}: {violation}")]
    Violation {
        /// The flow holding the broken value.
        flow_id: String,
        /// What is broken.
        violation: String,
    },
    /// The backend's own check of its files failed (`verify`).
    #[error("store {location}: integrity check: {problem}")]
    Integrity {
        /// The store.
        location: String,
        /// The backend's first complaint.
        problem: String,
    },
    /// A command used wrongly (for example a log name missing).
    #[error("{0}")]
    Usage(String),
    /// Input or output failed.
    #[error("{0}")]
    Io(#[from] io::Error),
}

/// Look inside attrflow stores, check them, and move chunked logs between them.
#[derive(Debug, Parser)]
#[command(name = "attrflow", version, about)]
pub struct Cli {
    /// The store: a path, a `sqlite:` URL or a `postgresql://` URL.
    #[arg(long, short, global = true, default_value = "data/attrflow.db")]
    pub store: String,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// List the flows: ID, type, run ID and status (`running`, or how it was stopped).
    Flows,
    /// Show a flow's stored Attributes and map instances (name, then JSON).
    Show {
        /// The flow ID.
        flow: String,
    },
    /// Page a chunked log newest first: a subscriber archive, or an app log's `--log`.
    Page {
        /// The flow ID.
        flow: String,
        /// The log of an app log flow.
        #[arg(long)]
        log: Option<String>,
        /// Start at this sequence (and go older) instead of the newest record.
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
        from: Option<u64>,
        /// JSON lines instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Check the store: the backend's integrity check and every chunked log's invariants;
    /// for a verifiable log, every record's leaf against its stored tree.
    Verify {
        /// A checkpoint signed earlier (a file): the log it names must still be consistent
        /// with it (same root at its tree size). Its origin names the log
        /// (`attrflow/<flow ID>/<log>`).
        #[arg(long, requires = "verifier_key")]
        checkpoint: Option<std::path::PathBuf>,
        /// The verifier key of the checkpoint's signer (`<name>+<hash>+<base64>`), or a file
        /// holding it.
        #[arg(long, requires = "checkpoint")]
        verifier_key: Option<String>,
    },
    /// Write a chunked log as JSON lines, oldest record first.
    Export {
        /// The flow ID.
        flow: String,
        /// The log of an app log flow.
        #[arg(long)]
        log: Option<String>,
    },
    /// Append JSON lines written by `export` to a log of another store, in order, checking
    /// every record gets the sequence it had.
    Import {
        /// The flow ID (started if absent, with the exported log's flow type).
        flow: String,
        /// The log of an app log flow.
        #[arg(long)]
        log: Option<String>,
    },
    /// Switch a log's Merkle tree on (idempotent): it covers every record from sequence 1
    /// and every later append keeps it. Prints the tree head as JSON.
    Verifiable {
        /// The flow ID.
        flow: String,
        /// The log of an app log flow.
        #[arg(long)]
        log: Option<String>,
    },
    /// Print a log's checkpoint, signed with the signer key in `--key`.
    Checkpoint {
        /// The flow ID.
        flow: String,
        /// The log of an app log flow.
        #[arg(long)]
        log: Option<String>,
        /// The file holding the signer key (`PRIVATE+KEY+...`).
        #[arg(long)]
        key: std::path::PathBuf,
        /// The checkpoint's origin line (default `attrflow/<flow ID>/<log>`).
        #[arg(long)]
        origin: Option<String>,
    },
    /// Print an inclusion proof (`--sequence`) or a consistency proof (`--from`, `--to`).
    Prove {
        /// The flow ID.
        flow: String,
        /// The log of an app log flow.
        #[arg(long)]
        log: Option<String>,
        /// The record to prove included.
        #[arg(long, conflicts_with_all = ["from", "to"], required_unless_present = "from")]
        sequence: Option<u64>,
        /// The tree size of the inclusion proof (default: the log's).
        #[arg(long, requires = "sequence")]
        tree_size: Option<u64>,
        /// The smaller tree size of a consistency proof.
        #[arg(long, requires = "to")]
        from: Option<u64>,
        /// The larger tree size of a consistency proof.
        #[arg(long, requires = "from")]
        to: Option<u64>,
    },
    /// Print a new signer key and its verifier key, one a line (needs no store).
    Keygen {
        /// The key's name.
        name: String,
    },
}

/// Runs the command line `args` (program name first), printing to stdout; an error is one
/// line on stderr. Returns the process exit code: 0, 1 for an error, 2 for a usage error.
pub fn main_with<I, T>(args: I) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) if e.use_stderr() => {
            // One line, as every other error: clap's reason, without its usage block.
            let message = e.to_string();
            let first = message.split("\n\n").next().unwrap_or_default();
            let reason = first.strip_prefix("error: ").unwrap_or(first);
            let reason = reason.split_whitespace().collect::<Vec<_>>().join(" ");
            eprintln!("attrflow: {reason} (see attrflow --help)");
            return u8::try_from(e.exit_code()).unwrap_or(2);
        }
        Err(help_or_version) => {
            let _ = help_or_version.print();
            return 0;
        }
    };
    match run(&cli, &mut io::stdout().lock()) {
        Ok(()) => 0,
        // The reader went away (`attrflow page … | head`): done, as other tools.
        Err(CliError::Io(e)) if e.kind() == io::ErrorKind::BrokenPipe => 0,
        Err(e) => {
            eprintln!("attrflow: {}", e.to_string().replace('\n', " "));
            1
        }
    }
}

/// Runs a parsed command, writing its output to `out`.
pub fn run(cli: &Cli, out: &mut dyn Write) -> Result<(), CliError> {
    if let Command::Keygen { name } = &cli.command {
        return verifiable::keygen(name, out);
    }
    // Only an import may create a store: reading a mistyped path must not make an empty one.
    if let StoreUrl::Sqlite { path, .. } = StoreUrl::parse(&cli.store)? {
        if !matches!(cli.command, Command::Import { .. }) && !path.exists() {
            return Err(CliError::Usage(format!(
                "store {} does not exist",
                path.display()
            )));
        }
    }
    let runtime = Runtime::new(open_store(&cli.store)?);
    match &cli.command {
        Command::Flows => {
            for flow in runtime.store().list_flows()? {
                let status = runtime.describe_flow(&flow.flow_id)?.status;
                writeln!(
                    out,
                    "{}\t{}\t{}\t{status}",
                    flow.flow_id, flow.flow_type, flow.run_id
                )?;
            }
        }
        Command::Show { flow } => {
            require_flow(&runtime, flow)?;
            for (name, json) in runtime.store().stored_values(flow)? {
                writeln!(out, "{name}\t{json}")?;
            }
        }
        Command::Page {
            flow,
            log,
            from,
            json,
        } => {
            // Every page is read from the run the flow has now: one started again during
            // the walk is an error rather than a walk mixing two runs' pages.
            let record = require_flow(&runtime, flow)?;
            let log = LogRef::of_type(&runtime, flow, &record.flow_type, log.as_deref())?;
            let mut pages = match from {
                Some(from) => log.pages_from(&runtime, flow, *from, record.run_id)?,
                None => log.pages(record.run_id),
            };
            while let Some(records) = pages.next_page()? {
                for record in records {
                    if from.is_some_and(|from| sequence(&record) > from) {
                        continue;
                    }
                    if *json {
                        writeln!(out, "{record}")?;
                    } else {
                        writeln!(out, "{}", table_row(&record))?;
                    }
                }
            }
        }
        Command::Verify {
            checkpoint,
            verifier_key,
        } => {
            let checkpoint = match (checkpoint, verifier_key) {
                (Some(file), Some(key)) => Some(verifiable::read_checkpoint(file, key)?),
                _ => None,
            };
            verify(&runtime, checkpoint.as_ref(), out)?
        }
        Command::Export { flow, log } => {
            let log = LogRef::new(&runtime, flow, log.as_deref())?;
            let progress = ProgressBar::new_spinner().with_message("exporting");
            let mut reads = log.reads_forward();
            while let Some(records) = reads.next_read()? {
                progress.inc(records.len() as u64);
                for record in &records {
                    writeln!(out, "{record}")?;
                }
            }
            progress.finish_and_clear();
        }
        Command::Import { flow, log } => import(&runtime, flow, log.as_deref(), out)?,
        Command::Verifiable { flow, log } => {
            verifiable::make_verifiable(&runtime, flow, log.as_deref(), out)?
        }
        Command::Checkpoint {
            flow,
            log,
            key,
            origin,
        } => verifiable::checkpoint(&runtime, flow, log.as_deref(), key, origin.as_deref(), out)?,
        Command::Prove {
            flow,
            log,
            sequence,
            tree_size,
            from,
            to,
        } => {
            let proof = match (sequence, from, to) {
                (Some(sequence), _, _) => verifiable::Proof::Inclusion {
                    sequence: *sequence,
                    tree_size: *tree_size,
                },
                (None, Some(from), Some(to)) => verifiable::Proof::Consistency {
                    from: *from,
                    to: *to,
                },
                _ => {
                    return Err(CliError::Usage(
                        "prove needs --sequence, or --from and --to".to_owned(),
                    ))
                }
            };
            verifiable::prove(&runtime, flow, log.as_deref(), proof, out)?;
        }
        Command::Keygen { .. } => {}
    }
    Ok(())
}

fn require_flow(runtime: &Runtime, flow_id: &str) -> Result<FlowRecord, CliError> {
    runtime.store().flow(flow_id)?.ok_or_else(|| {
        attrflow::Error::FlowNotFound {
            flow_id: flow_id.to_owned(),
        }
        .into()
    })
}

fn sequence(record: &Value) -> u64 {
    record["sequence"].as_u64().unwrap_or(0)
}

/// A field's text as a table shows it: control characters (a line break, a tab, a terminal
/// escape) escaped, so that one record stays one row and nothing reaches the terminal as a
/// command.
fn shown_text(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// A record as a table row: its sequence, then its other fields.
fn table_row(record: &Value) -> String {
    let mut row = sequence(record).to_string();
    if let Value::Object(fields) = record {
        for (name, value) in fields.iter().filter(|(name, _)| *name != "sequence") {
            let shown = value.as_str().map_or_else(|| value.to_string(), shown_text);
            row.push_str(&format!("\t{name}={shown}"));
        }
    }
    row
}

/// One chunked log a command reads or writes, through its flow's own API.
enum LogRef<'r> {
    Archive(SubscriberArchive<'r>),
    App(AppLog<'r>, String),
}

impl<'r> LogRef<'r> {
    fn new(runtime: &'r Runtime, flow_id: &'r str, log: Option<&str>) -> Result<Self, CliError> {
        let flow = require_flow(runtime, flow_id)?;
        Self::of_type(runtime, flow_id, &flow.flow_type, log)
    }

    fn of_type(
        runtime: &'r Runtime,
        flow_id: &'r str,
        flow_type: &str,
        log: Option<&str>,
    ) -> Result<Self, CliError> {
        match (flow_type, log) {
            (chunked_subscriber::FLOW_TYPE, None) => {
                Ok(LogRef::Archive(SubscriberArchive::new(runtime, flow_id)))
            }
            (app_log::FLOW_TYPE, Some(log)) => {
                app_log::validate_log_name(log)?;
                Ok(LogRef::App(AppLog::new(runtime, flow_id), log.to_owned()))
            }
            (app_log::FLOW_TYPE, None) => Err(CliError::Usage(format!(
                "flow {flow_id:?} is an app log: name the log with --log"
            ))),
            (chunked_subscriber::FLOW_TYPE, Some(_)) => Err(CliError::Usage(format!(
                "flow {flow_id:?} is a subscriber archive: it has one log, so no --log"
            ))),
            (other, _) => Err(CliError::Usage(format!(
                "flow {flow_id:?} is a {other}, which holds no chunked log"
            ))),
        }
    }

    /// Reads the whole log forward, oldest retained record first.
    fn reads_forward(&self) -> ReadsForward<'_, 'r> {
        ReadsForward {
            log: self,
            cursor: FollowCursor::new(0, MAX_READ_RECORDS, None)
                .unwrap_or_else(|e| unreachable!("from the start, a full read is valid: {e}")),
            done: false,
        }
    }

    /// The pages of run `run_id`, newest first.
    fn pages(&self, run_id: String) -> Pages<'_, 'r> {
        Pages {
            log: self,
            token: Some("current".to_owned()),
            run_id,
        }
    }

    /// The pages of run `run_id` from the one holding `sequence` down.
    fn pages_from(
        &self,
        runtime: &Runtime,
        flow_id: &str,
        sequence: u64,
        run_id: String,
    ) -> Result<Pages<'_, 'r>, CliError> {
        let layout = match self {
            LogRef::Archive(_) => chunked_subscriber::LOG,
            LogRef::App(_, log) => app_log::named_log(log),
        };
        let values = stored_values(runtime, flow_id)?;
        let token = layout
            .page_token_of(&values, sequence)
            .map_err(|v| CliError::Violation {
                flow_id: flow_id.to_owned(),
                violation: v.to_string(),
            })?;
        Ok(Pages {
            log: self,
            token: Some(token),
            run_id,
        })
    }

    /// Starts the log's flow, or finds it running; returns its run ID.
    fn start(&self) -> Result<String, CliError> {
        Ok(match self {
            LogRef::Archive(archive) => archive.start()?,
            LogRef::App(app, _) => app.start()?,
        })
    }

    /// Reads an export of this log (JSON lines, empty lines skipped) and checks every line:
    /// UTF-8 JSON, exactly the fields this log's records have, and sequences dense and
    /// ascending. The first line that is not is named.
    fn read_export(&self, input: impl BufRead) -> Result<Vec<ExportedRecord>, CliError> {
        let mut records: Vec<ExportedRecord> = Vec::new();
        for (index, line) in input.split(b'\n').enumerate() {
            let line_number = index + 1;
            let bad = |problem: String| {
                CliError::Usage(format!("line {line_number}: {problem}; nothing imported"))
            };
            let bytes = line?;
            let text =
                std::str::from_utf8(&bytes).map_err(|e| bad(format!("not UTF-8 text ({e})")))?;
            if text.trim().is_empty() {
                continue;
            }
            let value: Value = attrflow::json::parse(text, || "the line".to_owned())
                .map_err(|e| bad(e.to_string()))?;
            let record = self.exported_record(value).map_err(bad)?;
            if let Some(previous) = records.last() {
                if record.sequence != previous.sequence + 1 {
                    return Err(bad(format!(
                        "sequence {} follows sequence {} (an export's sequences are dense, oldest first)",
                        record.sequence, previous.sequence
                    )));
                }
            }
            records.push(ExportedRecord {
                line: line_number,
                ..record
            });
        }
        Ok(records)
    }

    /// One exported record of this log, or what is wrong with it.
    fn exported_record(&self, value: Value) -> Result<ExportedRecord, String> {
        let Value::Object(mut fields) = value else {
            return Err(format!("a record is a JSON object, not {value}"));
        };
        let sequence = match fields.remove("sequence") {
            Some(Value::Number(n)) if n.as_u64().is_some_and(|n| n >= 1) => {
                n.as_u64().unwrap_or_default()
            }
            Some(other) => {
                return Err(format!(
                    "\"sequence\" must be a whole number from 1, not {other}"
                ))
            }
            None => return Err("the record has no \"sequence\"".to_owned()),
        };
        let expected: &[&str] = match self {
            LogRef::Archive(_) => &["subscriberId", "deliveryAddress"],
            LogRef::App(..) => &["record"],
        };
        if let Some(unknown) = fields
            .keys()
            .find(|name| !expected.contains(&name.as_str()))
        {
            return Err(format!(
                "unknown field {unknown:?} (a record of this log has \"sequence\" and {})",
                expected
                    .iter()
                    .map(|f| format!("{f:?}"))
                    .collect::<Vec<_>>()
                    .join(" and ")
            ));
        }
        let payload = match self {
            LogRef::Archive(_) => {
                let mut text = |name: &str| match fields.remove(name) {
                    Some(Value::String(text)) => Ok(text),
                    _ => Err(format!("the record has no {name:?} text")),
                };
                Payload::Subscriber(chunked_subscriber::appends::NewSubscriber::new(
                    text("subscriberId")?,
                    text("deliveryAddress")?,
                ))
            }
            LogRef::App(..) => match fields.remove("record") {
                Some(Value::Null) | None => return Err("the record has no \"record\"".to_owned()),
                Some(record) => Payload::Entry(record),
            },
        };
        Ok(ExportedRecord {
            line: 0,
            sequence,
            payload,
        })
    }

    /// Appends `batch` (at most a batch's size) in one transaction, retrying lock
    /// conflicts; returns the sequence its first record got.
    fn append_batch(&self, batch: &[ExportedRecord]) -> attrflow::Result<u64> {
        let (mut subscribers, mut entries) = (Vec::new(), Vec::new());
        for record in batch {
            match &record.payload {
                Payload::Subscriber(subscriber) => subscribers.push(subscriber.clone()),
                Payload::Entry(entry) => entries.push(entry.clone()),
            }
        }
        let first = match self {
            LogRef::Archive(archive) => archive
                .retrying(|a| a.register_batch(&subscribers, None))?
                .first()
                .map(|s| s.sequence),
            LogRef::App(app, log) => app
                .retrying(|a| a.append_batch(log, entries.clone(), None))?
                .first()
                .map(|e| e.sequence),
        };
        Ok(first.unwrap_or_default())
    }
}

/// A record of an export, read back: the line it was on, its sequence, what to append.
struct ExportedRecord {
    line: usize,
    sequence: u64,
    payload: Payload,
}

/// What an exported record appends.
enum Payload {
    Subscriber(chunked_subscriber::appends::NewSubscriber),
    Entry(Value),
}

/// Walks a log's pages newest first, each page's records newest first, as JSON.
/// Pages a log newest first, every page read from one run.
struct Pages<'a, 'r> {
    log: &'a LogRef<'r>,
    token: Option<String>,
    run_id: String,
}

impl Pages<'_, '_> {
    fn next_page(&mut self) -> Result<Option<Vec<Value>>, CliError> {
        let Some(token) = self.token.take() else {
            return Ok(None);
        };
        let run_id = Some(self.run_id.as_str());
        let (records, next) = match self.log {
            // Read as an inspection: a stopped flow's log pages too.
            LogRef::Archive(archive) => {
                let page = archive.inspect_page(&token, run_id)?;
                (to_json(&page.subscribers)?, page.next_page_token)
            }
            LogRef::App(app, log) => {
                let page = app.inspect_page(log, &token, run_id)?;
                (to_json(&page.entries)?, page.next_page_token)
            }
        };
        self.token = (!next.is_empty()).then_some(next);
        Ok(Some(records))
    }
}

/// Reads a log forward, oldest retained record first, [`MAX_READ_RECORDS`] at a time, by
/// core's follow cursor ([`FollowCursor`]): every read after the first pinned to the first
/// one's run (a flow started again during the walk is an error rather than an export mixing
/// two runs' records), and resumed exactly after the last record read.
struct ReadsForward<'a, 'r> {
    log: &'a LogRef<'r>,
    cursor: FollowCursor,
    /// Whether a read found nothing more.
    done: bool,
}

impl ReadsForward<'_, '_> {
    fn next_read(&mut self) -> Result<Option<Vec<Value>>, CliError> {
        if self.done {
            return Ok(None);
        }
        let log = self.log;
        // Read as an inspection: a stopped flow's log exports too.
        let records = self.cursor.step(|after, limit, run_id| {
            let sequence = after + 1;
            Ok(match log {
                LogRef::Archive(archive) => {
                    let read = archive.inspect_read_from(sequence, limit, run_id)?;
                    ForwardRead {
                        records: to_json(&read.subscribers).map_err(into_core)?,
                        next_sequence: read.next_sequence,
                        run_id: read.run_id,
                    }
                }
                LogRef::App(app, name) => {
                    let read = app.inspect_read_from(name, sequence, limit, run_id)?;
                    ForwardRead {
                        records: to_json(&read.entries).map_err(into_core)?,
                        next_sequence: read.next_sequence,
                        run_id: read.run_id,
                    }
                }
            })
        })?;
        self.done = records.is_empty();
        Ok((!records.is_empty()).then_some(records))
    }
}

/// A record that did not turn into JSON, as the core error a cursor step returns.
fn into_core(error: CliError) -> attrflow::Error {
    match error {
        CliError::Attrflow(error) => error,
        other => attrflow::Error::invalid_input(other.to_string()),
    }
}

fn to_json<T: serde::Serialize>(records: &[T]) -> Result<Vec<Value>, CliError> {
    records
        .iter()
        .map(|r| serde_json::to_value(r).map_err(|e| CliError::Usage(e.to_string())))
        .collect()
}

/// The flow's stored values by physical name, each parsed as JSON.
fn stored_values(runtime: &Runtime, flow_id: &str) -> Result<BTreeMap<String, Value>, CliError> {
    runtime
        .store()
        .stored_values(flow_id)?
        .into_iter()
        .map(|(name, json)| {
            serde_json::from_str(&json)
                .map(|value| (name.clone(), value))
                .map_err(|e| CliError::Violation {
                    flow_id: flow_id.to_owned(),
                    violation: format!("{name}: not JSON: {e}"),
                })
        })
        .collect()
}

fn verify(
    runtime: &Runtime,
    checkpoint: Option<&verifiable::CheckpointToCheck>,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let store = runtime.store();
    if let Some(problem) = store.integrity_problem()? {
        return Err(CliError::Integrity {
            location: store.location(),
            problem,
        });
    }
    let flows = store.list_flows()?;
    let progress = ProgressBar::new(flows.len() as u64);
    let (mut logs, mut records, mut trees) = (0u64, 0u64, 0u64);
    let mut checked = None;
    for flow in &flows {
        let values = stored_values(runtime, &flow.flow_id)?;
        for (name, log) in chunked_logs(flow, &values) {
            let broken = |v: attrflow::chunked_log::verify::Violation| CliError::Violation {
                flow_id: flow.flow_id.clone(),
                violation: v.to_string(),
            };
            // The content check first: it names the first bad record by its sequence.
            let tree = log.verify_tree(&values).map_err(broken)?;
            let summary = log.verify(&values).map_err(broken)?;
            if let Some(tree) = tree {
                trees += 1;
                if let Some(checkpoint) = checkpoint.filter(|c| c.names(flow, &name)) {
                    checked =
                        Some(
                            checkpoint
                                .check(&tree)
                                .map_err(|violation| CliError::Violation {
                                    flow_id: flow.flow_id.clone(),
                                    violation,
                                })?,
                        );
                }
            }
            logs += 1;
            records += summary.records;
        }
        progress.inc(1);
    }
    progress.finish_and_clear();
    if let Some(checkpoint) = checkpoint {
        let size = checked.ok_or_else(|| {
            CliError::Usage(format!(
                "the checkpoint's origin {:?} names no verifiable log of this store",
                checkpoint.origin()
            ))
        })?;
        writeln!(
            out,
            "ok: consistent with the checkpoint of {} at tree size {size}",
            checkpoint.origin()
        )?;
    }
    writeln!(
        out,
        "ok: {} flows, {logs} chunked logs, {records} records",
        flows.len()
    )?;
    if trees > 0 {
        writeln!(
            out,
            "ok: {trees} verifiable logs, every record's leaf matches its stored tree"
        )?;
    }
    Ok(())
}

fn import(
    runtime: &Runtime,
    flow_id: &str,
    log: Option<&str>,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let flow_type = match runtime.store().flow(flow_id)? {
        // An existing flow decides what it holds (a wrong --log is named as such).
        Some(existing) => existing.flow_type,
        None if log.is_some() => app_log::FLOW_TYPE.to_owned(),
        None => chunked_subscriber::FLOW_TYPE.to_owned(),
    };
    let target = LogRef::of_type(runtime, flow_id, &flow_type, log)?;
    // Every line is read and checked before anything is written.
    let records = target.read_export(io::stdin().lock())?;
    let Some(first) = records.first() else {
        writeln!(out, "imported 0 records into flow {flow_id:?}")?;
        return Ok(());
    };
    let run_id = target.start()?;
    let newest = target.pages(run_id).next_page()?.unwrap_or_default();
    let next = newest.first().map_or(1, |record| sequence(record) + 1);
    if next != first.sequence {
        return Err(CliError::Usage(format!(
            "line {}: the record with sequence {} would get sequence {next} in flow {flow_id:?}; nothing imported",
            first.line, first.sequence
        )));
    }
    let progress = ProgressBar::new(records.len() as u64).with_message("importing");
    let mut count = 0u64;
    for batch in records.chunks(attrflow::chunked_log::MAX_BATCH_SIZE) {
        let (from, to) = (batch[0].line, batch[batch.len() - 1].line);
        let got = target.append_batch(batch).map_err(|error| {
            CliError::Usage(format!(
                "lines {from} to {to}: {error}; none of them stored, and the {count} records before them imported{}",
                if count == 0 { String::new() } else { format!(" (sequences {} to {})", first.sequence, first.sequence + count - 1) }
            ))
        })?;
        if got != batch[0].sequence {
            return Err(CliError::Usage(format!(
                "lines {from} to {to}: the records from sequence {} got sequences from {got} (did another writer append to the log meanwhile?)",
                batch[0].sequence
            )));
        }
        count += batch.len() as u64;
        progress.inc(batch.len() as u64);
    }
    progress.finish_and_clear();
    writeln!(out, "imported {count} records into flow {flow_id:?}")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use attrflow::flows::chunked_subscriber::{SubscriberArchive, FLOW_ID, FLOW_TYPE};
    use attrflow::{Error, IdReusePolicy, StartFlowOptions};

    use super::*;

    /// Registers subscribers `1..=count` in the archive's current run.
    fn register(archive: &SubscriberArchive<'_>, count: u64) {
        for n in 1..=count {
            archive
                .register(&format!("s-{n}"), &format!("{n}@example.com"))
                .unwrap();
        }
    }

    #[test]
    fn a_page_walk_keeps_to_the_run_it_began_in() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite:{}", dir.path().join("attrflow.db").display());
        let runtime = Runtime::new(open_store(&url).unwrap());
        let archive = SubscriberArchive::new(&runtime, FLOW_ID);
        let first = archive.start().unwrap();
        register(&archive, 150);
        let log = LogRef::new(&runtime, FLOW_ID, None).unwrap();
        let mut pages = log.pages(first.clone());
        let newest = pages.next_page().unwrap().unwrap_or_default();
        assert_eq!(newest.len(), 50);

        // Started again and refilled, the archive has a page under the walk's next token,
        // of another run: the walk stops there instead of reading it.
        let options = StartFlowOptions::new().id_reuse_policy(IdReusePolicy::TerminateIfRunning);
        let second = runtime.start_flow(FLOW_TYPE, FLOW_ID, &options).unwrap();
        register(&archive, 150);
        match pages.next_page() {
            Err(CliError::Attrflow(Error::RunNotCurrent {
                run_id,
                current_run_id,
                ..
            })) => assert_eq!((run_id, current_run_id), (first, second)),
            other => panic!(
                "expected RunNotCurrent, got {:?}",
                other.map(|page| page.map(|records| records.len()))
            ),
        }
    }
}
