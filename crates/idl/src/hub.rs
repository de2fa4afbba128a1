//! An in-process connection between IDL replicas and the server model:
//! every message is delivered synchronously, updates before replies, as
//! ovsdb-server orders them. Used by the experiments, the web app and
//! tests; it has no I/O.

use crate::replica::{Commit, Event, Idl, IdlError, TxnStatus};
use ovsdb::json::Json;
use ovsdb_server::{Server, SessionId};

pub struct Client {
    pub session: SessionId,
    pub idl: Idl,
    /// Bytes of server→client messages received (compact JSON).
    pub bytes_in: usize,
    /// Bytes of client→server messages sent.
    pub bytes_out: usize,
}

pub struct Hub {
    pub server: Server,
    pub clients: Vec<Client>,
}

impl Hub {
    pub fn new(server: Server) -> Hub {
        Hub {
            server,
            clients: Vec::new(),
        }
    }

    /// Adds a replica, connects it and loads the initial contents.
    pub fn add(&mut self, idl: Idl) -> Result<usize, IdlError> {
        let session = self.server.connect();
        self.clients.push(Client {
            session,
            idl,
            bytes_in: 0,
            bytes_out: 0,
        });
        let i = self.clients.len() - 1;
        let req = self.clients[i].idl.connect();
        self.send(i, &req)?;
        Ok(i)
    }

    /// Drops client `i`'s connection and reconnects it (monitor_cond_since
    /// with its last id).
    pub fn reconnect(&mut self, i: usize) -> Result<Vec<Event>, IdlError> {
        let old = self.clients[i].session;
        let released = self.server.disconnect(old);
        self.route(released, usize::MAX)?;
        let mut ev = self.clients[i].idl.disconnect();
        self.clients[i].session = self.server.connect();
        let req = self.clients[i].idl.connect();
        ev.extend(self.send(i, &req)?);
        Ok(ev)
    }

    /// Delivers server messages to their replicas (and whatever the
    /// replicas send in response); returns client `want`'s events.
    pub fn route(
        &mut self,
        out: Vec<(SessionId, Json)>,
        want: usize,
    ) -> Result<Vec<Event>, IdlError> {
        let mut events = Vec::new();
        let mut queue = out;
        while !queue.is_empty() {
            let mut next = Vec::new();
            for (to, msg) in queue {
                let Some(ci) = self.clients.iter().position(|c| c.session == to) else {
                    continue;
                };
                let c = &mut self.clients[ci];
                c.bytes_in += msg.serialized_len();
                let ev = c.idl.receive(&msg)?;
                if ci == want {
                    events.extend(ev);
                }
                for m in c.idl.take_outgoing() {
                    c.bytes_out += m.serialized_len();
                    let s = c.session;
                    next.extend(self.server.handle(s, &m));
                }
            }
            queue = next;
        }
        Ok(events)
    }

    /// Sends a message from client `i`; returns client `i`'s events.
    pub fn send(&mut self, i: usize, msg: &Json) -> Result<Vec<Event>, IdlError> {
        self.clients[i].bytes_out += msg.serialized_len();
        let s = self.clients[i].session;
        let out = self.server.handle(s, msg);
        self.route(out, i)
    }

    /// Runs `ops` as a transaction from outside any client (another
    /// writer), delivering the resulting updates.
    pub fn transact(&mut self, ops: &[Json]) -> Result<Json, IdlError> {
        let (outcome, msgs) = self.server.transact(ops);
        self.route(msgs, usize::MAX)?;
        Ok(outcome.result)
    }

    /// Commits client `i`'s open transaction and waits for the outcome.
    pub fn commit(&mut self, i: usize) -> Result<TxnStatus, IdlError> {
        match self.clients[i].idl.txn_commit() {
            Commit::Unchanged => Ok(TxnStatus::Unchanged),
            Commit::Aborted => Ok(TxnStatus::Aborted),
            Commit::NotLocked => Ok(TxnStatus::NotLocked),
            Commit::Sent { id, request, .. } => {
                let ev = self.send(i, &request)?;
                Ok(ev
                    .into_iter()
                    .find_map(|e| match e {
                        Event::TxnDone { id: x, status, .. } if x == id => Some(status),
                        _ => None,
                    })
                    .unwrap_or(TxnStatus::Incomplete))
            }
        }
    }
}
