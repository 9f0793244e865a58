//! One transaction interface over both store adapters: a repository function takes `&dyn Tx`
//! and runs unchanged on the embedded store's SQLite connection (or its transaction) and on a
//! PostgreSQL transaction (`store::postgres::PgTx`).
//!
//! Statements are written once, in the SQL both databases speak: `?N` placeholders (the
//! PostgreSQL adapter rewrites them to `$N`), [`Tx::insert`] for a new row's id (SQLite's
//! `last_insert_rowid()`, PostgreSQL's `RETURNING id`: `RETURNING` on every unit and window made
//! the embedded SciFact add 18 % slower, 0.73 s against 0.62 s, as SQLite buffers returned rows in
//! a table of their own), `ON CONFLICT … DO NOTHING/UPDATE` instead of `INSERT OR …`, `IS NOT DISTINCT FROM` instead of
//! `IS`, integers as 64-bit and booleans as 0/1 (SQLite's STRICT columns and PostgreSQL's
//! `BIGINT … CHECK (x IN (0, 1))` alike). Where a statement cannot be shared, the repository asks
//! [`Tx::dialect`] and says why beside it.
//!
//! Rows are read through [`Row`], by column position, into the core's types ([`Cell`]); a
//! PostgreSQL column of another type than the schema's is an internal error naming it.

use rusqlite::types::{ToSqlOutput, ValueRef};

use crate::error::{Error, Result};

/// Which SQL a transaction speaks, for the few statements that differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// The embedded store.
    Sqlite,
    /// The service store.
    Postgres,
}

impl Dialect {
    /// A temporary table of ids, the connection's own (a batch of rows a statement deletes by
    /// key), emptied: SQLite's `INTEGER PRIMARY KEY` is the row's own key (no second index),
    /// PostgreSQL's ids are `BIGINT`.
    ///
    /// # Errors
    /// As [`Tx::execute`].
    pub fn empty_id_table(self, tx: &dyn Tx, name: &str) -> Result<()> {
        let id = match self {
            Self::Sqlite => "INTEGER",
            Self::Postgres => "BIGINT",
        };
        tx.execute(
            &format!("CREATE TEMP TABLE IF NOT EXISTS {name} (id {id} PRIMARY KEY)"),
            &[],
        )?;
        tx.execute(&format!("DELETE FROM {name}"), &[])?;
        Ok(())
    }

    /// A join whose order the statement fixes: SQLite's `CROSS JOIN` (its planner keeps the
    /// tables in the order written, starting from the selective side the statement names first);
    /// PostgreSQL has no `CROSS JOIN … ON` and plans the order itself from its statistics.
    #[must_use]
    pub const fn ordered_join(self) -> &'static str {
        match self {
            Self::Sqlite => "CROSS JOIN",
            Self::Postgres => "JOIN",
        }
    }

    /// The database's clock in milliseconds since the Unix epoch, as an SQL expression. Leases
    /// are kept on it, never on a process's clock, so daemons whose clocks disagree still agree
    /// on who holds a job.
    #[must_use]
    pub fn now_ms(self) -> &'static str {
        match self {
            Self::Sqlite => "CAST(unixepoch('subsec') * 1000 AS INTEGER)",
            Self::Postgres => "tychora_now_ms()",
        }
    }

    /// A JSON field of a text column, by path (`["git", "commit"]`), as text or as an integer
    /// (`json_extract` on SQLite, which keeps the field's own type; `#>>` on PostgreSQL's `jsonb`,
    /// which reads text, cast where a number is wanted).
    #[must_use]
    pub fn json_field(self, column: &str, path: &[&str], integer: bool) -> String {
        match self {
            Self::Sqlite => format!("json_extract({column}, '$.{}')", path.join(".")),
            Self::Postgres if integer => {
                format!(
                    "CAST({column}::jsonb #>> '{{{}}}' AS BIGINT)",
                    path.join(",")
                )
            }
            Self::Postgres => format!("({column}::jsonb #>> '{{{}}}')", path.join(",")),
        }
    }
}

/// A value bound to a placeholder.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Param<'a> {
    /// SQL NULL.
    Null,
    /// An integer (every integer column is 64-bit).
    Int(i64),
    /// A floating-point number.
    Real(f64),
    /// Text.
    Text(&'a str),
    /// Bytes.
    Blob(&'a [u8]),
}

impl From<i64> for Param<'_> {
    fn from(v: i64) -> Self {
        Self::Int(v)
    }
}

impl From<i32> for Param<'_> {
    fn from(v: i32) -> Self {
        Self::Int(i64::from(v))
    }
}

impl From<u8> for Param<'_> {
    fn from(v: u8) -> Self {
        Self::Int(i64::from(v))
    }
}

impl From<u32> for Param<'_> {
    fn from(v: u32) -> Self {
        Self::Int(i64::from(v))
    }
}

impl From<usize> for Param<'_> {
    fn from(v: usize) -> Self {
        Self::Int(i64::try_from(v).unwrap_or(i64::MAX))
    }
}

impl From<u64> for Param<'_> {
    fn from(v: u64) -> Self {
        Self::Int(i64::try_from(v).unwrap_or(i64::MAX))
    }
}

impl From<bool> for Param<'_> {
    fn from(v: bool) -> Self {
        Self::Int(i64::from(v))
    }
}

impl From<f64> for Param<'_> {
    fn from(v: f64) -> Self {
        Self::Real(v)
    }
}

impl<'a> From<&'a str> for Param<'a> {
    fn from(v: &'a str) -> Self {
        Self::Text(v)
    }
}

impl<'a> From<&'a String> for Param<'a> {
    fn from(v: &'a String) -> Self {
        Self::Text(v)
    }
}

impl<'a> From<&'a [u8]> for Param<'a> {
    fn from(v: &'a [u8]) -> Self {
        Self::Blob(v)
    }
}

impl<'a, T: Into<Param<'a>>> From<Option<T>> for Param<'a> {
    fn from(v: Option<T>) -> Self {
        v.map_or(Self::Null, Into::into)
    }
}

/// An owned value, for statements built with their placeholders (a filter's `IN (…)` lists).
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// SQL NULL.
    Null,
    /// An integer.
    Int(i64),
    /// A floating-point number.
    Real(f64),
    /// Text.
    Text(String),
    /// Bytes.
    Blob(Vec<u8>),
}

impl From<&Param<'_>> for Value {
    fn from(p: &Param<'_>) -> Self {
        match *p {
            Param::Null => Self::Null,
            Param::Int(v) => Self::Int(v),
            Param::Real(v) => Self::Real(v),
            Param::Text(v) => Self::Text(v.to_string()),
            Param::Blob(v) => Self::Blob(v.to_vec()),
        }
    }
}

impl From<i64> for Value {
    fn from(v: i64) -> Self {
        Self::Int(v)
    }
}

impl From<f64> for Value {
    fn from(v: f64) -> Self {
        Self::Real(v)
    }
}

impl From<String> for Value {
    fn from(v: String) -> Self {
        Self::Text(v)
    }
}

impl Value {
    /// The value as a placeholder's.
    #[must_use]
    pub fn param(&self) -> Param<'_> {
        match self {
            Self::Null => Param::Null,
            Self::Int(v) => Param::Int(*v),
            Self::Real(v) => Param::Real(*v),
            Self::Text(v) => Param::Text(v),
            Self::Blob(v) => Param::Blob(v),
        }
    }
}

/// Owned values as placeholders' values, in order.
#[must_use]
pub fn params(values: &[Value]) -> Vec<Param<'_>> {
    values.iter().map(Value::param).collect()
}

/// `args![a, b, c]`: the placeholders' values, in order.
macro_rules! args {
    ($($v:expr),* $(,)?) => {
        &[$($crate::store::tx::Param::from($v)),*][..]
    };
}
pub(crate) use args;

/// One row of a result, read by column position (0-based).
pub trait Row {
    /// An integer column (NULL as `None`).
    ///
    /// # Errors
    /// A column of another type, or past the last.
    fn int(&self, i: usize) -> Result<Option<i64>>;
    /// A floating-point column.
    ///
    /// # Errors
    /// As [`Row::int`].
    fn real(&self, i: usize) -> Result<Option<f64>>;
    /// A text column.
    ///
    /// # Errors
    /// As [`Row::int`].
    fn text(&self, i: usize) -> Result<Option<String>>;
    /// A bytes column.
    ///
    /// # Errors
    /// As [`Row::int`].
    fn blob(&self, i: usize) -> Result<Option<Vec<u8>>>;
}

impl dyn Row + '_ {
    /// Column `i` as `T`.
    ///
    /// # Errors
    /// A column of another type, a NULL where `T` has none, a number out of `T`'s range.
    pub fn get<T: Cell>(&self, i: usize) -> Result<T> {
        T::read(self, i)
    }
}

/// A type a column reads into.
pub trait Cell: Sized {
    /// Reads column `i` of `row`.
    ///
    /// # Errors
    /// As [`Row::get`].
    fn read(row: &(impl Row + ?Sized), i: usize) -> Result<Self>;
}

fn null(i: usize) -> Error {
    Error::Internal(format!("column {i} is NULL where a value was expected"))
}

/// A closed set's name: an unknown one is corrupt data, never a default.
impl<T: crate::wire::Wire> Cell for T {
    fn read(row: &(impl Row + ?Sized), i: usize) -> Result<Self> {
        let text = row.text(i)?.ok_or_else(|| null(i))?;
        text.parse()
            .map_err(|_| Error::Corrupt(format!("the store holds an unknown {} {text:?}", T::NAME)))
    }
}

impl<T: crate::wire::Wire> Cell for Option<T> {
    fn read(row: &(impl Row + ?Sized), i: usize) -> Result<Self> {
        match row.text(i)? {
            None => Ok(None),
            Some(text) => text.parse().map(Some).map_err(|_| {
                Error::Corrupt(format!("the store holds an unknown {} {text:?}", T::NAME))
            }),
        }
    }
}

impl<'a, T: crate::wire::Wire> From<T> for Param<'a> {
    fn from(v: T) -> Self {
        Self::Text(v.wire())
    }
}

impl Cell for Option<i64> {
    fn read(row: &(impl Row + ?Sized), i: usize) -> Result<Self> {
        row.int(i)
    }
}

impl Cell for i64 {
    fn read(row: &(impl Row + ?Sized), i: usize) -> Result<Self> {
        row.int(i)?.ok_or_else(|| null(i))
    }
}

impl Cell for u64 {
    fn read(row: &(impl Row + ?Sized), i: usize) -> Result<Self> {
        let v = row.int(i)?.ok_or_else(|| null(i))?;
        u64::try_from(v).map_err(|_| Error::Internal(format!("column {i} is negative ({v})")))
    }
}

impl Cell for usize {
    fn read(row: &(impl Row + ?Sized), i: usize) -> Result<Self> {
        let v = row.int(i)?.ok_or_else(|| null(i))?;
        usize::try_from(v).map_err(|_| Error::Internal(format!("column {i} is negative ({v})")))
    }
}

impl Cell for bool {
    fn read(row: &(impl Row + ?Sized), i: usize) -> Result<Self> {
        Ok(row.int(i)?.ok_or_else(|| null(i))? != 0)
    }
}

impl Cell for Option<f64> {
    fn read(row: &(impl Row + ?Sized), i: usize) -> Result<Self> {
        row.real(i)
    }
}

impl Cell for f64 {
    fn read(row: &(impl Row + ?Sized), i: usize) -> Result<Self> {
        row.real(i)?.ok_or_else(|| null(i))
    }
}

impl Cell for Option<String> {
    fn read(row: &(impl Row + ?Sized), i: usize) -> Result<Self> {
        row.text(i)
    }
}

impl Cell for String {
    fn read(row: &(impl Row + ?Sized), i: usize) -> Result<Self> {
        row.text(i)?.ok_or_else(|| null(i))
    }
}

impl Cell for Option<Vec<u8>> {
    fn read(row: &(impl Row + ?Sized), i: usize) -> Result<Self> {
        row.blob(i)
    }
}

impl Cell for Vec<u8> {
    fn read(row: &(impl Row + ?Sized), i: usize) -> Result<Self> {
        row.blob(i)?.ok_or_else(|| null(i))
    }
}

/// A statement prepared once for many runs (a writer's insert per row): the embedded store
/// keeps it compiled, the service store keeps it parsed and planned on its connection.
pub trait Statement {
    /// Runs it; returns how many rows it changed.
    ///
    /// # Errors
    /// As [`Tx::execute`].
    fn execute(&mut self, params: &[Param<'_>]) -> Result<u64>;

    /// Runs it and hands each row to `each`, in order.
    ///
    /// # Errors
    /// As [`Tx::each`].
    fn each(
        &mut self,
        params: &[Param<'_>],
        each: &mut dyn FnMut(&dyn Row) -> Result<()>,
    ) -> Result<()>;

    /// Runs it for its effect alone: the service store may send it behind (pipelined with the
    /// writes after it and the transaction's next read, or before its commit), so its error, if
    /// any, comes from that later call, and the transaction keeps nothing either way.
    ///
    /// # Errors
    /// As [`Tx::execute`].
    fn write(&mut self, params: &[Param<'_>]) -> Result<()> {
        self.execute(params).map(drop)
    }

    /// Runs an insert prepared with [`Tx::prepare_insert`]; returns the new row's `id`.
    ///
    /// # Errors
    /// As [`Tx::execute`]; `E_INTERNAL` for a statement not prepared as an insert.
    fn insert(&mut self, params: &[Param<'_>]) -> Result<i64>;
}

impl dyn Statement + '_ {
    /// The first column of the first row it returns, which must have one (an `INSERT …
    /// RETURNING id`).
    ///
    /// # Errors
    /// `E_INTERNAL` when it returns no row; as [`Statement::each`].
    pub fn value<T: Cell>(&mut self, params: &[Param<'_>]) -> Result<T> {
        let mut out = None;
        self.each(params, &mut |row| {
            if out.is_none() {
                out = Some(row.get(0)?);
            }
            Ok(())
        })?;
        out.ok_or_else(|| {
            Error::Internal("a statement returned no row where one was expected".into())
        })
    }
}

/// A transaction (or a connection in autocommit) on one of the store's adapters.
pub trait Tx {
    /// Which SQL it speaks.
    fn dialect(&self) -> Dialect;

    /// Runs a statement; returns how many rows it changed.
    ///
    /// # Errors
    /// The store's errors (`E_STORE_UNAVAILABLE` when the service store cannot be reached, and a
    /// refused row as `E_CONFLICT` there).
    fn execute(&self, sql: &str, params: &[Param<'_>]) -> Result<u64>;

    /// Runs a query and hands each row to `each`, in order.
    ///
    /// # Errors
    /// As [`Tx::execute`], and what `each` returns.
    fn each(
        &self,
        sql: &str,
        params: &[Param<'_>],
        each: &mut dyn FnMut(&dyn Row) -> Result<()>,
    ) -> Result<()>;

    /// Prepares a statement to run many times in this transaction.
    ///
    /// # Errors
    /// As [`Tx::execute`] (a statement that does not parse).
    fn prepare<'t>(&'t self, sql: &str) -> Result<Box<dyn Statement + 't>>;

    /// Prepares an `INSERT` of one row into a table keyed by `id`, to run many times with
    /// [`Statement::insert`].
    ///
    /// # Errors
    /// As [`Tx::prepare`].
    fn prepare_insert<'t>(&'t self, sql: &str) -> Result<Box<dyn Statement + 't>>;

    /// Runs an `INSERT` of one row into a table keyed by `id`; returns the new row's `id`.
    ///
    /// # Errors
    /// As [`Tx::execute`].
    fn insert(&self, sql: &str, params: &[Param<'_>]) -> Result<i64> {
        self.prepare_insert(sql)?.insert(params)
    }

    /// Runs a statement for its effect alone, as [`Statement::write`].
    ///
    /// # Errors
    /// As [`Tx::execute`].
    fn write(&self, sql: &str, params: &[Param<'_>]) -> Result<()> {
        self.execute(sql, params).map(drop)
    }

    /// Runs `f` so that its writes land together or not at all and its reads see one state of
    /// the store: on a connection in autocommit, a transaction of its own (`write`: one that takes
    /// the write lock before its first read, as a read-then-write needs); inside a transaction, a
    /// savepoint. When `f` fails, what it wrote is rolled back and its error returned; the
    /// enclosing transaction goes on.
    ///
    /// # Errors
    /// What `f` returns; as [`Tx::execute`] for the transaction's own statements.
    fn atomic(&self, write: bool, f: &mut dyn FnMut(&dyn Tx) -> Result<()>) -> Result<()>;

    /// An id for a new row of `table` taken ahead of its insert, where the store hands them out
    /// so (PostgreSQL's identity sequences, in blocks: the row can then be written behind with
    /// [`Statement::write`]); `None` where a row's id is its insert's (SQLite, in process, where
    /// [`Tx::insert`] costs nothing more).
    ///
    /// # Errors
    /// As [`Tx::execute`].
    fn next_id(&self, table: &str) -> Result<Option<i64>> {
        let _ = table;
        Ok(None)
    }
}

impl dyn Tx + '_ {
    /// [`Tx::atomic`] returning `f`'s value.
    ///
    /// # Errors
    /// As [`Tx::atomic`].
    pub fn together<T>(&self, write: bool, f: impl FnOnce(&dyn Tx) -> Result<T>) -> Result<T> {
        let mut f = Some(f);
        let mut out = None;
        self.atomic(write, &mut |tx| {
            if let Some(f) = f.take() {
                out = Some(f(tx)?);
            }
            Ok(())
        })?;
        out.ok_or_else(|| Error::Internal("an atomic block did not run".into()))
    }

    /// Every row of a query, each read by `map`.
    ///
    /// # Errors
    /// As [`Tx::each`].
    pub fn rows<T>(
        &self,
        sql: &str,
        params: &[Param<'_>],
        mut map: impl FnMut(&dyn Row) -> Result<T>,
    ) -> Result<Vec<T>> {
        let mut out = Vec::new();
        self.each(sql, params, &mut |row| {
            out.push(map(row)?);
            Ok(())
        })?;
        Ok(out)
    }

    /// The first row of a query, if it has one.
    ///
    /// # Errors
    /// As [`Tx::each`].
    pub fn optional<T>(
        &self,
        sql: &str,
        params: &[Param<'_>],
        map: impl FnOnce(&dyn Row) -> Result<T>,
    ) -> Result<Option<T>> {
        let mut map = Some(map);
        let mut out = None;
        self.each(sql, params, &mut |row| {
            if let Some(map) = map.take() {
                out = Some(map(row)?);
            }
            Ok(())
        })?;
        Ok(out)
    }

    /// The first row of a query, which must have one.
    ///
    /// # Errors
    /// `E_INTERNAL` when it has none; as [`Tx::each`].
    pub fn one<T>(
        &self,
        sql: &str,
        params: &[Param<'_>],
        map: impl FnOnce(&dyn Row) -> Result<T>,
    ) -> Result<T> {
        self.optional(sql, params, map)?
            .ok_or_else(|| Error::Internal(format!("no row where one was expected: {sql}")))
    }

    /// The first column of the first row, which must have one.
    ///
    /// # Errors
    /// As [`Tx::one`].
    pub fn value<T: Cell>(&self, sql: &str, params: &[Param<'_>]) -> Result<T> {
        self.one(sql, params, |r| r.get(0))
    }
}

impl rusqlite::ToSql for Param<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::Borrowed(match *self {
            Self::Null => ValueRef::Null,
            Self::Int(v) => ValueRef::Integer(v),
            Self::Real(v) => ValueRef::Real(v),
            Self::Text(v) => ValueRef::Text(v.as_bytes()),
            Self::Blob(v) => ValueRef::Blob(v),
        }))
    }
}

struct SqliteRow<'r, 's>(&'r rusqlite::Row<'s>);

impl Row for SqliteRow<'_, '_> {
    fn int(&self, i: usize) -> Result<Option<i64>> {
        Ok(self.0.get(i)?)
    }
    fn real(&self, i: usize) -> Result<Option<f64>> {
        Ok(self.0.get(i)?)
    }
    fn text(&self, i: usize) -> Result<Option<String>> {
        Ok(self.0.get(i)?)
    }
    fn blob(&self, i: usize) -> Result<Option<Vec<u8>>> {
        Ok(self.0.get(i)?)
    }
}

struct SqliteStatement<'c>(rusqlite::CachedStatement<'c>, &'c rusqlite::Connection);

impl Statement for SqliteStatement<'_> {
    fn execute(&mut self, params: &[Param<'_>]) -> Result<u64> {
        Ok(self.0.execute(rusqlite::params_from_iter(params))? as u64)
    }

    fn insert(&mut self, params: &[Param<'_>]) -> Result<i64> {
        self.0.execute(rusqlite::params_from_iter(params))?;
        Ok(self.1.last_insert_rowid())
    }

    fn each(
        &mut self,
        params: &[Param<'_>],
        each: &mut dyn FnMut(&dyn Row) -> Result<()>,
    ) -> Result<()> {
        let mut rows = self.0.query(rusqlite::params_from_iter(params))?;
        while let Some(row) = rows.next()? {
            each(&SqliteRow(row))?;
        }
        Ok(())
    }
}

impl Tx for rusqlite::Connection {
    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }

    fn execute(&self, sql: &str, params: &[Param<'_>]) -> Result<u64> {
        let changed = self
            .prepare_cached(sql)?
            .execute(rusqlite::params_from_iter(params))?;
        Ok(changed as u64)
    }

    fn each(
        &self,
        sql: &str,
        params: &[Param<'_>],
        each: &mut dyn FnMut(&dyn Row) -> Result<()>,
    ) -> Result<()> {
        SqliteStatement(self.prepare_cached(sql)?, self).each(params, each)
    }

    fn prepare<'t>(&'t self, sql: &str) -> Result<Box<dyn Statement + 't>> {
        Ok(Box::new(SqliteStatement(self.prepare_cached(sql)?, self)))
    }

    fn prepare_insert<'t>(&'t self, sql: &str) -> Result<Box<dyn Statement + 't>> {
        Tx::prepare(self, sql)
    }

    fn insert(&self, sql: &str, params: &[Param<'_>]) -> Result<i64> {
        self.prepare_cached(sql)?
            .execute(rusqlite::params_from_iter(params))?;
        Ok(self.last_insert_rowid())
    }

    fn atomic(&self, write: bool, f: &mut dyn FnMut(&dyn Tx) -> Result<()>) -> Result<()> {
        if !self.is_autocommit() {
            return savepoint(self, f);
        }
        own_transaction(self, write, f)
    }
}

impl Tx for rusqlite::Transaction<'_> {
    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }

    fn execute(&self, sql: &str, params: &[Param<'_>]) -> Result<u64> {
        Tx::execute(&**self, sql, params)
    }

    fn each(
        &self,
        sql: &str,
        params: &[Param<'_>],
        each: &mut dyn FnMut(&dyn Row) -> Result<()>,
    ) -> Result<()> {
        Tx::each(&**self, sql, params, each)
    }

    fn prepare<'t>(&'t self, sql: &str) -> Result<Box<dyn Statement + 't>> {
        Tx::prepare(&**self, sql)
    }

    fn prepare_insert<'t>(&'t self, sql: &str) -> Result<Box<dyn Statement + 't>> {
        Tx::prepare_insert(&**self, sql)
    }

    fn insert(&self, sql: &str, params: &[Param<'_>]) -> Result<i64> {
        Tx::insert(&**self, sql, params)
    }

    fn atomic(&self, _write: bool, f: &mut dyn FnMut(&dyn Tx) -> Result<()>) -> Result<()> {
        savepoint(self, f)
    }
}

/// A connection that runs each statement on its own (autocommit) until a transaction is begun:
/// the engine's writer, which a job holds for its whole run and commits as it goes. The embedded
/// store's is its SQLite connection; the service store's a pooled PostgreSQL connection
/// ([`super::postgres::PgStore::session`]).
pub trait Session: Tx {
    /// Begins a transaction; `write`: one that takes the write lock now, before its first read
    /// (SQLite's `IMMEDIATE`; PostgreSQL locks rows as they are written).
    ///
    /// # Errors
    /// As [`Tx::execute`]; `E_INTERNAL` when one is open already.
    fn begin(&self, write: bool) -> Result<()>;
    /// Commits the open transaction (nothing when none is open).
    ///
    /// # Errors
    /// As [`Tx::execute`]: then nothing of it is kept.
    fn commit(&self) -> Result<()>;
    /// Rolls back the open transaction (nothing when none is open).
    ///
    /// # Errors
    /// As [`Tx::execute`].
    fn rollback(&self) -> Result<()>;
    /// Whether a transaction is open.
    fn in_transaction(&self) -> bool;
}

impl Session for rusqlite::Connection {
    fn begin(&self, write: bool) -> Result<()> {
        if !self.is_autocommit() {
            return Err(Error::Internal(
                "a transaction is already open on this session".into(),
            ));
        }
        self.execute_batch(if write {
            "BEGIN IMMEDIATE"
        } else {
            "BEGIN DEFERRED"
        })?;
        Ok(())
    }

    fn commit(&self) -> Result<()> {
        if !self.is_autocommit() {
            self.execute_batch("COMMIT")?;
        }
        Ok(())
    }

    fn rollback(&self) -> Result<()> {
        if !self.is_autocommit() {
            self.execute_batch("ROLLBACK")?;
        }
        Ok(())
    }

    fn in_transaction(&self) -> bool {
        !self.is_autocommit()
    }
}

impl dyn Session + '_ {
    /// [`Tx::atomic`] returning `f`'s value, as on a transaction.
    ///
    /// # Errors
    /// As [`Tx::atomic`].
    pub fn together<T>(&self, write: bool, f: impl FnOnce(&dyn Tx) -> Result<T>) -> Result<T> {
        let tx: &dyn Tx = self;
        tx.together(write, f)
    }
}

/// A transaction begun on a session: rolled back when dropped unless committed (an early
/// return, an error, a panic keep nothing), as rusqlite's `Transaction` is.
pub struct Begun<'a> {
    session: &'a dyn Session,
    open: bool,
}

impl<'a> Begun<'a> {
    /// Begins a transaction on `session` (`write`: taking the write lock now).
    ///
    /// # Errors
    /// As [`Session::begin`].
    pub fn new(session: &'a dyn Session, write: bool) -> Result<Self> {
        session.begin(write)?;
        Ok(Self {
            session,
            open: true,
        })
    }

    /// Commits it.
    ///
    /// # Errors
    /// As [`Session::commit`]: then nothing of it is kept.
    pub fn commit(mut self) -> Result<()> {
        self.open = false;
        self.session.commit()
    }
}

impl<'a> std::ops::Deref for Begun<'a> {
    type Target = dyn Tx + 'a;

    fn deref(&self) -> &Self::Target {
        self.session
    }
}

impl Drop for Begun<'_> {
    fn drop(&mut self) {
        if self.open {
            let _ = self.session.rollback();
        }
    }
}

/// `f` in a transaction of its own on `session` (in autocommit): committed when `f` succeeds,
/// else rolled back with `f`'s error.
pub(crate) fn own_transaction(
    session: &dyn Session,
    write: bool,
    f: &mut dyn FnMut(&dyn Tx) -> Result<()>,
) -> Result<()> {
    session.begin(write)?;
    match f(session) {
        Ok(()) => {
            if let Err(e) = session.commit() {
                let _ = session.rollback();
                return Err(e);
            }
            Ok(())
        }
        Err(e) => {
            let _ = session.rollback();
            Err(e)
        }
    }
}

/// `f` inside a savepoint of the transaction `tx` is in: released when `f` and every write it
/// sent succeed, else rolled back to (the transaction stays usable) with the error returned.
pub(crate) fn savepoint(tx: &dyn Tx, f: &mut dyn FnMut(&dyn Tx) -> Result<()>) -> Result<()> {
    tx.execute("SAVEPOINT tychora_atomic", &[])?;
    // The release sends any write still queued, so its failure is `f`'s too.
    let done = f(tx).and_then(|()| {
        tx.execute("RELEASE SAVEPOINT tychora_atomic", &[])
            .map(drop)
    });
    if done.is_err() {
        let _ = tx.execute("ROLLBACK TO SAVEPOINT tychora_atomic", &[]);
        let _ = tx.execute("RELEASE SAVEPOINT tychora_atomic", &[]);
    }
    done
}

/// A statement's `?N` placeholders as PostgreSQL's `$N`, leaving quoted text, quoted names and
/// comments as they are. A bare `?` takes the number after the highest so far, as SQLite does.
#[must_use]
pub fn numbered(sql: &str) -> String {
    let bytes = sql.as_bytes();
    let mut out = String::with_capacity(sql.len() + 8);
    let mut i = 0;
    let mut last = 0usize;
    let mut highest = 0u32;
    while i < bytes.len() {
        match bytes[i] {
            quote @ (b'\'' | b'"') => {
                // to the closing quote; a doubled quote inside is an escaped one
                i += 1;
                while i < bytes.len() {
                    if bytes[i] == quote {
                        if bytes.get(i + 1) == Some(&quote) {
                            i += 2;
                            continue;
                        }
                        break;
                    }
                    i += 1;
                }
                i += 1;
            }
            b'-' if bytes.get(i + 1) == Some(&b'-') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            b'?' => {
                out.push_str(&sql[last..i]);
                let start = i + 1;
                let mut end = start;
                while end < bytes.len() && bytes[end].is_ascii_digit() {
                    end += 1;
                }
                let n = if end > start {
                    sql[start..end].parse().unwrap_or(u32::MAX)
                } else {
                    highest + 1
                };
                highest = highest.max(n);
                out.push('$');
                out.push_str(&n.to_string());
                i = end;
                last = i;
            }
            _ => i += 1,
        }
    }
    out.push_str(&sql[last.min(sql.len())..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_numbered_outside_quotes_and_comments() {
        assert_eq!(
            numbered("SELECT a FROM t WHERE b = ?2 AND c = '?1' AND \"d?\" = ?1 -- ?3\n AND e = ?"),
            "SELECT a FROM t WHERE b = $2 AND c = '?1' AND \"d?\" = $1 -- ?3\n AND e = $3"
        );
        assert_eq!(numbered("it''s ? ?"), "it''s $1 $2");
        assert_eq!(numbered("'it''s ?' ?5"), "'it''s ?' $5");
    }

    #[test]
    fn a_statement_runs_and_reads_back_on_sqlite() {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        let tx: &dyn Tx = &conn;
        tx.execute(
            "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, score REAL, body BLOB) STRICT",
            &[],
        )
        .unwrap();
        let id = tx
            .insert(
                "INSERT INTO t (name, score, body) VALUES (?1, ?2, ?3)",
                args![Some("a"), 0.5, &b"xy"[..]],
            )
            .unwrap();
        let (name, score, body, missing): (String, f64, Vec<u8>, Option<String>) = tx
            .one(
                "SELECT name, score, body, NULL FROM t WHERE id = ?1",
                args![id],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
            )
            .unwrap();
        assert_eq!(
            (name.as_str(), score, body.as_slice(), missing),
            ("a", 0.5, &b"xy"[..], None)
        );
        assert!(
            tx.optional("SELECT id FROM t WHERE id = ?1", args![id + 1], |r| r
                .get::<i64>(0))
                .unwrap()
                .is_none()
        );
        let err = tx
            .value::<i64>("SELECT name FROM t WHERE id = ?1", args![id])
            .unwrap_err();
        assert!(err.to_string().contains("Text"), "{err}");
    }
}
