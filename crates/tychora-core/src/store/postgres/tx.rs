//! A PostgreSQL transaction behind the store's one transaction interface (`store::tx::Tx`): the
//! repositories' statements run here unchanged, their `?N` placeholders numbered `$N`.
//!
//! The transaction holds one pooled connection from `BEGIN` to `COMMIT`; dropped without a
//! commit it rolls back, and a connection whose rollback failed is closed instead of going back
//! to the pool with a transaction open on it.
//!
//! A round trip costs tens of microseconds where SQLite's statement costs a fraction of one, so
//! writes whose result nobody waits for (`Statement::write`, `Tx::write`) are queued and sent
//! together, pipelined on the connection in their order, in one round trip with the
//! transaction's next read (or before its commit); and new rows' ids come from their identity
//! sequences in blocks (`Tx::next_id`), so the rows that need them can be written behind too.

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};

use bytes::BytesMut;
use deadpool_postgres::Object;
use tokio_postgres::Statement;
use tokio_postgres::types::{IsNull, ToSql, Type, to_sql_checked};

use super::{PgStore, error};
use crate::error::{Error, Result};
use crate::store::tx::{self, Dialect, Param, Row, Tx, Value, numbered};

/// Writes queued this long are sent even before a read asks (a bound on what waits in memory).
const MOST_PENDING: usize = 1024;

/// Ids taken from a sequence at once.
const ID_BLOCK: i64 = 256;

/// One open transaction on a PostgreSQL store.
pub struct PgTx<'s> {
    store: &'s PgStore,
    client: Option<Object>,
    /// Writes not sent yet, in order: the statement, its text (for messages), its values.
    pending: RefCell<Vec<(Statement, String, Vec<Value>)>>,
    /// Ids taken ahead, by table.
    ids: RefCell<HashMap<String, VecDeque<i64>>>,
    /// Whether a transaction is open on the connection: always for [`PgStore::begin`]'s; for a
    /// [`PgStore::session`], between its `begin` and its `commit` or `rollback`.
    open: std::cell::Cell<bool>,
}

impl PgStore {
    /// Begins a transaction (`READ COMMITTED`, PostgreSQL's default: a statement sees what was
    /// committed before it began, and an `UPDATE` of a row another transaction changed meanwhile
    /// re-checks its condition on the new row).
    ///
    /// # Errors
    /// `E_STORE_UNAVAILABLE` when the store cannot be reached.
    pub fn begin(&self) -> Result<PgTx<'_>> {
        let client = self
            .runtime
            .block_on(self.pool.get())
            .map_err(|e| self.pool_error(&e))?;
        self.runtime
            .block_on(client.batch_execute("BEGIN"))
            .map_err(|e| error(&self.location, &e))?;
        Ok(PgTx {
            store: self,
            client: Some(client),
            pending: RefCell::new(Vec::new()),
            ids: RefCell::new(HashMap::new()),
            open: std::cell::Cell::new(true),
        })
    }

    /// A pooled connection in autocommit, as the embedded engine holds its writer: each
    /// statement commits on its own until [`Session::begin`] opens a transaction (and
    /// [`Tx::atomic`] opens one around a block).
    ///
    /// # Errors
    /// `E_STORE_UNAVAILABLE` when the store cannot be reached.
    pub fn session(&self) -> Result<PgTx<'_>> {
        let client = self
            .runtime
            .block_on(self.pool.get())
            .map_err(|e| self.pool_error(&e))?;
        Ok(PgTx {
            store: self,
            client: Some(client),
            pending: RefCell::new(Vec::new()),
            ids: RefCell::new(HashMap::new()),
            open: std::cell::Cell::new(false),
        })
    }

    /// Runs `f` in a read-only `REPEATABLE READ` transaction whose snapshot is exported: `f` gets
    /// the snapshot's name, which another process (`pg_dump --snapshot`) may read the same state
    /// through while `f` runs, and reads that state itself through the `&dyn Tx`.
    ///
    /// # Errors
    /// What `f` returns; as [`PgStore::begin`].
    pub fn exported_snapshot<T>(&self, f: impl FnOnce(&str, &dyn Tx) -> Result<T>) -> Result<T> {
        let client = self
            .runtime
            .block_on(self.pool.get())
            .map_err(|e| self.pool_error(&e))?;
        self.runtime
            .block_on(client.batch_execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"))
            .map_err(|e| error(&self.location, &e))?;
        let name: String = self
            .runtime
            .block_on(client.query_one("SELECT pg_export_snapshot()", &[]))
            .map_err(|e| error(&self.location, &e))?
            .get(0);
        let tx = PgTx {
            store: self,
            client: Some(client),
            pending: RefCell::new(Vec::new()),
            ids: RefCell::new(HashMap::new()),
            open: std::cell::Cell::new(true),
        };
        let out = f(&name, &tx)?;
        tx.commit()?;
        Ok(out)
    }

    /// Runs `f` in one transaction: committed when it returns `Ok`, rolled back when it fails.
    ///
    /// # Errors
    /// What `f` returns; as [`PgStore::begin`] and [`PgTx::commit`].
    pub fn transaction<T>(&self, f: impl FnOnce(&dyn Tx) -> Result<T>) -> Result<T> {
        let tx = self.begin()?;
        let out = f(&tx)?;
        tx.commit()?;
        Ok(out)
    }
}

impl PgTx<'_> {
    /// Each table's foreign keys' tables (read from the catalog once per store).
    fn references(&self) -> Result<&HashMap<String, Vec<String>>> {
        if let Some(known) = self.store.references.get() {
            return Ok(known);
        }
        let rows = self
            .store
            .runtime
            .block_on(self.client().query(
                "SELECT conrelid::regclass::text, confrelid::regclass::text FROM pg_constraint WHERE contype = 'f'",
                &[],
            ))
            .map_err(|e| error(&self.store.location, &e))?;
        let mut map: HashMap<String, Vec<String>> = HashMap::new();
        for row in rows {
            map.entry(row.get(0)).or_default().push(row.get(1));
        }
        Ok(self.store.references.get_or_init(|| map))
    }

    fn client(&self) -> &Object {
        // `client` is taken only by `end`, which consumes the transaction.
        self.client
            .as_ref()
            .unwrap_or_else(|| unreachable!("a transaction is used after its end"))
    }

    /// Commits: every statement's effect is kept, or (on an error) none is.
    ///
    /// # Errors
    /// `E_STORE_UNAVAILABLE` when the store went away (whether the commit took is then unknown,
    /// as with any database); `E_CONFLICT` for a deferred constraint.
    pub fn commit(mut self) -> Result<()> {
        self.flush()?;
        self.end("COMMIT")
    }

    /// Rolls back: nothing of the transaction is kept.
    ///
    /// # Errors
    /// `E_STORE_UNAVAILABLE` when the store went away (which rolls it back too).
    pub fn rollback(mut self) -> Result<()> {
        self.pending.get_mut().clear();
        self.end("ROLLBACK")
    }

    /// Sends the queued writes, pipelined in their order, and waits for them all.
    fn flush(&self) -> Result<()> {
        self.after_pending(std::future::ready(Ok::<(), tokio_postgres::Error>(())))
    }

    /// Runs `then` behind the queued writes in one pipeline (one round trip for them all): the
    /// writes go out first, in their order, then `then`'s request; waits for every answer. A
    /// refused write is the error (the statements after it in the transaction fail with it).
    ///
    /// Order: a request is sent when its future is first polled, and `join` polls the writes
    /// first, which `try_join_all` polls in the order given (an array below 31 futures, a FIFO
    /// queue above).
    fn after_pending<T>(
        &self,
        then: impl Future<Output = std::result::Result<T, tokio_postgres::Error>>,
    ) -> Result<T> {
        let pending = std::mem::take(&mut *self.pending.borrow_mut());
        let bound: Vec<Vec<Param<'_>>> = pending.iter().map(|(_, _, v)| tx::params(v)).collect();
        // Runs of one plain INSERT go as one statement over arrays (a row per element), prepared
        // (once per connection) before the pipeline; the rest as they were queued.
        let runs = runs(&pending, self.references()?);
        let mut batches: Vec<Option<(Statement, Vec<Vec<Param<'_>>>)>> = Vec::new();
        for run in &runs {
            batches.push(match run {
                Run::One(_) => None,
                Run::Many { sql, rows } => {
                    let statement = self
                        .store
                        .runtime
                        .block_on(self.client().prepare_cached(sql))
                        .map_err(|e| error(&self.store.location, &e))?;
                    let width = bound[rows[0]].len();
                    let columns = (0..width)
                        .map(|c| rows.iter().map(|&r| bound[r][c]).collect())
                        .collect();
                    Some((statement, columns))
                }
            });
        }
        let refs: Vec<Vec<&(dyn ToSql + Sync)>> = runs
            .iter()
            .zip(&batches)
            .map(|(run, batch)| match (run, batch) {
                (Run::One(i), _) => refs(&bound[*i]),
                (_, Some((_, columns))) => {
                    columns.iter().map(|c| c as &(dyn ToSql + Sync)).collect()
                }
                (_, None) => Vec::new(),
            })
            .collect();
        let client = self.client();
        let writes = futures_util::future::try_join_all(runs.iter().zip(&batches).zip(&refs).map(
            |((run, batch), params)| match (run, batch) {
                (Run::One(i), _) => client.execute(&pending[*i].0, params),
                (_, Some((statement, _))) => client.execute(statement, params),
                (_, None) => unreachable!("a run of several writes has its statement"),
            },
        ));
        let (written, out) = self
            .store
            .runtime
            .block_on(futures_util::future::join(writes, then));
        written.map_err(|e| error(&self.store.location, &e))?;
        out.map_err(|e| error(&self.store.location, &e))
    }

    fn queue(&self, statement: &Statement, sql: &str, params: &[Param<'_>]) -> Result<()> {
        if !self.open.get() {
            // In autocommit a write is its own transaction: sent now, its error its own.
            return self.run(statement, sql, params).map(drop);
        }
        check(statement, sql, params)?;
        let full = {
            let mut pending = self.pending.borrow_mut();
            pending.push((
                statement.clone(),
                sql.to_string(),
                params.iter().map(Value::from).collect(),
            ));
            pending.len() >= MOST_PENDING
        };
        if full { self.flush() } else { Ok(()) }
    }

    fn end(&mut self, verb: &str) -> Result<()> {
        let Some(client) = self.client.take() else {
            return Ok(());
        };
        let ended = self.store.runtime.block_on(client.batch_execute(verb));
        match ended {
            Ok(()) => Ok(()),
            Err(e) => {
                // Never hand a connection in an unknown state back to the pool.
                drop(Object::take(client));
                Err(error(&self.store.location, &e))
            }
        }
    }

    /// Parses (once per connection: the pool's statement cache) `sql` with its placeholders
    /// numbered.
    fn statement(&self, sql: &str) -> Result<(Statement, String)> {
        let sql = numbered(sql);
        let statement = self
            .store
            .runtime
            .block_on(self.client().prepare_cached(&sql))
            .map_err(|e| error(&self.store.location, &e))?;
        Ok((statement, sql))
    }

    fn run(&self, statement: &Statement, sql: &str, params: &[Param<'_>]) -> Result<u64> {
        check(statement, sql, params)?;
        let bound = refs(params);
        self.after_pending(self.client().execute(statement, &bound))
    }

    fn rows(
        &self,
        statement: &Statement,
        sql: &str,
        params: &[Param<'_>],
        each: &mut dyn FnMut(&dyn Row) -> Result<()>,
    ) -> Result<()> {
        check(statement, sql, params)?;
        let bound = refs(params);
        let rows = self.after_pending(self.client().query(statement, &bound))?;
        for row in &rows {
            each(&PgRow(row))?;
        }
        Ok(())
    }
}

/// Refuses values the statement's placeholders cannot take, before anything is sent: a wrong
/// count, or a value of another type than PostgreSQL inferred (text for a number…).
/// Queued writes as they are sent: one write, or the writes of one plain INSERT sent as one
/// statement over arrays.
enum Run {
    One(usize),
    Many { sql: String, rows: Vec<usize> },
}

/// Groups the queued writes into runs. Within a stretch of consecutive plain INSERTs (see
/// [`batched`]) a write joins the last group of its statement when nothing queued after that
/// group writes a table its own table refers to (`references`: each table's foreign keys'
/// tables) or its own table: a file's rows, queued unit, locator, identifiers, unit, locator…,
/// go as all its units, then all locators, then all identifiers, and a row never goes before a
/// row it may refer to. Anything else (an UPDATE, an insert with a conflict clause or a computed
/// value) is sent where it was queued, and no write moves across it.
fn runs(
    pending: &[(Statement, String, Vec<Value>)],
    references: &HashMap<String, Vec<String>>,
) -> Vec<Run> {
    struct Group {
        sql: String,
        table: String,
        rows: Vec<usize>,
    }
    let mut out = Vec::new();
    let mut stretch: Vec<Group> = Vec::new();
    let close = |stretch: &mut Vec<Group>, out: &mut Vec<Run>| {
        for group in stretch.drain(..) {
            if group.rows.len() > 1 {
                out.push(Run::Many {
                    sql: group.sql,
                    rows: group.rows,
                });
            } else {
                out.extend(group.rows.into_iter().map(Run::One));
            }
        }
    };
    for (i, (statement, sql, _)) in pending.iter().enumerate() {
        let Some((batch, table)) = batched(sql, statement.params()) else {
            close(&mut stretch, &mut out);
            out.push(Run::One(i));
            continue;
        };
        let refers = references.get(&table);
        let joinable = stretch.iter().rposition(|g| g.sql == batch).filter(|&at| {
            stretch[at + 1..].iter().all(|later| {
                later.table != table && refers.is_none_or(|r| !r.contains(&later.table))
            })
        });
        match joinable {
            Some(at) => stretch[at].rows.push(i),
            None => stretch.push(Group {
                sql: batch,
                table,
                rows: vec![i],
            }),
        }
    }
    close(&mut stretch, &mut out);
    out
}

/// `INSERT INTO t (a, b) VALUES ($1, $2)` as `INSERT INTO t (a, b) SELECT * FROM unnest($1::int8[],
/// $2::text[])`: many rows in one statement, each column an array of the placeholder's own type.
/// Returns it with the table's name; `None` for any other statement (one with expressions among
/// its values, a conflict clause or a returned column is sent row by row).
fn batched(sql: &str, types: &[Type]) -> Option<(String, String)> {
    let sql = sql.trim();
    if !sql.starts_with("INSERT INTO ") || types.is_empty() {
        return None;
    }
    let at = sql.find(" VALUES (")?;
    let (head, tail) = (&sql[..at], &sql[at + " VALUES (".len()..]);
    let values = tail.strip_suffix(')')?;
    let placeholders: Vec<&str> = values.split(',').map(str::trim).collect();
    let in_order = placeholders.len() == types.len()
        && placeholders
            .iter()
            .enumerate()
            .all(|(i, p)| *p == format!("${}", i + 1));
    if !in_order || head.contains('$') {
        return None;
    }
    let casts: Vec<String> = types
        .iter()
        .enumerate()
        .map(|(i, ty)| format!("${}::{}[]", i + 1, ty.name()))
        .collect();
    let table = head["INSERT INTO ".len()..]
        .split([' ', '('])
        .next()?
        .to_string();
    Some((
        format!("{head} SELECT * FROM unnest({})", casts.join(", ")),
        table,
    ))
}

fn check(statement: &Statement, sql: &str, params: &[Param<'_>]) -> Result<()> {
    if statement.params().len() != params.len() {
        return Err(Error::Internal(format!(
            "{} parameters given for {} placeholders: {sql}",
            params.len(),
            statement.params().len()
        )));
    }
    for (i, (param, ty)) in params.iter().zip(statement.params()).enumerate() {
        if !binds(param, ty) {
            return Err(Error::Internal(format!(
                "parameter {} ({param:?}) cannot bind to a {ty} placeholder: {sql}",
                i + 1
            )));
        }
    }
    Ok(())
}

impl Drop for PgTx<'_> {
    fn drop(&mut self) {
        // An unfinished transaction (an error on the way, a panic) keeps nothing.
        if self.open.get() {
            let _ = self.end("ROLLBACK");
        }
    }
}

impl PgTx<'_> {
    /// Sends a transaction verb on the session's connection; a connection whose state is then
    /// unknown is closed rather than pooled.
    fn verb(&self, verb: &str) -> Result<()> {
        self.store
            .runtime
            .block_on(self.client().batch_execute(verb))
            .map_err(|e| error(&self.store.location, &e))
    }
}

impl tx::Session for PgTx<'_> {
    fn begin(&self, _write: bool) -> Result<()> {
        if self.open.get() {
            return Err(Error::Internal(
                "a transaction is already open on this session".into(),
            ));
        }
        // Row locks are taken as rows are written: nothing to take ahead as SQLite's IMMEDIATE.
        self.verb("BEGIN")?;
        self.open.set(true);
        Ok(())
    }

    fn commit(&self) -> Result<()> {
        if !self.open.get() {
            return Ok(());
        }
        let flushed = self.flush();
        if flushed.is_err() {
            self.pending.borrow_mut().clear();
            let _ = self.verb("ROLLBACK");
            self.open.set(false);
            return flushed;
        }
        let committed = self.verb("COMMIT");
        self.open.set(false);
        committed
    }

    fn rollback(&self) -> Result<()> {
        self.pending.borrow_mut().clear();
        if !self.open.get() {
            return Ok(());
        }
        self.open.set(false);
        self.verb("ROLLBACK")
    }

    fn in_transaction(&self) -> bool {
        self.open.get()
    }
}

fn refs<'p>(params: &'p [Param<'_>]) -> Vec<&'p (dyn ToSql + Sync)> {
    params.iter().map(|p| p as &(dyn ToSql + Sync)).collect()
}

impl Tx for PgTx<'_> {
    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }

    fn execute(&self, sql: &str, params: &[Param<'_>]) -> Result<u64> {
        let (statement, sql) = self.statement(sql)?;
        self.run(&statement, &sql, params)
    }

    fn each(
        &self,
        sql: &str,
        params: &[Param<'_>],
        each: &mut dyn FnMut(&dyn Row) -> Result<()>,
    ) -> Result<()> {
        let (statement, sql) = self.statement(sql)?;
        self.rows(&statement, &sql, params, each)
    }

    fn prepare<'t>(&'t self, sql: &str) -> Result<Box<dyn tx::Statement + 't>> {
        let (statement, sql) = self.statement(sql)?;
        Ok(Box::new(PgStatement {
            tx: self,
            statement,
            sql,
            returns_id: false,
        }))
    }

    fn write(&self, sql: &str, params: &[Param<'_>]) -> Result<()> {
        let (statement, sql) = self.statement(sql)?;
        self.queue(&statement, &sql, params)
    }

    fn atomic(&self, write: bool, f: &mut dyn FnMut(&dyn Tx) -> Result<()>) -> Result<()> {
        if self.open.get() {
            // Inside this transaction (its rows lock as they are written).
            return tx::savepoint(self, f);
        }
        tx::own_transaction(self, write, f)
    }

    fn next_id(&self, table: &str) -> Result<Option<i64>> {
        if let Some(id) = self
            .ids
            .borrow_mut()
            .get_mut(table)
            .and_then(VecDeque::pop_front)
        {
            return Ok(Some(id));
        }
        // Concurrent transactions draw from the same sequence: the block need not be a run.
        let mut block: VecDeque<i64> = VecDeque::new();
        self.each(
            "SELECT nextval(pg_get_serial_sequence(?1, 'id')) FROM generate_series(1, CAST(?2 AS BIGINT))",
            &[Param::Text(table), Param::Int(ID_BLOCK)],
            &mut |row| {
                block.extend(row.int(0)?);
                Ok(())
            },
        )?;
        let id = block.pop_front();
        self.ids.borrow_mut().insert(table.to_string(), block);
        Ok(id)
    }

    fn prepare_insert<'t>(&'t self, sql: &str) -> Result<Box<dyn tx::Statement + 't>> {
        let (statement, sql) = self.statement(&format!("{sql} RETURNING id"))?;
        Ok(Box::new(PgStatement {
            tx: self,
            statement,
            sql,
            returns_id: true,
        }))
    }
}

/// A statement of one transaction, parsed once.
struct PgStatement<'t, 's> {
    tx: &'t PgTx<'s>,
    statement: Statement,
    sql: String,
    /// Prepared by `prepare_insert` (`… RETURNING id`).
    returns_id: bool,
}

impl tx::Statement for PgStatement<'_, '_> {
    fn execute(&mut self, params: &[Param<'_>]) -> Result<u64> {
        self.tx.run(&self.statement, &self.sql, params)
    }

    fn write(&mut self, params: &[Param<'_>]) -> Result<()> {
        self.tx.queue(&self.statement, &self.sql, params)
    }

    fn each(
        &mut self,
        params: &[Param<'_>],
        each: &mut dyn FnMut(&dyn Row) -> Result<()>,
    ) -> Result<()> {
        self.tx.rows(&self.statement, &self.sql, params, each)
    }

    fn insert(&mut self, params: &[Param<'_>]) -> Result<i64> {
        if !self.returns_id {
            return Err(Error::Internal(format!(
                "an insert's id asked of a statement not prepared as an insert: {}",
                self.sql
            )));
        }
        let mut id = None;
        self.tx
            .rows(&self.statement, &self.sql, params, &mut |row| {
                id = row.int(0)?;
                Ok(())
            })?;
        id.ok_or_else(|| Error::Internal(format!("no id returned: {}", self.sql)))
    }
}

const TEXTS: [Type; 4] = [Type::TEXT, Type::VARCHAR, Type::BPCHAR, Type::NAME];

/// Whether `param` can be sent for a placeholder PostgreSQL typed `ty`.
fn binds(param: &Param<'_>, ty: &Type) -> bool {
    match param {
        Param::Null => true,
        Param::Int(_) => {
            [Type::INT8, Type::INT4, Type::INT2, Type::FLOAT8, Type::BOOL].contains(ty)
                || TEXTS.contains(ty)
        }
        Param::Real(_) => [Type::FLOAT8, Type::FLOAT4].contains(ty),
        Param::Text(_) => TEXTS.contains(ty),
        Param::Blob(_) => *ty == Type::BYTEA,
    }
}

type BindResult = std::result::Result<IsNull, Box<dyn std::error::Error + Sync + Send>>;

impl ToSql for Param<'_> {
    fn to_sql(&self, ty: &Type, out: &mut BytesMut) -> BindResult {
        match *self {
            Self::Null => Ok(IsNull::Yes),
            Self::Int(v) => {
                if *ty == Type::INT4 {
                    i32::try_from(v)?.to_sql(ty, out)
                } else if *ty == Type::INT2 {
                    i16::try_from(v)?.to_sql(ty, out)
                } else if *ty == Type::FLOAT8 {
                    #[allow(clippy::cast_precision_loss)]
                    (v as f64).to_sql(ty, out)
                } else if *ty == Type::BOOL {
                    (v != 0).to_sql(ty, out)
                } else if TEXTS.contains(ty) {
                    v.to_string().as_str().to_sql(ty, out)
                } else {
                    v.to_sql(ty, out)
                }
            }
            Self::Real(v) => {
                if *ty == Type::FLOAT4 {
                    #[allow(clippy::cast_possible_truncation)]
                    (v as f32).to_sql(ty, out)
                } else {
                    v.to_sql(ty, out)
                }
            }
            Self::Text(v) => v.to_sql(ty, out),
            Self::Blob(v) => v.to_sql(ty, out),
        }
    }

    fn accepts(_: &Type) -> bool {
        // checked per placeholder by `binds` before the statement runs
        true
    }

    to_sql_checked!();
}

struct PgRow<'r>(&'r tokio_postgres::Row);

impl PgRow<'_> {
    fn column(&self, i: usize) -> Result<&Type> {
        self.0
            .columns()
            .get(i)
            .map(tokio_postgres::Column::type_)
            .ok_or_else(|| Error::Internal(format!("no column {i} in the row")))
    }

    fn get<'a, T: tokio_postgres::types::FromSql<'a>>(&'a self, i: usize) -> Result<T> {
        self.0
            .try_get(i)
            .map_err(|e| Error::Internal(format!("column {i}: {e}")))
    }

    fn wrong(&self, i: usize, wanted: &str) -> Error {
        let ty = self
            .column(i)
            .map_or_else(|_| "?".into(), ToString::to_string);
        Error::Internal(format!("column {i} is a {ty}, read as {wanted}"))
    }
}

impl Row for PgRow<'_> {
    fn int(&self, i: usize) -> Result<Option<i64>> {
        let ty = self.column(i)?;
        if *ty == Type::INT8 {
            self.get(i)
        } else if *ty == Type::INT4 {
            Ok(self.get::<Option<i32>>(i)?.map(i64::from))
        } else if *ty == Type::INT2 {
            Ok(self.get::<Option<i16>>(i)?.map(i64::from))
        } else if *ty == Type::BOOL {
            Ok(self.get::<Option<bool>>(i)?.map(i64::from))
        } else {
            Err(self.wrong(i, "an integer"))
        }
    }

    fn real(&self, i: usize) -> Result<Option<f64>> {
        let ty = self.column(i)?;
        if *ty == Type::FLOAT8 {
            self.get(i)
        } else if *ty == Type::FLOAT4 {
            Ok(self.get::<Option<f32>>(i)?.map(f64::from))
        } else {
            Err(self.wrong(i, "a number"))
        }
    }

    fn text(&self, i: usize) -> Result<Option<String>> {
        if TEXTS.contains(self.column(i)?) {
            self.get(i)
        } else {
            Err(self.wrong(i, "text"))
        }
    }

    fn blob(&self, i: usize) -> Result<Option<Vec<u8>>> {
        if *self.column(i)? == Type::BYTEA {
            self.get(i)
        } else {
            Err(self.wrong(i, "bytes"))
        }
    }
}
