//! A [`Database`]'s reference counts: strong references counted per
//! target row, weak references as back-references to their referrers,
//! both kept as rows are written (by a transaction, or placed without
//! one), only the elements that changed touched.

use super::*;

impl Database {
    pub(super) fn adjust_ref(
        &mut self,
        st: &mut TxnState,
        src: (usize, Uuid),
        target: RefTarget,
        atom: &Atom,
        col: usize,
        delta: i32,
    ) {
        let Some(tu) = atom.as_uuid() else {
            return;
        };
        let tt = target.table;
        let Some(table) = self.tables.get_mut(tt).map(Arc::make_mut) else {
            return;
        };
        if target.weak {
            let e = table.weak_in.entry(tu).or_default();
            let c = e.entry(src).or_insert(0);
            if delta > 0 {
                *c += 1;
                if !st.replaying_undo {
                    st.weak_added.push((src.0, src.1, col, tt, tu));
                }
            } else {
                *c = c.saturating_sub(1);
                if *c == 0 {
                    e.remove(&src);
                }
                if e.is_empty() {
                    table.weak_in.remove(&tu);
                }
            }
        } else if let Some(batch) = st.strong_batch.as_mut() {
            *batch.entry((tt, tu)).or_insert(0) += i64::from(delta.signum());
        } else {
            let c = table.strong_in.entry(tu).or_insert(0);
            if delta > 0 {
                *c += 1;
            } else {
                *c = c.saturating_sub(1);
            }
            let zero = *c == 0;
            if zero {
                table.strong_in.remove(&tu);
            }
            if !st.replaying_undo {
                st.strong_touched.insert((tt, tu));
                if zero && !self.schema.tables[tt].is_root {
                    st.gc_candidates.push((tt, tu));
                }
            }
        }
    }

    /// Adjusts references for every atom of `d` in column `col` of a row.
    pub(super) fn adjust_datum_refs(
        &mut self,
        st: &mut TxnState,
        src: (usize, Uuid),
        col: usize,
        d: &Datum,
        delta: i32,
    ) {
        // Most reference columns of most rows are empty (a new logical
        // switch's ports, ACLs, ...): nothing to count.
        if d.is_empty() {
            return;
        }
        let Some(rc) =
            self.meta[src.0].ref_of_col[col].map(|i| self.meta[src.0].ref_cols[i].clone())
        else {
            return;
        };
        match d {
            Datum::Set(s) => {
                if let Some(k) = rc.key {
                    for a in s {
                        self.adjust_ref(st, src, k, a, col, delta);
                    }
                }
            }
            Datum::Map(m) => {
                for (k, v) in m {
                    if let Some(kt) = rc.key {
                        self.adjust_ref(st, src, kt, k, col, delta);
                    }
                    if let Some(vt) = rc.value {
                        self.adjust_ref(st, src, vt, v, col, delta);
                    }
                }
            }
        }
    }

    /// Adjusts references for a column changing from `old` to `new`,
    /// touching only the elements that differ (a merge walk).
    pub(super) fn adjust_refs_delta(
        &mut self,
        st: &mut TxnState,
        src: (usize, Uuid),
        col: usize,
        old: &Datum,
        new: &Datum,
    ) {
        use std::cmp::Ordering;
        match (old, new) {
            (Datum::Set(a), Datum::Set(b)) => {
                let (mut ia, mut ib) = (a.iter().peekable(), b.iter().peekable());
                loop {
                    match (ia.peek(), ib.peek()) {
                        (None, None) => break,
                        (Some(x), None) => {
                            self.adjust_pair_refs(st, src, col, x, None, -1);
                            ia.next();
                        }
                        (None, Some(y)) => {
                            self.adjust_pair_refs(st, src, col, y, None, 1);
                            ib.next();
                        }
                        (Some(x), Some(y)) => match x.cmp(y) {
                            Ordering::Less => {
                                self.adjust_pair_refs(st, src, col, x, None, -1);
                                ia.next();
                            }
                            Ordering::Greater => {
                                self.adjust_pair_refs(st, src, col, y, None, 1);
                                ib.next();
                            }
                            Ordering::Equal => {
                                ia.next();
                                ib.next();
                            }
                        },
                    }
                }
            }
            (Datum::Map(a), Datum::Map(b)) => {
                let (mut ia, mut ib) = (a.iter().peekable(), b.iter().peekable());
                loop {
                    match (ia.peek(), ib.peek()) {
                        (None, None) => break,
                        (Some((k, v)), None) => {
                            self.adjust_pair_refs(st, src, col, k, Some(v), -1);
                            ia.next();
                        }
                        (None, Some((k, v))) => {
                            self.adjust_pair_refs(st, src, col, k, Some(v), 1);
                            ib.next();
                        }
                        (Some((ka, va)), Some((kb, vb))) => match ka.cmp(kb) {
                            Ordering::Less => {
                                self.adjust_pair_refs(st, src, col, ka, Some(va), -1);
                                ia.next();
                            }
                            Ordering::Greater => {
                                self.adjust_pair_refs(st, src, col, kb, Some(vb), 1);
                                ib.next();
                            }
                            Ordering::Equal => {
                                if va != vb {
                                    let vt = self.meta[src.0].ref_of_col[col]
                                        .and_then(|i| self.meta[src.0].ref_cols[i].value);
                                    if let Some(vt) = vt {
                                        self.adjust_ref(st, src, vt, va, col, -1);
                                        self.adjust_ref(st, src, vt, vb, col, 1);
                                    }
                                }
                                ia.next();
                                ib.next();
                            }
                        },
                    }
                }
            }
            _ => {
                self.adjust_datum_refs(st, src, col, old, -1);
                self.adjust_datum_refs(st, src, col, new, 1);
            }
        }
    }

    pub(super) fn adjust_pair_refs(
        &mut self,
        st: &mut TxnState,
        src: (usize, Uuid),
        col: usize,
        k: &Atom,
        v: Option<&Atom>,
        delta: i32,
    ) {
        let Some(rc) =
            self.meta[src.0].ref_of_col[col].map(|i| self.meta[src.0].ref_cols[i].clone())
        else {
            return;
        };
        if let Some(kt) = rc.key {
            self.adjust_ref(st, src, kt, k, col, delta);
        }
        if let (Some(vt), Some(v)) = (rc.value, v) {
            self.adjust_ref(st, src, vt, v, col, delta);
        }
    }

    pub(super) fn has_refs(&self, ti: usize, col: usize) -> bool {
        self.meta[ti]
            .ref_of_col
            .get(col)
            .is_some_and(|r| r.is_some())
    }
}
