//! The pipeline on an in-memory backend that logs every step of the seam.

use super::*;

/// A backend that logs every step of the seam and keeps values in memory.
#[derive(Default)]
struct Logged {
    locks: Arc<LockTable>,
    steps: Mutex<Vec<String>>,
    committed: Mutex<Vec<Write>>,
}

/// A group: the writes of released members, and those of the member now running.
#[derive(Default)]
struct Staged {
    kept: Vec<Write>,
    running: Vec<Write>,
}

impl Logged {
    fn step(&self, step: impl Into<String>) {
        self.steps.lock().push(step.into());
    }
}

struct NoReads(FlowRecord);

impl SnapshotReader for NoReads {
    fn flow(&self) -> &FlowRecord {
        &self.0
    }
    fn read(&mut self, _: &[String]) -> Result<Vec<(String, String)>> {
        Ok(Vec::new())
    }
    fn read_map(&mut self, _: &str) -> Result<Vec<(String, String)>> {
        Ok(Vec::new())
    }
}

fn record(flow_id: &str) -> FlowRecord {
    FlowRecord {
        flow_id: flow_id.to_owned(),
        flow_type: "T".to_owned(),
        run_id: "r".to_owned(),
    }
}

impl GroupBackend for Logged {
    type Group = Staged;
    fn location(&self) -> String {
        "memory".to_owned()
    }
    fn busy_timeout(&self) -> Duration {
        Duration::from_secs(5)
    }
    fn limits(&self) -> GroupLimits {
        GroupLimits::default()
    }
    fn lock_table(&self) -> &Arc<LockTable> {
        &self.locks
    }
    fn begin_group(&self) -> Result<Staged> {
        self.step("begin");
        Ok(Staged::default())
    }
    fn savepoint(&self, _: &mut Staged) -> Result<()> {
        self.step("savepoint");
        Ok(())
    }
    fn release_savepoint(&self, group: &mut Staged) -> Result<()> {
        self.step("release");
        let running = std::mem::take(&mut group.running);
        group.kept.extend(running);
        Ok(())
    }
    fn rollback_to_savepoint(&self, group: &mut Staged) -> Result<()> {
        self.step("rollback to savepoint");
        group.running.clear();
        Ok(())
    }
    fn run_member(
        &self,
        group: &mut Staged,
        flow_id: &str,
        (locks, _): Opening<'_>,
        _: &[String],
        body: &mut RpcBody<'_>,
    ) -> Result<usize> {
        self.step(format!(
            "member {flow_id}, {} locks held",
            self.locks.held_count()
        ));
        assert_eq!(self.locks.held_among(flow_id, locks), locks);
        let writes = body(&mut NoReads(record(flow_id)))?;
        group.running.extend(writes);
        Ok(1)
    }
    fn start_flow_member(
        &self,
        _: &mut Staged,
        _: &FlowRecord,
        _: &[(String, String)],
        _: &ReplaceRun<'_>,
    ) -> Result<StartOutcome> {
        Ok(StartOutcome::Started)
    }
    fn read_committed(
        &self,
        flow_id: &str,
        _: (&[String], &[String]),
        body: &mut RpcBody<'_>,
    ) -> Result<Vec<Write>> {
        self.step("read committed");
        body(&mut NoReads(record(flow_id)))
    }
    fn commit_group(&self, group: Staged) -> Result<()> {
        self.step("commit");
        self.committed.lock().extend(group.kept);
        Ok(())
    }
    fn rollback_group(&self, _: Staged) {
        self.step("rollback");
    }
}

fn write(name: &str) -> Vec<Write> {
    vec![(name.to_owned(), Some("1".to_owned()))]
}

#[test]
fn a_lone_call_runs_in_a_savepoint_of_its_own_group_and_releases_its_locks() {
    let backend = Logged::default();
    let pipeline = GroupCommit::<Staged>::new();
    let locks = Isolation::Exclusive {
        reads: Vec::new(),
        locks: vec!["a".to_owned()],
        maps: Vec::new(),
    };
    pipeline
        .run_rpc(&backend, "f", &locks, &mut |_| Ok(write("a")))
        .unwrap();
    let failed = pipeline.run_rpc(&backend, "f", &locks, &mut |_| {
        Err(Error::handler("refused"))
    });
    assert_eq!(failed, Err(Error::handler("refused")));
    assert_eq!(
        *backend.steps.lock(),
        [
            "begin",
            "savepoint",
            "member f, 1 locks held",
            "release",
            "commit",
            "begin",
            "savepoint",
            "member f, 1 locks held",
            "rollback to savepoint",
            "rollback",
        ]
    );
    assert_eq!(*backend.committed.lock(), write("a"));
    assert_eq!(backend.locks.held_count(), 0);
    let stats = pipeline.stats();
    assert_eq!((stats.commits, stats.members, stats.waiting), (1, 1, 0));
}

#[test]
fn a_lock_free_call_reads_committed_state_and_joins_a_group_only_to_write() {
    let backend = Logged::default();
    let pipeline = GroupCommit::<Staged>::new();
    pipeline
        .run_rpc(
            &backend,
            "f",
            &Isolation::Shared {
                reads: Vec::new(),
                maps: Vec::new(),
            },
            &mut |_| Ok(Vec::new()),
        )
        .unwrap();
    pipeline
        .run_rpc(
            &backend,
            "f",
            &Isolation::Shared {
                reads: Vec::new(),
                maps: Vec::new(),
            },
            &mut |_| Ok(write("m")),
        )
        .unwrap();
    assert_eq!(
        *backend.steps.lock(),
        [
            "read committed",
            "read committed",
            "begin",
            "savepoint",
            "member f, 0 locks held",
            "release",
            "commit",
        ]
    );
    assert_eq!(*backend.committed.lock(), write("m"));
}

#[test]
fn members_run_for_queued_callers_answer_each_caller_with_its_own_result_or_panic() {
    let backend = Logged::default();
    let pipeline = GroupCommit::<Staged>::new();
    let locks = Isolation::Exclusive {
        reads: Vec::new(),
        locks: vec!["v".to_owned()],
        maps: Vec::new(),
    };
    let holding = std::sync::atomic::AtomicBool::new(false);
    let call = |flow: &str, body: &mut RpcBody<'_>| pipeline.run_rpc(&backend, flow, &locks, body);
    let until = |done: &dyn Fn() -> bool| {
        while !done() {
            std::thread::sleep(Duration::from_millis(1));
        }
    };
    let until_waiting = |n: usize| until(&|| pipeline.stats().waiting >= n);
    let (holder, panicked, failed, wrote) = std::thread::scope(|s| {
        let holder = s.spawn(|| {
            call("f0", &mut |_| {
                holding.store(true, Ordering::SeqCst);
                until_waiting(3);
                Ok(write("a"))
            })
        });
        until(&|| holding.load(Ordering::SeqCst));
        let panicked = s.spawn(|| call("f1", &mut |_| panic!("boom")));
        until_waiting(1);
        let failed = s.spawn(|| call("f2", &mut |_| Err(Error::handler("refused"))));
        until_waiting(2);
        let wrote = s.spawn(|| call("f3", &mut |_| Ok(write("d"))));
        (holder.join(), panicked.join(), failed.join(), wrote.join())
    });
    assert_eq!(holder.unwrap(), Ok(()));
    let payload = panicked.expect_err("the panic reaches its own caller");
    assert_eq!(payload.downcast_ref::<&str>(), Some(&"boom"));
    assert_eq!(failed.unwrap(), Err(Error::handler("refused")));
    assert_eq!(wrote.unwrap(), Ok(()));
    let mut committed = write("a");
    committed.extend(write("d"));
    assert_eq!(*backend.committed.lock(), committed);
    let stats = pipeline.stats();
    assert_eq!((stats.commits, stats.members, stats.waiting), (1, 2, 0));
    let steps = backend.steps.lock();
    assert_eq!(
        steps.iter().filter(|s| *s == "commit").count(),
        1,
        "{steps:?}"
    );
    assert_eq!(backend.locks.held_count(), 0);
}
