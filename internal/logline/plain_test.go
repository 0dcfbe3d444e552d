package logline

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/edge"
	"github.com/rappel-ca/rappel/kv/index"
)

// slogLine is the line slog's own handler of New's format writes for r.
func slogLine(t testing.TB, r slog.Record, json bool) string {
	t.Helper()
	var b bytes.Buffer
	var h slog.Handler
	if json {
		h = slog.NewJSONHandler(&b, &slog.HandlerOptions{Level: slog.LevelDebug, ReplaceAttr: durationSeconds})
	} else {
		h = slog.NewTextHandler(&b, &slog.HandlerOptions{Level: slog.LevelDebug})
	}
	if err := h.Handle(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// accessRecordAt is a record as the access log makes it.
func accessRecordAt(at time.Time, extra ...slog.Attr) slog.Record {
	r := slog.NewRecord(at, slog.LevelInfo, "request", 0)
	r.AddAttrs(slog.String("method", "GET"), slog.String("route", "/recall/{record_id}"), slog.Int("status", 200),
		slog.Duration("duration", 123456*time.Nanosecond), slog.Int64("bytes", 3396),
		slog.String("request_id", "0123456789ABCDEFGHIJ-2s"), slog.String("key_id", "static-1a2b3c4d"))
	r.AddAttrs(extra...)
	return r
}

// TestPlainLine: an access line is plain, in both formats, and written
// byte for byte as slog writes it; a line that is not plain (a cut, whose
// reason has spaces) is left to slog.
func TestPlainLine(t *testing.T) {
	at := time.Date(2026, 11, 27, 12, 21, 50, 842_123_456, time.UTC)
	for _, json := range []bool{false, true} {
		r := accessRecordAt(at)
		got, ok := plainLine(nil, r, json)
		if !ok {
			t.Fatalf("json %v: the access line is not plain", json)
		}
		if want := slogLine(t, r, json); string(got) != want {
			t.Errorf("json %v:\n got %s\nwant %s", json, got, want)
		}
		if _, ok := plainLine(nil, accessRecordAt(at, slog.String("cut", "client closed the connection")), json); ok {
			t.Errorf("json %v: a line with a quoted value is plain", json)
		}
	}
}

// TestNew_PlainAndNot: through New, a plain line and one that
// is not come out as slog writes them, whole lines in order, with the
// trace handler and With still working.
func TestNew_PlainAndNot(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 6_000_000, time.FixedZone("EST", -5*3600))
	for _, format := range []string{"text", "json"} {
		var b bytes.Buffer
		out := NewWriter(&b)
		log := New(out, format, slog.LevelInfo)
		plain, cut := accessRecordAt(at), accessRecordAt(at, slog.String("cut", "a page missed its query budget"))
		for _, r := range []slog.Record{plain, cut} {
			if err := log.Handler().Handle(context.Background(), r); err != nil {
				t.Fatal(err)
			}
		}
		log.With("component", "feeds").Info("refresh done", "source", "hc")
		out.Close()
		want := slogLine(t, plain, format == "json") + slogLine(t, cut, format == "json")
		if got := b.String(); !strings.HasPrefix(got, want) || !strings.Contains(got[len(want):], "component") {
			t.Errorf("%s:\n got %s\nwant %s followed by the With line", format, got, want)
		}
	}
}

// FuzzPlainLine: whatever the record, plainLine either declines it or
// writes exactly slog's line.
func FuzzPlainLine(f *testing.F) {
	f.Add(int64(1795350110842123456), 0, 0, "request", "route", "/recall/{record_id}", int64(3396), int64(123456), false)
	f.Add(int64(1795350110000000000), -5*3600, 4, "dataset ready", "k", "a b", int64(-1), int64(3236*time.Millisecond), true)
	f.Add(int64(-9223372036854775808), 3600, 8, "x", "ä", "{}", int64(0), int64(0), true)
	f.Add(int64(1795350110999999999), 19800, -4, "m", "d", "v", int64(1), int64(999), false)
	f.Fuzz(func(t *testing.T, nanos int64, offset, level int, msg, key, str string, n, d int64, json bool) {
		at := time.Unix(0, nanos).In(time.FixedZone("z", offset%(18*3600)))
		r := slog.NewRecord(at, slog.Level(level), msg, 0)
		r.AddAttrs(slog.String(key, str), slog.Int64("n", n), slog.Duration("d", time.Duration(d)),
			slog.Uint64("u", uint64(n)), slog.Attr{}, slog.Duration("dus", time.Duration(d)*time.Microsecond))
		got, ok := plainLine(nil, r, json)
		if !ok {
			return
		}
		if want := slogLine(t, r, json); string(got) != want {
			t.Fatalf("json %v:\n got %s\nwant %s", json, got, want)
		}
	})
}

// BenchmarkAccessLine writes an access line through New's handler
// of each format, and through slog's own.
func BenchmarkAccessLine(b *testing.B) {
	r := accessRecordAt(time.Now())
	for _, format := range []string{"text", "json"} {
		b.Run(format, func(b *testing.B) {
			out := NewWriter(io.Discard)
			defer out.Close()
			h := New(out, format, slog.LevelInfo).Handler()
			b.ReportAllocs()
			for b.Loop() {
				_ = h.Handle(context.Background(), r)
			}
		})
		b.Run(format+"/slog", func(b *testing.B) {
			var h slog.Handler = slog.NewTextHandler(io.Discard, nil)
			if format == "json" {
				h = slog.NewJSONHandler(io.Discard, &slog.HandlerOptions{ReplaceAttr: durationSeconds})
			}
			b.ReportAllocs()
			for b.Loop() {
				_ = h.Handle(context.Background(), r)
			}
		})
	}
}

// BenchmarkServeRecordLogged serves GET /recall/{record_id} through the
// whole edge handler with the server's logger (New over a Writer)
// and, as "/slog", with slog's own handler in its place: what the access
// line costs a cheap request. Run with -count to alternate them.
func BenchmarkServeRecordLogged(b *testing.B) {
	snap, err := index.Build([]*rappel.Record{benchRecord}, rappel.DatasetInfo{Records: 1})
	if err != nil {
		b.Fatal(err)
	}
	cat := &index.Catalog{}
	cat.Swap(snap)
	serve := func(b *testing.B, log *slog.Logger) {
		s := edge.NewServer()
		s.Catalog, s.Keys, s.Logger = cat, edge.NewStaticKeys([]string{"bench-key"}), log
		h := s.Handler()
		r := httptest.NewRequest(http.MethodGet, "/recall/"+benchRecord.RecordID, nil)
		r.Header.Set("X-Gateway-Key", "bench-key")
		b.ReportAllocs()
		for b.Loop() {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != http.StatusOK {
				b.Fatalf("status %d", w.Code)
			}
		}
	}
	for _, format := range []string{"text", "json"} {
		b.Run(format, func(b *testing.B) {
			out := NewWriter(io.Discard)
			defer out.Close()
			serve(b, New(out, format, slog.LevelInfo))
		})
		b.Run(format+"/slog", func(b *testing.B) {
			out := NewWriter(io.Discard)
			defer out.Close()
			var h slog.Handler = slog.NewTextHandler(out, nil)
			if format == "json" {
				h = slog.NewJSONHandler(out, &slog.HandlerOptions{ReplaceAttr: durationSeconds})
			}
			serve(b, slog.New(traceHandler{h}))
		})
	}
}

// benchRecord is the one record BenchmarkServeRecordLogged serves.
var benchRecord = &rappel.Record{
	RecordID: "hc-9000001", RecallID: "9000001", RecallType: rappel.TypeConsumerProduct,
	Agency: rappel.AgencyHealthCanada, Status: rappel.StatusActive,
	EventDate: "2025-01-15", RecallDate: "2025-01-15", FetchedAt: "2025-03-04T10:00:00Z",
	Translations: rappel.Translations{EN: &rappel.Translation{Title: "Toy 1 recalled"}},
}
