package alerts

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/rappel-ca/rappel"
)

// Index is GET /recall's engine as the matchers use it, so that a saved
// search matches what the same search on the API returns. cmd/rappel hands
// in kv/index's; alerts does not import it, as no service package imports
// another (RATIONALE.md, the domain package).
type Index interface {
	// Build indexes recs, a batch of new or changed records, leaving the
	// slice as it is.
	Build(recs []*rappel.Record) (rappel.RecordMatcher, error)
	// CategoryKey is the form GET /recall compares categories in: case
	// and accents folded, spaces collapsed.
	CategoryKey(category string) string
}

// matching is what Matcher and HookMatcher share: the records read by
// record_id, the engine their saved searches are matched with, the clock
// and the log. Only their inputs (new recalls, record events) and outboxes
// differ.
type matching struct {
	// Records reads the batch's records by record_id. Required.
	Records interface {
		Record(ctx context.Context, id string) (*rappel.Record, error)
	}
	Index  Index
	Now    func() time.Time
	Logger *slog.Logger
}

// newMatching returns the matching of ix with the real clock and the
// default logger.
func newMatching(ix Index) matching {
	return matching{Index: ix, Now: time.Now, Logger: slog.Default()}
}

// matchSaved returns the (saved search, record) pairs of ix and recs,
// with recs indexed by the engine.
func (m *matching) matchSaved(ctx context.Context, ix *subIndex, recs []*rappel.Record) ([]pair, error) {
	rm, err := m.Index.Build(recs)
	if err != nil {
		return nil, fmt.Errorf("indexing: %w", err)
	}
	return ix.match(ctx, rm, recs)
}

// Matcher turns a refresh's new recalls into outbox rows: one per active
// subscription and matching recall, written with the recalls' matched
// marks in one transaction. When several nodes share the outbox, each
// node's refresh finds the same new recalls; the marks make the first
// node to commit the only one whose rows count, so each recall is matched
// once across the fleet.
type Matcher struct {
	// Subscriptions and Outbox are usually the same kv.Store. Required.
	Subscriptions rappel.SubscriptionStore
	Outbox        rappel.Outbox
	matching
}

// NewMatcher returns a Matcher of saved searches with GET /recall's engine
// ix, the real clock and the default logger.
func NewMatcher(ix Index) *Matcher { return &Matcher{matching: newMatching(ix)} }

// Drain matches every unacknowledged batch of src, oldest first, and
// acknowledges each once its rows are durable. A crash between the two
// leaves the batch to be matched again, which the matched marks turn into
// a no-op.
func (m *Matcher) Drain(ctx context.Context, src rappel.NewRecallsSource) error {
	batches, err := src.NewRecalls(ctx)
	if err != nil {
		return fmt.Errorf("reading new recalls: %w", err)
	}
	for _, b := range batches {
		if !b.Initial {
			if _, err := m.Match(ctx, b.Seq, b.RecordIDs); err != nil {
				return err
			}
		}
		if err := src.AckNewRecalls(ctx, b.Seq); err != nil {
			return fmt.Errorf("acknowledging new recalls %d: %w", b.Seq, err)
		}
	}
	return nil
}

// Match matches the recalls ids (batch seq) that no node has matched yet
// against every active subscription and writes the outbox rows. It
// returns the number of rows written. Two nodes matching the same recall
// at once both do the work, but only the first to commit writes rows.
func (m *Matcher) Match(ctx context.Context, seq uint64, ids []string) (int, error) {
	ids, err := m.Outbox.UnmatchedRecords(ctx, ids)
	if err != nil {
		return 0, fmt.Errorf("reading matched recalls: %w", err)
	}
	if len(ids) == 0 {
		return 0, nil
	}
	ix, err := m.loadIndex(ctx)
	if err != nil {
		return 0, err
	}
	recs := make([]*rappel.Record, 0, len(ids))
	for _, id := range ids {
		r, err := m.Records.Record(ctx, id)
		if rappel.ErrorCode(err) == rappel.ENOTFOUND {
			continue // deleted since: nothing to announce
		}
		if err != nil {
			return 0, fmt.Errorf("reading new recall %s: %w", id, err)
		}
		recs = append(recs, r)
	}
	pairs, err := m.matchSaved(ctx, ix, recs)
	if err != nil {
		return 0, fmt.Errorf("matching new recalls: %w", err)
	}
	now := m.Now().UTC()
	rows := make([]*rappel.AlertRow, len(pairs))
	for i, p := range pairs {
		rows[i] = &rappel.AlertRow{Sub: p.sub, Record: p.record, OutboxState: rappel.OutboxState{Seq: seq, Status: rappel.AlertPending, CreatedAt: now, NextAt: now}}
	}
	// Every id is marked, those deleted since included: there is nothing
	// to announce for them on any node.
	n, err := m.Outbox.CommitMatches(ctx, ids, rows)
	if err != nil {
		return 0, fmt.Errorf("writing alerts of batch %d: %w", seq, err)
	}
	m.Logger.Info("matched new recalls", "seq", seq, "recalls", len(recs), "subscriptions", ix.n, "alerts", n, "skipped", len(rows)-n)
	return n, nil
}

func (m *Matcher) loadIndex(ctx context.Context) (*subIndex, error) {
	var subs []*rappel.Subscription
	err := m.Subscriptions.ForEachSubscription(ctx, func(s *rappel.Subscription) error {
		if s.Status == rappel.SubActive {
			subs = append(subs, s)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading subscriptions: %w", err)
	}
	return newSubIndex(subs, m.Index.CategoryKey), nil
}

// filterKey is a saved search's filters (rappel.Filters); "" is "any". A
// free-text filter's value is in Index.CategoryKey's form.
type filterKey rappel.FilterValues

// newFilterKey returns the key of fv, its free-text values folded.
func newFilterKey(fv rappel.FilterValues, categoryKey func(string) string) filterKey {
	for i := range rappel.Filters {
		if f := &rappel.Filters[i]; f.Free() && *f.Of(&fv) != "" {
			*f.Of(&fv) = categoryKey(*f.Of(&fv))
		}
	}
	return filterKey(fv)
}

// matches reports whether r passes the filters, as GET /recall's filter
// bitmaps decide: r holds each filter's value among its Values (folded,
// for a free-text filter).
func (f *filterKey) matches(r *rappel.Record, categoryKey func(string) string) bool {
	fv := (*rappel.FilterValues)(f)
	for i := range rappel.Filters {
		filter := &rappel.Filters[i]
		want := *filter.Of(fv)
		if want == "" {
			continue
		}
		if !slices.ContainsFunc(filter.Values(r), func(v string) bool {
			if filter.Free() {
				v = categoryKey(v)
			}
			return v == want
		}) {
			return false
		}
	}
	return true
}

// subRef is a saved search as the index holds it; shared is set when its
// group (a subscription's address) has other active saved searches, whose
// alerts must be merged.
type subRef struct {
	id, email string
	shared    bool
}

// saved is a saved search to index: a subscription's, grouped by its
// address, or a webhook endpoint's, alone in its group ("").
type saved struct {
	id, group string
	search    rappel.AlertSearch
}

type filterGroup struct {
	filter filterKey
	subs   []subRef
}

// qGroup holds the subscriptions sharing one q, by their filters.
type qGroup struct {
	clauses  []int // indexes into subIndex.clauses; none for no q
	byFilter []filterGroup
}

// subIndex is the active subscriptions indexed so that a batch costs one
// text query per distinct clause of q (not per subscription), bitset
// operations per distinct q, and per matching recall a test of each
// distinct filter set of the q's subscriptions.
type subIndex struct {
	clauses []rappel.Clause
	groups  []*qGroup
	n       int
	// categoryKey is Index.CategoryKey.
	categoryKey func(string) string
}

func newSubIndex(subs []*rappel.Subscription, categoryKey func(string) string) *subIndex {
	ss := make([]saved, len(subs))
	for i, s := range subs {
		ss[i] = saved{id: s.ID, group: strings.ToLower(s.Email), search: s.Search}
	}
	return newSavedIndex(ss, categoryKey)
}

func newSavedIndex(subs []saved, categoryKey func(string) string) *subIndex {
	ix := &subIndex{categoryKey: categoryKey}
	groups := map[string]*qGroup{}
	clauseIDs := map[string]int{}
	emails := map[string]int{}
	for _, s := range subs {
		if s.group != "" {
			emails[s.group]++
		}
	}
	for _, s := range subs {
		search, err := s.search.Search()
		if err != nil {
			continue // validated on subscribe; a q the parser now refuses matches nothing
		}
		qk := search.Query.String()
		g := groups[qk]
		if g == nil {
			g = &qGroup{}
			if search.Query != nil {
				for _, c := range search.Query.Clauses {
					ck := (&rappel.Query{Clauses: []rappel.Clause{c}}).String()
					id, ok := clauseIDs[ck]
					if !ok {
						id = len(ix.clauses)
						clauseIDs[ck] = id
						ix.clauses = append(ix.clauses, c)
					}
					g.clauses = append(g.clauses, id)
				}
			}
			groups[qk] = g
			ix.groups = append(ix.groups, g)
		}
		fk := newFilterKey(s.search.FilterValues, categoryKey)
		ref := subRef{s.id, s.group, emails[s.group] > 1}
		i := slices.IndexFunc(g.byFilter, func(f filterGroup) bool { return f.filter == fk })
		if i < 0 {
			g.byFilter = append(g.byFilter, filterGroup{filter: fk})
			i = len(g.byFilter) - 1
		}
		g.byFilter[i].subs = append(g.byFilter[i].subs, ref)
		ix.n++
	}
	return ix
}

type pair struct{ sub, record string }

// bitset is a set of positions in the batch's records.
type bitset []uint64

func (b bitset) set(i int)      { b[i/64] |= 1 << (i % 64) }
func (b bitset) has(i int) bool { return b[i/64]&(1<<(i%64)) != 0 }

// clauseSets evaluates every distinct clause once with rm, the engine of
// GET /recall. A clause's set is the records it keeps: those matching it,
// or for an exclusion those it does not remove. A query's records are then
// the intersection of its clauses' sets, which is how the engine combines
// them (a clause with nothing searchable keeps every record either way).
func (ix *subIndex) clauseSets(ctx context.Context, rm rappel.RecordMatcher, pos map[string]int, words int) ([]bitset, error) {
	sets := make([]bitset, len(ix.clauses))
	// Words as written (typos=off): a batch of new recalls is no
	// dictionary to correct a word against — a word absent from the batch
	// would be "corrected" to whatever near word it holds.
	q := &rappel.Search{Query: &rappel.Query{Clauses: make([]rappel.Clause, 1)}, NoTypos: true, NoRelax: true}
	for i, c := range ix.clauses {
		q.Query.Clauses[0] = c
		ids, err := rm.MatchIDs(ctx, q)
		if err != nil {
			return nil, err
		}
		b := make(bitset, words)
		for _, id := range ids {
			b.set(pos[id])
		}
		sets[i] = b
	}
	return sets, nil
}

// match returns the (subscription, record) pairs, at most one per address
// and record however many identical subscriptions the address holds, in
// (subscription, record) order.
func (ix *subIndex) match(ctx context.Context, rm rappel.RecordMatcher, recs []*rappel.Record) ([]pair, error) {
	pos := make(map[string]int, len(recs))
	for i, r := range recs {
		pos[r.RecordID] = i
	}
	words := (len(recs) + 63) / 64
	sets, err := ix.clauseSets(ctx, rm, pos, words)
	if err != nil {
		return nil, err
	}
	type seenKey struct{ email, record string }
	seen := map[seenKey]bool{}
	var out []pair
	acc := make(bitset, words)
	for _, g := range ix.groups {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		for w := range acc {
			acc[w] = ^uint64(0)
		}
		nonEmpty := uint64(0)
		for _, c := range g.clauses {
			for w, x := range sets[c] {
				acc[w] &= x
			}
		}
		for w := range acc {
			nonEmpty |= acc[w]
		}
		if nonEmpty == 0 {
			continue
		}
		for i, r := range recs {
			if !acc.has(i) {
				continue
			}
			for fi := range g.byFilter {
				f := &g.byFilter[fi]
				if !f.filter.matches(r, ix.categoryKey) {
					continue
				}
				for _, s := range f.subs {
					if s.shared {
						k := seenKey{s.email, r.RecordID}
						if seen[k] {
							continue
						}
						seen[k] = true
					}
					out = append(out, pair{s.id, r.RecordID})
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b pair) int {
		if c := strings.Compare(a.sub, b.sub); c != 0 {
			return c
		}
		return strings.Compare(a.record, b.record)
	})
	return out, nil
}
