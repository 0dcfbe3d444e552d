// Package clients tests clients generated from edge/openapi.json against a
// live node: a Go client (oapi-codegen, into rappelclient, not committed)
// and a TypeScript one (clients/ts). `make clients-test` generates both and
// runs these tests; docs/testing.md tells how.
package clients

import (
	"bytes"
	"context"
	"mime/multipart"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rappel-ca/rappel/clients/go/rappelclient"
)

// TestGoClient calls every operation of the served document through the
// generated ClientWithResponses, checking each answer's status and typed
// body (answer), and fails if an operation was not called.
func TestGoClient(t *testing.T) {
	n := startNode(t)
	rec := &recorder{ops: operations(t, n.url), called: map[string][]int{}}
	c, err := rappelclient.NewClientWithResponses(n.url, rappelclient.WithHTTPClient(rec))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	header := func(k, v string) rappelclient.RequestEditorFn {
		return func(_ context.Context, req *http.Request) error { req.Header.Set(k, v); return nil }
	}
	keyed, admin := header("x-gateway-key", n.key), header("x-admin-key", adminKey)
	asJSON := header("Accept", "application/json")
	ptr := func(s string) *string { return &s }
	num := func(i int) *int { return &i }

	// The public routes.
	r0, err := c.GetRootWithResponse(ctx, asJSON)
	answer(t, "getRoot", r0, err, 200)
	r1, err := c.GetOpenAPIWithResponse(ctx)
	answer(t, "getOpenAPI", r1, err, 200)
	r2, err := c.GetDocsWithResponse(ctx)
	answer(t, "getDocs", r2, err, 200)
	r3, err := c.GetDocsAssetWithResponse(ctx, "docs.js")
	answer(t, "getDocsAsset", r3, err, 200)
	health, err := c.GetHealthWithResponse(ctx)
	if answer(t, "getHealth", health, err, 200) != nil && health.JSON200.Records <= 0 {
		t.Errorf("getHealth: records %d, want the bundle's", health.JSON200.Records)
	}
	r4, err := c.GetLivezWithResponse(ctx)
	answer(t, "getLivez", r4, err, 200)
	r5, err := c.GetReadyzWithResponse(ctx)
	answer(t, "getReadyz", r5, err, 200)
	r6, err := c.RecallFeedWithResponse(ctx, &rappelclient.RecallFeedParams{})
	answer(t, "recallFeed", r6, err, 200)

	// Searching and reading.
	search, err := c.SearchRecallsWithResponse(ctx, &rappelclient.SearchRecallsParams{Q: ptr("recall"), Limit: num(20)}, keyed)
	if answer(t, "searchRecalls", search, err, 200) == nil || len(search.JSON200.Results) == 0 {
		t.Fatal("searchRecalls found nothing to go on with")
	}
	first := search.JSON200.Results[0]
	bad, err := c.SearchRecallsWithResponse(ctx, &rappelclient.SearchRecallsParams{Limit: num(0)}, keyed)
	if answer(t, "searchRecalls (limit 0)", bad, err, 422) != nil && len(bad.JSON422.Detail) == 0 {
		t.Error("searchRecalls (limit 0): a 422 without items")
	}
	noKey, err := c.SearchRecallsWithResponse(ctx, &rappelclient.SearchRecallsParams{Q: ptr("x")})
	answer(t, "searchRecalls (no key)", noKey, err, 403)
	record, err := c.GetRecordWithResponse(ctx, first.RecordId, &rappelclient.GetRecordParams{}, keyed)
	if answer(t, "getRecord", record, err, 200) != nil && record.JSON200.RecordId != first.RecordId {
		t.Errorf("getRecord: record_id %s, want %s", record.JSON200.RecordId, first.RecordId)
	}
	groupBy := rappelclient.GetStatsParamsGroupBy("recall_type")
	stats, err := c.GetStatsWithResponse(ctx, &rappelclient.GetStatsParams{GroupBy: &groupBy}, keyed)
	answer(t, "getStats", stats, err, 200)
	changes, err := c.GetChangesWithResponse(ctx, &rappelclient.GetChangesParams{Limit: num(5)}, keyed)
	if answer(t, "getChanges", changes, err, 200) != nil {
		next, err := c.GetChangesWithResponse(ctx, &rappelclient.GetChangesParams{Since: &changes.JSON200.Next, Limit: num(5)}, keyed)
		answer(t, "getChanges (next)", next, err, 200)
	}
	export, err := c.ExportRecallsWithResponse(ctx, &rappelclient.ExportRecallsParams{Q: ptr("peanut")}, keyed)
	answer(t, "exportRecalls", export, err, 200)
	suggest, err := c.SuggestWithResponse(ctx, &rappelclient.SuggestParams{Q: ptr("pea")}, keyed)
	answer(t, "suggest", suggest, err, 200)
	products, err := c.GetProductsWithResponse(ctx, &rappelclient.GetProductsParams{Id: first.RecallId}, keyed)
	answer(t, "getProducts", products, err, 200)

	// A barcode from the data, when the first food recalls hold one.
	food := rappelclient.RecallType("food")
	foods, err := c.SearchRecallsWithResponse(ctx, &rappelclient.SearchRecallsParams{RecallType: &food, Limit: num(50)}, keyed)
	upc := "036000291452"
	if answer(t, "searchRecalls (food)", foods, err, 200) != nil {
	found:
		for _, r := range foods.JSON200.Results {
			if r.ProductList == nil {
				continue
			}
			for _, p := range *r.ProductList {
				if p.Upc != "" {
					upc = p.Upc
					break found
				}
			}
		}
	}
	byUPC, err := c.GetByBarcodeWithResponse(ctx, &rappelclient.GetByBarcodeParams{Upc: upc}, keyed)
	answer(t, "getByBarcode", byUPC, err, 200)
	byVIN, err := c.GetByVINWithResponse(ctx, &rappelclient.GetByVINParams{Vin: "1HGCM82633A004352"}, keyed)
	answer(t, "getByVIN", byVIN, err, 200)

	// Screening a catalog.
	var id1, id2 any = "sku-1", 2
	match, err := c.MatchCatalogWithResponse(ctx, rappelclient.MatchRequest{Items: []rappelclient.MatchItem{
		{Id: &id1, Name: ptr("peanut butter"), Gtin: &upc}, {Id: &id2, Name: ptr("garden hose")},
	}}, keyed)
	if answer(t, "matchCatalog", match, err, 200) != nil && len(match.JSON200.Items) != 2 {
		t.Errorf("matchCatalog: %d answers for 2 items", len(match.JSON200.Items))
	}

	// E-mail alerts, with the confirmation token from the mail dir.
	const email = "client-go@example.ca"
	sub, err := c.SubscribeWithResponse(ctx, &rappelclient.SubscribeParams{IdempotencyKey: ptr("go-client-subscribe")}, rappelclient.SubscribeRequest{Email: email, Q: ptr("peanut")}, keyed)
	if answer(t, "subscribe", sub, err, 200) == nil {
		t.Fatal("subscribe failed")
	}
	confirmToken := n.confirmationToken(t, email)
	confirm, err := c.ConfirmWithResponse(ctx, &rappelclient.ConfirmParams{Token: confirmToken}, asJSON)
	answer(t, "confirm", confirm, err, 200)
	confirmPost, err := c.ConfirmPostWithBodyWithResponse(ctx, &rappelclient.ConfirmPostParams{Token: confirmToken}, "application/x-www-form-urlencoded", strings.NewReader(""), asJSON)
	answer(t, "confirmPost", confirmPost, err, 200)
	unknown, err := c.ConfirmWithResponse(ctx, &rappelclient.ConfirmParams{Token: "AAAAAAAAAAAAAAAAAAAAAA"}, asJSON)
	answer(t, "confirm (unknown token)", unknown, err, 404)
	unsub, err := c.UnsubscribeWithResponse(ctx, &rappelclient.UnsubscribeParams{Token: sub.JSON200.UnsubscribeToken}, asJSON)
	answer(t, "unsubscribe", unsub, err, 200)
	oneClick, err := c.UnsubscribeOneClickWithBodyWithResponse(ctx, &rappelclient.UnsubscribeOneClickParams{Token: sub.JSON200.UnsubscribeToken}, "application/x-www-form-urlencoded", strings.NewReader("List-Unsubscribe=One-Click"), asJSON)
	answer(t, "unsubscribeOneClick", oneClick, err, 200)

	// Webhooks, posting to the node itself over loopback.
	events := []rappelclient.WebhookEvent{"recall.created"}
	hook, err := c.CreateWebhookWithResponse(ctx, &rappelclient.CreateWebhookParams{}, rappelclient.WebhookRequest{Url: n.url + "/livez", Q: ptr("peanut"), Events: &events}, keyed)
	if answer(t, "createWebhook", hook, err, 201) == nil {
		t.Fatal("createWebhook failed")
	}
	if !strings.HasPrefix(hook.JSON201.Secret, "whsec_") {
		t.Error("createWebhook: the secret does not start with whsec_")
	}
	hookID := hook.JSON201.Id
	hooks, err := c.ListWebhooksWithResponse(ctx, keyed)
	answer(t, "listWebhooks", hooks, err, 200)
	getHook, err := c.GetWebhookWithResponse(ctx, hookID, keyed)
	answer(t, "getWebhook", getHook, err, 200)
	test, err := c.TestWebhookWithResponse(ctx, hookID, &rappelclient.TestWebhookParams{}, keyed)
	if answer(t, "testWebhook", test, err, 202) != nil && test.JSON202.Type != "webhook.test" {
		t.Errorf("testWebhook: type %s", test.JSON202.Type)
	}
	delHook, err := c.DeleteWebhookWithResponse(ctx, hookID, keyed)
	answer(t, "deleteWebhook", delHook, err, 204)
	gone, err := c.GetWebhookWithResponse(ctx, hookID, keyed)
	answer(t, "getWebhook (deleted)", gone, err, 404)

	// Watchlists: a hit arises only from a refresh, so marking one is
	// tried on an id the watchlist does not have.
	wl, err := c.CreateWatchlistWithResponse(ctx, &rappelclient.CreateWatchlistParams{}, rappelclient.WatchlistRequest{Name: ptr("go"), Items: []rappelclient.WatchlistRequestItem{
		{Id: &id1, Name: ptr("peanut butter"), Gtin: &upc},
	}}, keyed)
	if answer(t, "createWatchlist", wl, err, 201) == nil {
		t.Fatal("createWatchlist failed")
	}
	wlID := wl.JSON201.Id
	wls, err := c.ListWatchlistsWithResponse(ctx, keyed)
	answer(t, "listWatchlists", wls, err, 200)
	getWL, err := c.GetWatchlistWithResponse(ctx, wlID, keyed)
	answer(t, "getWatchlist", getWL, err, 200)
	items, err := c.ListWatchlistItemsWithResponse(ctx, wlID, &rappelclient.ListWatchlistItemsParams{}, keyed)
	answer(t, "listWatchlistItems", items, err, 200)
	hits, err := c.ListWatchlistHitsWithResponse(ctx, wlID, &rappelclient.ListWatchlistHitsParams{}, keyed)
	hitID, hitStatus := "hit_none", 404
	if answer(t, "listWatchlistHits", hits, err, 200) != nil && len(hits.JSON200.Hits) > 0 {
		hitID, hitStatus = hits.JSON200.Hits[0].Id, 200
	}
	handled, err := c.HandleWatchlistHitWithResponse(ctx, wlID, hitID, rappelclient.WatchHitHandled{Handled: true}, keyed)
	answer(t, "handleWatchlistHit", handled, err, hitStatus)
	delWL, err := c.DeleteWatchlistWithResponse(ctx, wlID, keyed)
	answer(t, "deleteWatchlist", delWL, err, 204)

	// The admin routes. The live feeds are off (no network), so those
	// acting on feeds and plugins answer their documented 503.
	metrics, err := c.GetMetricsWithResponse(ctx, admin)
	answer(t, "getMetrics", metrics, err, 200)
	noAdmin, err := c.GetMetricsWithResponse(ctx)
	answer(t, "getMetrics (no admin key)", noAdmin, err, 403)
	backup, err := c.AdminBackupWithResponse(ctx, admin)
	answer(t, "adminBackup", backup, err, 200)
	refresh, err := c.AdminRefreshWithResponse(ctx, admin)
	answer(t, "adminRefresh", refresh, err, 503)
	plugins, err := c.AdminPluginsWithResponse(ctx, admin)
	answer(t, "adminPlugins", plugins, err, 503)
	approve, err := c.AdminApprovePluginWithResponse(ctx, "hcdump", rappelclient.AdminApprovePluginJSONRequestBody{Sha256: strings.Repeat("0", 64)}, admin)
	answer(t, "adminApprovePlugin", approve, err, 503)
	var form bytes.Buffer
	mw := multipart.NewWriter(&form)
	part, _ := mw.CreateFormFile("plugin", "hcdump.wasm")
	_, _ = part.Write([]byte("\x00asm"))
	_ = mw.Close()
	put, err := c.AdminPutPluginWithBodyWithResponse(ctx, "hcdump", mw.FormDataContentType(), &form, admin)
	answer(t, "adminPutPlugin", put, err, 503)
	del, err := c.AdminDeletePluginWithResponse(ctx, "hcdump", rappelclient.AdminDeletePluginJSONRequestBody{Reason: "client test"}, admin)
	answer(t, "adminDeletePlugin", del, err, 503)

	rec.check(t, "TestGoClient")
}

// TestTypeScriptClient runs the TypeScript client's program
// (clients/ts/live.ts, compiled by make clients-test into clients/ts/out)
// against a node of its own; the program checks every answer against the
// served document and that every operation was called, and exits 1 if not.
func TestTypeScriptClient(t *testing.T) {
	program := filepath.Join("..", "ts", "out", "live.js")
	if _, err := os.Stat(program); err != nil {
		if os.Getenv("RAPPEL_CI") != "" {
			t.Fatalf("no %s (RAPPEL_CI is set): make clients-test compiles it", program)
		}
		t.Skipf("no %s: make clients-test compiles it", program)
	}
	n := startNode(t)
	out, err := runTypeScript(t, n, program, nil)
	if err != nil {
		t.Fatalf("the TypeScript client's program failed: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}

// runTypeScript runs the compiled program against n with extra variables
// in its environment, and returns its output.
func runTypeScript(t *testing.T, n *node, program string, extra []string) ([]byte, error) {
	t.Helper()
	cmd := exec.Command("node", program)
	cmd.Env = append(os.Environ(), "RAPPEL_URL="+n.url, "RAPPEL_KEY="+n.key, "RAPPEL_ADMIN_KEY="+adminKey, "RAPPEL_MAIL_DIR="+n.mailDir)
	cmd.Env = append(cmd.Env, extra...)
	return cmd.CombinedOutput()
}
