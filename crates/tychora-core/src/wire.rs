//! Closed sets of names that are stored in SQLite and sent on the wire (`status = 'queued'`):
//! one Rust enum each, so a misspelt status is a compile error, and one spelling for serde, the
//! database and `as_str`.

/// Declares such an enum: serde, `as_str`, `Display`, `FromStr`, and SQLite `ToSql`/`FromSql`
/// (an unknown name read back is a conversion error, never a silent default).
macro_rules! wire_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident = $wire:literal, )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
        $vis enum $name {
            $( $(#[$vmeta])* #[serde(rename = $wire)] $variant, )+
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [Self] = &[$(Self::$variant),+];

            /// The stored and wire form.
            #[must_use]
            pub const fn as_str(self) -> &'static str {
                match self {
                    $( Self::$variant => $wire, )+
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl std::str::FromStr for $name {
            type Err = String;

            fn from_str(s: &str) -> std::result::Result<Self, String> {
                match s {
                    $( $wire => Ok(Self::$variant), )+
                    other => Err(format!(concat!("unknown ", stringify!($name), " {:?}"), other)),
                }
            }
        }

        impl $crate::wire::Wire for $name {
            const NAME: &'static str = stringify!($name);

            fn wire(self) -> &'static str {
                self.as_str()
            }
        }

        impl rusqlite::types::FromSql for $name {
            fn column_result(
                value: rusqlite::types::ValueRef<'_>,
            ) -> rusqlite::types::FromSqlResult<Self> {
                value
                    .as_str()?
                    .parse()
                    .map_err(|e: String| rusqlite::types::FromSqlError::Other(e.into()))
            }
        }

        impl rusqlite::ToSql for $name {
            fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
                Ok(self.as_str().into())
            }
        }
    };
}

pub(crate) use wire_enum;

/// What every such enum is: a name stored and read back (the store binds and reads it through
/// this, whichever adapter holds the row; an unknown name read back is corrupt data).
pub trait Wire: Copy + std::str::FromStr {
    /// The enum's name, for the message about an unknown value.
    const NAME: &'static str;
    /// The stored form.
    fn wire(self) -> &'static str;
}

#[cfg(test)]
mod tests {
    wire_enum! {
        /// A test set.
        enum Door {
            /// Open.
            Open = "open",
            /// Shut.
            Shut = "shut",
        }
    }

    #[test]
    fn one_spelling_for_serde_sqlite_and_as_str() {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        conn.execute_batch("CREATE TABLE t (v TEXT)").unwrap();
        for door in Door::ALL {
            assert_eq!(serde_json::to_string(door).unwrap(), format!("\"{door}\""));
            assert_eq!(
                serde_json::from_str::<Door>(&format!("\"{}\"", door.as_str())).unwrap(),
                *door
            );
            conn.execute("DELETE FROM t", []).unwrap();
            conn.execute("INSERT INTO t VALUES (?1)", [door]).unwrap();
            let stored: String = conn.query_row("SELECT v FROM t", [], |r| r.get(0)).unwrap();
            assert_eq!(stored, door.as_str());
            let back: Door = conn.query_row("SELECT v FROM t", [], |r| r.get(0)).unwrap();
            assert_eq!(back, *door);
        }
        conn.execute("UPDATE t SET v = 'ajar'", []).unwrap();
        let err = conn
            .query_row("SELECT v FROM t", [], |r| r.get::<_, Door>(0))
            .unwrap_err();
        assert!(err.to_string().contains("unknown Door \"ajar\""), "{err}");
    }
}
