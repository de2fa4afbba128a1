//! Reading the replica: seqnos (the IDL's, per table, per row and
//! change kind), rows and their values as the open transaction sees
//! them, and a JSON dump.

use super::{Idl, MONITOR};
use ovsdb::datum::Datum;
use ovsdb::json::{Json, Object};
use ovsdb::uuid::Uuid;

impl Idl {
    /// The IDL seqno: moves whenever something the client is alerted to
    /// changes.
    pub fn seqno(&self) -> u64 {
        self.seqno
    }

    pub fn last_id(&self) -> Uuid {
        self.last_id
    }

    pub fn cond_seqno(&self) -> u64 {
        self.cond_seqno
    }

    pub fn table_seqno(&self, table: usize) -> u64 {
        if table >= self.tables.len() {
            return 0;
        }
        self.tables[table]
            .change_seqno
            .iter()
            .copied()
            .max()
            .unwrap_or(0)
    }

    pub fn row_seqno(&self, table: usize, uuid: Uuid, kind: usize) -> u64 {
        if table >= self.tables.len() || kind > 2 {
            return 0;
        }
        let t = &self.tables[table];
        t.rows
            .get(&uuid)
            .or_else(|| t.deleted.get(&uuid))
            .map(|r| r.change_seqno[kind])
            .unwrap_or(0)
    }

    /// Rows of a table as seen by the client (open transaction included):
    /// UUID order, rows deleted in the transaction skipped, rows inserted
    /// in it included.
    pub fn row_uuids(&self, table: usize) -> Vec<Uuid> {
        if table >= self.tables.len() {
            return Vec::new();
        }
        let mut v: Vec<Uuid> = self.tables[table]
            .rows
            .keys()
            .filter(|u| {
                self.txn
                    .as_ref()
                    .map(|x| !x.deleted.contains(&(table, **u)))
                    .unwrap_or(true)
            })
            .copied()
            .collect();
        if let Some(x) = &self.txn {
            let mut ins: Vec<Uuid> = x
                .inserted
                .keys()
                .filter(|(t, _)| *t == table)
                .map(|(_, u)| *u)
                .collect();
            ovsdb::order::sort(&mut ins);
            v.extend(ins);
            ovsdb::order::sort(&mut v);
        }
        v
    }

    /// Number of committed rows.
    pub fn row_count(&self, table: usize) -> usize {
        if table >= self.tables.len() {
            return 0;
        }
        self.tables[table].rows.len()
    }

    pub fn exists(&self, table: usize, uuid: Uuid) -> bool {
        if table >= self.tables.len() {
            return false;
        }
        if let Some(x) = &self.txn {
            if x.deleted.contains(&(table, uuid)) {
                return false;
            }
            if x.inserted.contains_key(&(table, uuid)) {
                return true;
            }
        }
        self.tables[table].rows.contains_key(&uuid)
    }

    /// Reads a column: the value written in the open transaction if any,
    /// else the committed value, else (inserted row) the default.
    pub fn read(&self, table: usize, uuid: Uuid, column: usize) -> Datum {
        if !self.valid(table, column) {
            return Datum::default();
        }
        if let Some(x) = &self.txn {
            if let Some(w) = x.written.get(&(table, uuid)).and_then(|m| m.get(&column)) {
                return w.clone();
            }
            if x.inserted.contains_key(&(table, uuid)) {
                return Datum::default_for(&self.meta.tables[table].columns[column].ty);
            }
        }
        match self.tables[table].rows.get(&uuid) {
            Some(r) => r.data[column].clone(),
            None => match self.tables[table].deleted.get(&uuid) {
                Some(r) => r.data[column].clone(),
                None => Datum::default_for(&self.meta.tables[table].columns[column].ty),
            },
        }
    }

    /// Whether [`Idl::read`] would return a value equal to `value`, without
    /// copying it.
    pub fn read_equals(&self, table: usize, uuid: Uuid, column: usize, value: &Datum) -> bool {
        if !self.valid(table, column) {
            return false;
        }
        if let Some(x) = &self.txn {
            if let Some(w) = x.written.get(&(table, uuid)).and_then(|m| m.get(&column)) {
                return w == value;
            }
            if x.inserted.contains_key(&(table, uuid)) {
                return value.is_default(&self.meta.tables[table].columns[column].ty);
            }
        }
        match self.tables[table]
            .rows
            .get(&uuid)
            .or_else(|| self.tables[table].deleted.get(&uuid))
        {
            Some(r) => r.data.get(column) == Some(value),
            None => value.is_default(&self.meta.tables[table].columns[column].ty),
        }
    }

    /// Borrowing read of committed data (no transaction view).
    pub fn committed(&self, table: usize, uuid: Uuid) -> Option<&[Datum]> {
        if table >= self.tables.len() {
            return None;
        }
        self.tables[table]
            .rows
            .get(&uuid)
            .or_else(|| self.tables[table].deleted.get(&uuid))
            .map(|r| r.data.as_slice())
    }

    /// `{table: {uuid: {column: value}}}` of the monitored columns of every
    /// committed row (same shape as [`ovsdb_server::Server::dump`]).
    pub fn dump(&self) -> Json {
        let mut o = Object::new();
        for (ti, t) in self.meta.tables.iter().enumerate() {
            if self.tables[ti].rows.is_empty() {
                continue;
            }
            let mut rows = Object::new();
            for (u, r) in &self.tables[ti].rows {
                let mut ro = Object::new();
                for (ci, c) in t.columns.iter().enumerate() {
                    if self.modes[ti][ci] & MONITOR != 0 {
                        ro.insert(c.name.clone(), r.data[ci].to_json());
                    }
                }
                rows.insert(u.to_string(), Json::Object(ro));
            }
            o.insert(t.name.clone(), Json::Object(rows));
        }
        Json::Object(o)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{idl, shown, update2, uuid, NAME, P, Q, TAGS, U1, U2, V};
    use ovsdb::atom::Atom;
    use ovsdb::datum::Datum;

    #[test]
    fn rows_read_as_committed_and_dump_in_name_and_uuid_order() {
        let mut i = idl();
        update2(
            &mut i,
            &format!(
                r#"{{"P":{{"{U2}":{{"insert":{{"name":"b","tags":["set",["x","y"]]}}}},"{U1}":{{"insert":{{"name":"a","v":7}}}}}},
                    "Q":{{"{U1}":{{"insert":{{"x":1}}}}}}}}"#
            ),
        );
        assert_eq!(i.row_uuids(P), [uuid(U1), uuid(U2)]);
        assert_eq!((i.row_count(P), i.row_count(Q)), (2, 1));
        assert_eq!(shown(&i.read(P, uuid(U1), V)), "7");
        assert_eq!(shown(&i.read(P, uuid(U2), TAGS)), r#"["set",["x","y"]]"#);
        // Absent rows read as the column's default.
        assert_eq!(
            shown(&i.read(P, uuid(super::super::testkit::U3), NAME)),
            r#""""#
        );
        assert_eq!(
            i.dump().to_string_compact(),
            format!(
                r#"{{"P":{{"{U1}":{{"name":"a","q":["set",[]],"tags":["set",[]],"v":7}},"{U2}":{{"name":"b","q":["set",[]],"tags":["set",["x","y"]],"v":0}}}},"Q":{{"{U1}":{{"x":1}}}}}}"#
            )
        );
    }

    #[test]
    fn reads_see_the_open_transaction_and_committed_does_not() {
        let mut i = idl();
        update2(
            &mut i,
            &format!(r#"{{"P":{{"{U1}":{{"insert":{{"name":"a"}}}}}}}}"#),
        );
        i.txn_write(P, uuid(U1), V, Datum::scalar(Atom::Integer(3)));
        i.txn_delete(P, uuid(U1));
        assert!(!i.exists(P, uuid(U1)));
        assert_eq!(i.row_uuids(P), []);
        assert_eq!(
            i.committed(P, uuid(U1)).map(|c| shown(&c[NAME])),
            Some(r#""a""#.into())
        );
        i.txn_abort();
        assert!(i.exists(P, uuid(U1)));
        assert_eq!(shown(&i.read(P, uuid(U1), V)), "0");
    }
}
