package edge

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/alerts"
)

// Agencies a source plugin's manifest could name, registered for the whole
// test binary (registration is process-wide and never undone), under names
// no other test uses. testAgencyTheta is registered by
// TestAgency_OpenAPIDocument alone, to see the document change.
var (
	testAgencyZeta  = rappel.Agency{Name: "Test Agency Zeta", EN: "Zeta Test Agency", FR: "Agence d'essai Zêta"}
	testAgencyTheta = rappel.Agency{Name: "Test Agency Theta", EN: "Theta Test Agency", FR: "Agence d'essai Thêta"}
)

func mustRegisterAgency(tb testing.TB, a rappel.Agency) {
	tb.Helper()
	if err := rappel.RegisterAgency(a); err != nil {
		tb.Fatal(err)
	}
}

// zetaRecord is a recall of testAgencyZeta, among testRecords' dates.
func zetaRecord() *rappel.Record {
	return &rappel.Record{
		RecordID: "zeta-5150", RecallID: "5150", RecallType: rappel.TypeConsumerProduct,
		Agency: testAgencyZeta.Name, Status: rappel.StatusActive,
		EventDate: "2025-02-10", RecallDate: "2025-02-10", FetchedAt: "2025-03-04T10:00:00Z",
		Translations: rappel.Translations{
			EN: &rappel.Translation{Title: "Zeta folding ladders recalled due to a fall hazard"},
			FR: &rappel.Translation{Title: "Rappel d'escabeaux pliants Zeta en raison d'un risque de chute"},
		},
	}
}

// mustAgencyServer serves testRecords and zetaRecord on the real router,
// over a real store and its change log, for the key rk_a of a limited plan (so that responses
// carry the headers the document promises): its URL, and the document as
// served, which the responses are checked against.
func mustAgencyServer(t *testing.T) (string, *openAPI) {
	t.Helper()
	mustRegisterAgency(t, testAgencyZeta)
	recs := append(testRecords(), zetaRecord())
	st := mustStore(t, recs) // change log entries 1 to 4, one per record
	gen, _, err := st.ChangeSeq(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	catalog := MustCatalog(t, recs)
	catalog.SwapView(catalog.Current().WithChangePos(gen, uint64(len(recs))))
	s, _ := MustServer(t, catalog)
	s.Lookup, s.Changes = st, st
	s.Keys = planKeys{"rk_a": "a"}
	s.Plans = map[string]rappel.Plan{"a": {Name: "a", Rate: 1000, Burst: 1000, Monthly: 1_000_000}}
	return MustHTTP(t, s.Handler()).URL, mustOpenAPI(t)
}

var keyHeader = map[string]string{"X-Gateway-Key": "rk_a"}

// TestAgency_Filters checks, through the real router, that every route
// taking recall_agency takes a registered agency and finds its records, that
// the statistics and facets count them under its name, and that the 422 of a
// misspelt one suggests it. Every JSON response is checked against the
// document as served, whose Agency schema must name the agency.
func TestAgency_Filters(t *testing.T) {
	base, d := mustAgencyServer(t)
	run := d.runner(t, base)
	zeta := "recall_agency=" + url.QueryEscape(testAgencyZeta.Name)

	var page struct {
		Results []struct {
			RecordID string `json:"record_id"`
			Agency   string `json:"agency"`
		} `json:"results"`
		Facets map[string][]rappel.StatsGroup `json:"facets"`
	}
	mustDecode(t, run(docCase{"GET", "/recall?" + zeta, "", keyHeader, 200}), &page)
	if len(page.Results) != 1 || page.Results[0].RecordID != "zeta-5150" || page.Results[0].Agency != testAgencyZeta.Name {
		t.Errorf("GET /recall?%s: %+v, want zeta-5150 alone", zeta, page.Results)
	}

	mustDecode(t, run(docCase{"GET", "/recall?facets=recall_agency", "", keyHeader, 200}), &page)
	if !slices.Contains(page.Facets["recall_agency"], rappel.StatsGroup{Value: testAgencyZeta.Name, Count: 1}) {
		t.Errorf("the recall_agency facet %+v does not count zeta-5150", page.Facets["recall_agency"])
	}

	var stats struct {
		ByAgency []rappel.StatsGroup `json:"by_agency"`
	}
	mustDecode(t, run(docCase{"GET", "/recall/stats?group_by=agency&period=all", "", keyHeader, 200}), &stats)
	if !slices.Contains(stats.ByAgency, rappel.StatsGroup{Value: testAgencyZeta.Name, Count: 1}) || len(stats.ByAgency) != 4 {
		t.Errorf("GET /recall/stats?group_by=agency: %+v, want the three agencies' and zeta's count of 1", stats.ByAgency)
	}

	if b := run(docCase{"GET", "/recall/export?" + zeta, "", keyHeader, 200}); bytes.Count(b, []byte("\n")) != 1 || !bytes.Contains(b, []byte(`"record_id":"zeta-5150"`)) {
		t.Errorf("GET /recall/export?%s: %s, want zeta-5150 alone", zeta, b)
	}
	if b := run(docCase{"GET", "/recall/feed.atom?" + zeta, "", nil, 200}); bytes.Count(b, []byte("<entry>")) != 1 || !bytes.Contains(b, []byte("Zeta folding ladders")) {
		t.Errorf("GET /recall/feed.atom?%s: %s, want zeta-5150's entry alone", zeta, b)
	}

	for _, target := range []string{"/recall", "/recall/export", "/recall/feed.atom"} {
		misspelt := target + "?recall_agency=" + url.QueryEscape("Test Agency Zet")
		items := itemsOf(t, run(docCase{"GET", misspelt, "", keyHeader, 422}))
		if len(items) != 1 || !strings.Contains(items[0].Msg, "did you mean 'Test Agency Zeta'") ||
			!strings.Contains(items[0].Ctx["expected"].(string), "'CFIA'") || !strings.Contains(items[0].Ctx["expected"].(string), "'Test Agency Zeta'") {
			t.Errorf("GET %s: %+v, want a 422 listing the known agencies and suggesting Test Agency Zeta", misspelt, items)
		}
	}
}

// TestAgency_AlertsAndWebhooks checks, through the real router over a real
// store, that an alert subscription and a webhook take a registered agency
// as their filter, and that a misspelt one is a 422 suggesting it.
func TestAgency_AlertsAndWebhooks(t *testing.T) {
	mustRegisterAgency(t, testAgencyZeta)
	d := mustOpenAPI(t)

	ts, st, _ := mustAlertServer(t, true)
	subscribe := ts.URL + "/recall/alerts/subscribe"
	if code, body, _ := do(t, "POST", subscribe, `{"email":"zeta@example.ca","agency":"Test Agency Zeta"}`, keyHdr); code != 200 {
		t.Fatalf("subscribing to Test Agency Zeta: %d %s", code, body)
	}
	var agencies []string
	st.ForEachSubscription(context.Background(), func(s *rappel.Subscription) error {
		agencies = append(agencies, s.Search.Agency)
		return nil
	})
	if !slices.Equal(agencies, []string{testAgencyZeta.Name}) {
		t.Errorf("stored subscriptions' agencies %q", agencies)
	}
	code, body, _ := do(t, "POST", subscribe, `{"email":"zeta@example.ca","agency":"test agency zeta!"}`, keyHdr)
	if items := itemsOf(t, []byte(body)); code != 422 || len(items) != 1 || !strings.Contains(items[0].Msg, "did you mean 'Test Agency Zeta'") {
		t.Errorf("subscribing to a misspelt agency: %d %s, want a 422 suggesting Test Agency Zeta", code, body)
	}

	base, _ := webhookEnv(t, alerts.NewHookSender())
	hook := d.runner(t, base)(docCase{"POST", "/recall/webhooks", `{"url":"https://hooks.example.ca/","recall_agency":"Test Agency Zeta"}`,
		map[string]string{"X-Gateway-Key": "rk_a"}, 201})
	var view rappel.WebhookView
	mustDecode(t, hook, &view)
	if view.Agency != testAgencyZeta.Name {
		t.Errorf("POST /recall/webhooks with Test Agency Zeta: %s", hook)
	}
}

// TestAgency_OpenAPIDocument checks GET /openapi.json names each agency
// known when it is asked, in English and French, that registering one
// changes the document and its ETag (a cache revalidating the old tag gets
// the new document), and that nothing but the Agency schema changes.
func TestAgency_OpenAPIDocument(t *testing.T) {
	s, _ := MustServer(t, MustCatalog(t, testRecords()))
	base := MustHTTP(t, s.Handler()).URL
	get := func(inm string) (*http.Response, []byte) {
		h := map[string]string{}
		if inm != "" {
			h["If-None-Match"] = inm
		}
		return docRequest(t, base, docCase{"GET", "/openapi.json", "", h, 0})
	}
	before, oldBody := get("")
	if slices.Contains(rappel.KnownAgencies(), testAgencyTheta.Name) {
		t.Fatal("Test Agency Theta is registered already: another test uses its name")
	}
	mustRegisterAgency(t, testAgencyTheta)
	after, body := get("")
	if before.StatusCode != 200 || after.StatusCode != 200 || before.Header.Get("ETag") == after.Header.Get("ETag") {
		t.Fatalf("ETag %q before registering and %q after, want two", before.Header.Get("ETag"), after.Header.Get("ETag"))
	}
	if resp, _ := get(before.Header.Get("ETag")); resp.StatusCode != 200 {
		t.Errorf("revalidating the old document: %d, want 200 with the new one", resp.StatusCode)
	}
	if resp, _ := get(after.Header.Get("ETag")); resp.StatusCode != 304 {
		t.Errorf("revalidating the new document: %d, want 304", resp.StatusCode)
	}

	root := mustJSONObject(t, "the served openapi.json", body)
	if err := mustMetaSchema(t, true).Validate(root); err != nil {
		t.Fatalf("the served document is not a valid OpenAPI 3.1 document:\n%v", err)
	}
	var doc struct {
		Components struct {
			Schemas struct {
				Agency struct {
					Description  string   `json:"description"`
					Enum         []string `json:"enum"`
					Descriptions []string `json:"x-enum-descriptions"`
				}
			}
		}
	}
	mustDecode(t, body, &doc)
	agency := doc.Components.Schemas.Agency
	if !slices.Equal(agency.Enum, rappel.KnownAgencies()) || len(agency.Descriptions) != len(agency.Enum) {
		t.Fatalf("Agency enum %q with %d descriptions, want %q and one each", agency.Enum, len(agency.Descriptions), rappel.KnownAgencies())
	}
	for i, a := range rappel.AllAgencies() {
		full := a.EN + " / " + a.FR
		if agency.Descriptions[i] != full || !strings.Contains(agency.Description, "`"+a.Name+"` ("+full+")") {
			t.Errorf("%s is not described as %q: %q, %q", a.Name, full, agency.Descriptions[i], agency.Description)
		}
	}

	// Only the Agency schema's line changed: the rest of the document,
	// its key order included, is the file's.
	oldLines, lines := strings.Split(string(oldBody), "\n"), strings.Split(string(body), "\n")
	if len(oldLines) != len(lines) {
		t.Fatalf("%d lines before registering, %d after", len(oldLines), len(lines))
	}
	for i := range lines {
		if lines[i] != oldLines[i] && !strings.HasPrefix(strings.TrimSpace(lines[i]), agencySchemaKey) {
			t.Errorf("line %d changed:\n%s\n%s", i+1, oldLines[i], lines[i])
		}
	}
}

// TestOpenAPI_AgencySchemaInFile checks openapi.json holds the Agency
// schema exactly as the server writes it for the spec's agencies, so that
// the file and the served document say the same while no plugin registered
// one.
func TestOpenAPI_AgencySchemaInFile(t *testing.T) {
	spec := specAgencies()
	want := agencySchema([]byte("\n      "+agencySchemaKey), spec)
	if !bytes.Contains(openAPIDoc, want) {
		t.Errorf("openapi.json's Agency schema is not, on a line of its own:\n%s", want)
	}
	if got := withAgencySchema(spec); !bytes.Equal(got, openAPIDoc) {
		t.Error("rewriting the Agency schema for the spec's agencies changes the document")
	}
}

// FuzzAgencySchema writes the Agency schema with one more agency, its names
// as a manifest may give them (anything Agency.Validate takes, quotes,
// backslashes, backticks and U+2028 included), and checks the document stays
// JSON whose enum and x-enum-descriptions say exactly those names.
func FuzzAgencySchema(f *testing.F) {
	f.Add("FDA", "Food and Drug Administration", "Agence américaine des produits alimentaires et médicamenteux")
	f.Add("Test Agency Zeta", `Zeta "Test" \ Agency`, "Agence d'essai `Zêta`\u2028")
	f.Add("A&B (Q.C.) - '1'", "\x7f", "")
	f.Fuzz(func(t *testing.T, name, en, fr string) {
		a := rappel.Agency{Name: name, EN: en, FR: fr}
		if a.Validate() != nil {
			return
		}
		list := append(specAgencies(), a)
		var doc struct {
			Components struct {
				Schemas struct {
					Agency struct {
						Enum         []string `json:"enum"`
						Descriptions []string `json:"x-enum-descriptions"`
					}
				}
			}
		}
		if err := json.Unmarshal(withAgencySchema(list), &doc); err != nil {
			t.Fatalf("the document with %+v is not JSON: %v", a, err)
		}
		got := doc.Components.Schemas.Agency
		if len(got.Enum) != len(list) || len(got.Descriptions) != len(list) {
			t.Fatalf("enum %q, descriptions %q for %d agencies", got.Enum, got.Descriptions, len(list))
		}
		for i, k := range list {
			if got.Enum[i] != k.Name || got.Descriptions[i] != k.EN+" / "+k.FR {
				t.Fatalf("agency %d: %q, %q; want %+v", i, got.Enum[i], got.Descriptions[i], k)
			}
		}
	})
}

// specAgencies are the spec's three agencies with their full names,
// whatever other tests registered.
func specAgencies() []rappel.Agency {
	return slices.DeleteFunc(rappel.AllAgencies(), func(a rappel.Agency) bool { return !rappel.Agencies.Has(a.Name) })
}

func mustDecode(tb testing.TB, b []byte, v any) {
	tb.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		tb.Fatalf("%s: %v", b, err)
	}
}
