//! Change tracking: the per-row change seqnos and `updated` bits set as
//! updates arrive ([`Idl::tracked`], [`Idl::track_clear`]), and the
//! reverse references through which a change of a row marks the rows
//! referring to it as modified, as the C IDL reports them.

use super::{Idl, TrackedRow, ALERT, CHANGE_DELETE, CHANGE_INSERT, CHANGE_MODIFY, TRACK};
use ovsdb::atom::Atom;
use ovsdb::datum::Datum;
use ovsdb::uuid::Uuid;
use std::collections::HashSet;

impl Idl {
    pub(super) fn table_tracked(&self, t: usize) -> bool {
        self.modes[t].iter().any(|m| m & TRACK != 0)
    }

    /// Tracked rows of a table since the last `track_clear`, in arrival
    /// order.
    pub fn tracked(&self, table: usize) -> Vec<TrackedRow> {
        if table >= self.tables.len() {
            return Vec::new();
        }
        let t = &self.tables[table];
        let cols = &self.meta.tables[table].columns;
        t.tracked
            .iter()
            .filter_map(|u| {
                let (r, deleted) = match t.rows.get(u) {
                    Some(r) => (r, false),
                    None => (t.deleted.get(u)?, true),
                };
                Some(TrackedRow {
                    uuid: *u,
                    inserted: r.change_seqno[CHANGE_INSERT] > 0,
                    deleted: deleted || r.change_seqno[CHANGE_DELETE] > 0,
                    modified: r.change_seqno[CHANGE_MODIFY] > 0,
                    updated: r
                        .updated
                        .iter()
                        .enumerate()
                        .filter(|(_, b)| **b)
                        .map(|(i, _)| cols[i].name.clone())
                        .collect(),
                })
            })
            .collect()
    }

    /// Is anything tracked in this table? (OVN's engine treats a table
    /// node as updated iff this is true.)
    pub fn has_tracked(&self, table: usize) -> bool {
        if table >= self.tables.len() {
            return false;
        }
        !self.tables[table].tracked.is_empty()
    }

    pub fn track_clear(&mut self) {
        for t in &mut self.tables {
            for u in std::mem::take(&mut t.tracked) {
                if let Some(r) = t.rows.get_mut(&u) {
                    r.change_seqno = [0; 3];
                    r.updated.iter_mut().for_each(|b| *b = false);
                    r.tracked = false;
                }
            }
            t.deleted.clear();
        }
    }

    /// UUIDs a row references through columns with a `refTable`.
    fn ref_targets(&self, t: usize, data: &[Datum]) -> Vec<Uuid> {
        let mut v = Vec::new();
        if !self.has_refs[t] {
            return v;
        }
        for (c, d) in self.meta.tables[t].columns.iter().zip(data) {
            let kref = c.ty.key.ref_table.is_some();
            let vref = c.ty.value.as_ref().is_some_and(|x| x.ref_table.is_some());
            match d {
                Datum::Set(s) if kref => v.extend(s.iter().filter_map(Atom::as_uuid)),
                Datum::Map(m) => {
                    for (k, x) in m {
                        if kref {
                            v.extend(k.as_uuid());
                        }
                        if vref {
                            v.extend(x.as_uuid());
                        }
                    }
                }
                _ => {}
            }
        }
        v
    }

    pub(super) fn refs_add(&mut self, t: usize, u: Uuid) {
        if !self.has_refs[t] {
            return;
        }
        let targets = match self.tables[t].rows.get(&u) {
            Some(r) => self.ref_targets(t, &r.data),
            None => return,
        };
        for d in targets {
            self.refs_in.entry(d).or_default().insert((t, u));
        }
    }

    pub(super) fn refs_remove(&mut self, t: usize, u: Uuid) {
        if !self.has_refs[t] {
            return;
        }
        let targets = match self.tables[t].rows.get(&u) {
            Some(r) => self.ref_targets(t, &r.data),
            None => return,
        };
        for d in targets {
            if let Some(set) = self.refs_in.get_mut(&d) {
                set.remove(&(t, u));
                if set.is_empty() {
                    self.refs_in.remove(&d);
                }
            }
        }
    }

    /// Puts rows that (transitively) reference `u` on their tables' tracked
    /// lists as modified, without `updated` bits (changes of referenced
    /// rows, as the C IDL reports them).
    pub(super) fn track_referrers(&mut self, u: Uuid) {
        let mut work = vec![u];
        let mut seen: HashSet<Uuid> = HashSet::new();
        seen.insert(u);
        let s = self.seqno + 1;
        while let Some(x) = work.pop() {
            let Some(srcs) = self.refs_in.get(&x).cloned() else {
                continue;
            };
            for (st, su) in srcs {
                if !seen.insert(su) || !self.table_tracked(st) {
                    continue;
                }
                let tt = &mut self.tables[st];
                if let Some(r) = tt.rows.get_mut(&su) {
                    if r.tracked {
                        continue;
                    }
                    r.tracked = true;
                    r.change_seqno[CHANGE_MODIFY] = s;
                    tt.change_seqno[CHANGE_MODIFY] = s;
                    tt.tracked.push(su);
                    work.push(su);
                }
            }
        }
    }

    pub(super) fn note_change(&mut self, t: usize, u: Uuid, kind: usize, col: usize) {
        let mode = self.modes[t][col];
        if mode & ALERT == 0 {
            return;
        }
        let s = self.seqno + 1;
        let tracked_table = self.table_tracked(t);
        let tt = &mut self.tables[t];
        tt.change_seqno[kind] = s;
        if let Some(r) = tt.rows.get_mut(&u) {
            r.change_seqno[kind] = s;
            if mode & TRACK != 0 && tracked_table {
                if !r.tracked {
                    r.tracked = true;
                    tt.tracked.push(u);
                }
                if let Some(b) = r.updated.get_mut(col) {
                    *b = true;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{idl, update2, uuid, P, Q, U1, U2, U3};
    use super::super::TrackedRow;

    fn row(u: &str, inserted: bool, deleted: bool, modified: bool, updated: &[&str]) -> TrackedRow {
        TrackedRow {
            uuid: uuid(u),
            inserted,
            deleted,
            modified,
            updated: updated.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn tracked_rows_keep_arrival_order_changed_columns_and_deleted_rows() {
        let mut i = idl();
        i.track_add_column("P", "v").unwrap();
        i.track_add_column("P", "tags").unwrap();
        update2(
            &mut i,
            &format!(
                r#"{{"P":{{"{U2}":{{"insert":{{"name":"b","v":1}}}},"{U1}":{{"insert":{{"name":"a"}}}}}}}}"#
            ),
        );
        // An insert is tracked through the tracked columns it sets: `a`
        // set none of them.
        assert_eq!(i.tracked(P), [row(U2, true, false, false, &["v"])]);
        i.track_clear();
        assert!(!i.has_tracked(P));
        // `name` is not tracked: its change alone marks nothing.
        update2(
            &mut i,
            &format!(
                r#"{{"P":{{"{U1}":{{"modify":{{"name":"z"}}}},"{U2}":{{"modify":{{"tags":"t","v":2}}}}}}}}"#
            ),
        );
        assert_eq!(i.tracked(P), [row(U2, false, false, true, &["tags", "v"])]);
        update2(&mut i, &format!(r#"{{"P":{{"{U1}":{{"delete":null}}}}}}"#));
        // A delete is tracked. `a` also still shows its insert and its
        // `name` modify: it was never on the tracked list, so no
        // `track_clear` reset its change seqnos (as in the C IDL).
        assert_eq!(
            i.tracked(P),
            [
                row(U2, false, false, true, &["tags", "v"]),
                row(U1, true, true, true, &[])
            ]
        );
        i.track_clear();
        assert_eq!(i.tracked(P), []);
    }

    #[test]
    fn a_change_of_a_referenced_row_marks_its_referrers_modified() {
        let mut i = idl();
        i.track_add_all();
        update2(
            &mut i,
            &format!(
                r#"{{"Q":{{"{U3}":{{"insert":{{"x":1}}}}}},
                    "P":{{"{U1}":{{"insert":{{"name":"a","q":["uuid","{U3}"]}}}},"{U2}":{{"insert":{{"name":"b"}}}}}}}}"#
            ),
        );
        i.track_clear();
        update2(
            &mut i,
            &format!(r#"{{"Q":{{"{U3}":{{"modify":{{"x":2}}}}}}}}"#),
        );
        assert_eq!(i.tracked(Q), [row(U3, false, false, true, &["x"])]);
        // `a` refers to it: modified, without updated columns; `b` untouched.
        assert_eq!(i.tracked(P), [row(U1, false, false, true, &[])]);
    }
}
