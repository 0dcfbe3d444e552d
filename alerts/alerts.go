// Package alerts implements e-mail alerts for new recalls: subscriptions
// with recorded consent (double opt-in unless turned off), hashed tokens,
// one-click unsubscribe, and the matching of each refresh's new recalls
// against every active subscription with the query engine of GET /recall.
//
// Tokens are 128-bit random values in unpadded base64url; only their SHA-256
// reaches the store, so a copy of the database cannot unsubscribe anyone.
//
// Nobody can turn the alerts against an inbox: an address gets at most
// ConfirmPerAddress confirmation e-mails per ConfirmWindow whatever asks,
// without the answer saying whether one went out; a key makes at most
// SubscriptionsPerKeyDay subscriptions a day; and a subscription left
// unconfirmed for PendingTTL can no longer be confirmed and is pruned. The
// counters live in the store, so a fleet counts as one.
//
// A confirmation e-mail is an outbox row of its own, written with its
// subscription in one transaction and sent by the Sender like an alert:
// a send that fails (an SMTP server down, a mail dir on a full disk) is
// retried with backoff, after a restart too, so that no subscription the
// API acknowledged is left without its link.
//
// The stores are interfaces of the domain package: one node's Pebble, or a
// database a fleet of nodes shares. In a fleet every node runs the
// matcher and the sender; matched marks per record id make each new recall
// matched once, and claims with leases make one node send each alert and
// let another take over the rows of a node that died.
//
// A Runner runs them on a node: it serves subscriptions, and matches and
// sends on a timer and as soon as a refresh reports new records (it is a
// rappel.ChangeListener). For development, a mail dir takes the SMTP
// server's place: every e-mail becomes an .eml file and its links are
// logged, through the same sender.
//
// Webhooks are the same alerts posted over HTTPS: an API key registers
// endpoints with a saved search (HookService), each refresh's created,
// updated and archived records are matched against them with the same
// index (HookMatcher) into an outbox of the same kind, and HookSender posts
// each delivery signed as Standard Webhooks defines, through a client that
// refuses private, loopback and metadata addresses at connect time
// (HookClient), retrying on a schedule of about a day.
package alerts
