// Package session keeps one ZooKeeper session alive over a list of servers,
// as ZooKeeper's Java client does, on top of package client's single
// connection: it pings after a third of the session timeout, moves to the
// next server when a connection fails, resumes the session there with its
// id, password and last seen zxid, re-sends the identities added with
// AddAuth, and re-registers the session's watches with SetWatches.
//
// It also keeps the client-side watch table the Java client keeps (data,
// exist, child, persistent and persistent-recursive watches per path) so
// that events are delivered as the Java client delivers them: a server
// event is passed on only if a watch of the session matches it, once however
// many of its watches match; one-shot watches go when they fire; removing
// watches delivers DataWatchRemoved, ChildWatchRemoved or
// PersistentWatchRemoved locally. The table is updated on the connection's
// reader goroutine in arrival order (client.Conn.Observe), so a watch set
// by a reply is in place before any later event is matched against it.
//
// State changes come as events of type None: SyncConnected on each
// connection, Disconnected when one is lost, Expired when a server refuses
// the session, Closed after Close.
//
// A request made while no connection is up waits for one until its context
// ends; a request in flight when the connection drops fails with
// ConnectionLoss, as in ZooKeeper (it may or may not have been applied).
package session
