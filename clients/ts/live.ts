// The TypeScript client's test: every operation of the OpenAPI document,
// called through a client generated from it (openapi-typescript types,
// openapi-fetch runtime) against a live node, every answer checked.
//
// Three checks, so that a change to the document that breaks a client
// fails: tsc --strict compiles these calls against the generated types (an
// operation renamed, a parameter or field gone or retyped); each answer's
// status must be one the document lists for its operation, and its body
// must validate against that status's schema, read from the node's own
// GET /openapi.json (the server still sending the old shape); and every
// operation of the document must have been called (a new route without a
// call here).
//
// The node is started by clients/go's TestTypeScriptClient, which passes
// it in the environment: RAPPEL_URL, RAPPEL_KEY (an issued key),
// RAPPEL_ADMIN_KEY and RAPPEL_MAIL_DIR (where confirmation e-mails land).

import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import createClient, { type Middleware } from "openapi-fetch";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormatsPlugin from "ajv-formats";
import type { paths } from "./gen/schema.js";

function env(name: string): string {
  const v = process.env[name];
  if (v === undefined || v === "") {
    throw new Error(`${name} is not set: run this program through clients/go's TestTypeScriptClient (make clients-test), which starts the node`);
  }
  return v;
}

const baseUrl = env("RAPPEL_URL");
const key = env("RAPPEL_KEY");
const adminKey = env("RAPPEL_ADMIN_KEY");
const mailDir = env("RAPPEL_MAIL_DIR");

const failures: string[] = [];
function fail(msg: string): void {
  failures.push(msg);
  console.error(`FAIL ${msg}`);
}

// The document as the node serves it, fetched without the client so that
// the checks below are in place before the first checked call; or, with
// RAPPEL_OPENAPI, a document file (clients/go's TestPlantedChange checks
// that a document changed where the server did not fails the program).
type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type Doc = { paths: Record<string, Record<string, { operationId?: string; responses?: Record<string, Json> }>> };
async function servedDocument(): Promise<string> {
  const res = await fetch(`${baseUrl}/openapi.json`);
  if (res.status !== 200) {
    throw new Error(`GET /openapi.json answered ${res.status}`);
  }
  return res.text();
}
const docFile = process.env["RAPPEL_OPENAPI"];
const doc = JSON.parse(docFile ? readFileSync(docFile, "utf8") : await servedDocument()) as Doc & Record<string, Json>;

const methods = ["get", "put", "post", "delete", "patch", "options", "head", "trace"];
type Op = { id: string; method: string; template: string; re: RegExp; literals: number };
const ops: Op[] = [];
for (const [template, item] of Object.entries(doc.paths)) {
  for (const [method, op] of Object.entries(item)) {
    if (!methods.includes(method)) continue;
    const segs = template.split("/");
    const re = new RegExp(
      "^" +
        segs
          .map((s, i) => (/^\{.+\}$/.test(s) ? (i === segs.length - 1 ? ".+" : "[^/]+") : s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
          .join("/") +
        "$",
    );
    ops.push({
      id: op.operationId ?? `${method.toUpperCase()} ${template}`,
      method: method.toUpperCase(),
      template,
      re,
      literals: segs.filter((s) => !/^\{.+\}$/.test(s)).length,
    });
  }
}

// The operation a request is, the one with most literal segments among
// those its path matches (/recall/stats before /recall/{record_id}).
function operationOf(method: string, path: string): Op | undefined {
  let best: Op | undefined;
  for (const op of ops) {
    if (op.method === method && op.re.test(path) && (best === undefined || op.literals > best.literals)) {
      best = op;
    }
  }
  return best;
}

const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
addFormatsPlugin.default(ajv);
ajv.addSchema(doc, "rappel:openapi");
const validators = new Map<string, ValidateFunction>();
function pointer(...parts: string[]): string {
  return parts.map((p) => p.replace(/~/g, "~0").replace(/\//g, "~1")).join("/");
}

// Resolves a response object that is a $ref to components/responses.
function deref(v: Json | undefined): Json | undefined {
  let cur = v;
  for (let i = 0; i < 8 && cur !== null && typeof cur === "object" && !Array.isArray(cur) && typeof cur["$ref"] === "string"; i++) {
    let target: Json = doc;
    for (const part of cur["$ref"].replace(/^#\//, "").split("/")) {
      const k = part.replace(/~1/g, "/").replace(/~0/g, "~");
      target = target !== null && typeof target === "object" && !Array.isArray(target) ? (target[k] ?? null) : null;
    }
    cur = target;
  }
  return cur;
}

const called = new Map<string, number[]>();

// check is the middleware every answer passes: its status documented, its
// media type one of that status's, a JSON body valid against the schema.
const check: Middleware = {
  async onResponse({ request, response }) {
    const url = new URL(request.url);
    const op = operationOf(request.method, url.pathname);
    const what = `${request.method} ${url.pathname}${url.search}`;
    if (op === undefined) {
      fail(`${what}: no operation of the document has this method and path`);
      return undefined;
    }
    called.set(op.id, [...(called.get(op.id) ?? []), response.status]);
    const responses = doc.paths[op.template]?.[op.method.toLowerCase()]?.responses ?? {};
    const statusKey = String(response.status);
    const documented = responses[statusKey] !== undefined ? statusKey : responses["default"] !== undefined ? "default" : undefined;
    if (documented === undefined) {
      fail(`${op.id} (${what}) answered ${response.status}, which the document does not list (${Object.keys(responses).join(", ")})`);
      return undefined;
    }
    const resp = deref(responses[documented]);
    const content = resp !== null && typeof resp === "object" && !Array.isArray(resp) ? resp["content"] : undefined;
    const body = await response.clone().text();
    if (content === undefined || content === null || typeof content !== "object" || Array.isArray(content)) {
      if (body !== "" && request.method !== "HEAD") {
        fail(`${op.id} answered ${response.status} with a body, where the document gives none`);
      }
      return undefined;
    }
    if (response.status === 304 || request.method === "HEAD") return undefined;
    const mediaType = (response.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
    if (!(mediaType in content)) {
      fail(`${op.id} answered ${response.status} as ${mediaType || "no Content-Type"}, not one of the document's ${Object.keys(content).join(", ")}`);
      return undefined;
    }
    if (!/^application\/(.+\+)?json$/.test(mediaType)) return undefined;
    const ptr = `rappel:openapi#/${pointer("paths", op.template, op.method.toLowerCase(), "responses", documented)}`;
    const schemaRef = `${ptr}/content/${pointer(mediaType)}/schema`;
    let validate = validators.get(schemaRef);
    if (validate === undefined) {
      // A response given as a $ref is validated through its component.
      const raw = responses[documented];
      const base =
        raw !== null && typeof raw === "object" && !Array.isArray(raw) && typeof raw["$ref"] === "string"
          ? `rappel:openapi${raw["$ref"]}/content/${pointer(mediaType)}/schema`
          : schemaRef;
      validate = ajv.compile({ $ref: base });
      validators.set(schemaRef, validate);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch (e) {
      fail(`${op.id} answered ${response.status} with a body that is not JSON: ${String(e)}`);
      return undefined;
    }
    if (!validate(parsed)) {
      fail(`${op.id} answered ${response.status} with a body the schema refuses: ${ajv.errorsText(validate.errors)}; body: ${body.slice(0, 400)}`);
    }
    return undefined;
  },
};

const client = createClient<paths>({ baseUrl });
client.use(check);
const keyed = { "x-gateway-key": key };
const admin = { "x-admin-key": adminKey };

// expect fails unless an answer has the status the call was made for.
function expect(name: string, res: { response: Response }, status: number): void {
  if (res.response.status !== status) {
    fail(`${name}: status ${res.response.status}, want ${status}`);
  }
}

// need returns a value the test goes on with, or stops it with a sentence.
function need<T>(v: T | undefined | null, what: string): T {
  if (v === undefined || v === null) {
    throw new Error(`stopping: ${what}`);
  }
  return v;
}

// The public routes.
expect("getRoot", await client.GET("/", { headers: { accept: "application/json" } }), 200);
expect("getOpenAPI", await client.GET("/openapi.json"), 200);
expect("getDocs", await client.GET("/docs", { parseAs: "text" }), 200);
expect("getDocsAsset", await client.GET("/docs/{file}", { params: { path: { file: "docs.js" } }, parseAs: "text" }), 200);
const health = await client.GET("/health");
expect("getHealth", health, 200);
const records = need(health.data, "GET /health gave no body").records;
if (records <= 0) fail(`GET /health: records ${records}, want the bundle's`);
expect("getLivez", await client.GET("/livez"), 200);
expect("getReadyz", await client.GET("/readyz"), 200);
expect("recallFeed", await client.GET("/recall/feed.atom", { parseAs: "text" }), 200);

// Searching and reading.
const search = await client.GET("/recall", { params: { query: { q: "recall", limit: 20 } }, headers: keyed });
expect("searchRecalls", search, 200);
const page = need(search.data, "GET /recall gave no body");
const first = need(page.results[0], "GET /recall?q=recall found nothing");
const bad = await client.GET("/recall", { params: { query: { limit: 0 } }, headers: keyed });
expect("searchRecalls (limit 0)", bad, 422);
if (bad.error !== undefined && bad.error.detail.length === 0) fail("searchRecalls (limit 0): a 422 without items");
expect("searchRecalls (no key)", await client.GET("/recall", { params: { query: { q: "x" } } }), 403);

const record = await client.GET("/recall/{record_id}", { params: { path: { record_id: first.record_id } }, headers: keyed });
expect("getRecord", record, 200);
if (record.data !== undefined && record.data.record_id !== first.record_id) {
  fail(`getRecord: record_id ${record.data.record_id}, want ${first.record_id}`);
}
expect("getStats", await client.GET("/recall/stats", { params: { query: { group_by: "recall_type" } }, headers: keyed }), 200);
const changes = await client.GET("/recall/changes", { params: { query: { limit: 5 } }, headers: keyed });
expect("getChanges", changes, 200);
if (changes.data !== undefined) {
  expect("getChanges (next)", await client.GET("/recall/changes", { params: { query: { since: changes.data.next, limit: 5 } }, headers: keyed }), 200);
}
expect("exportRecalls", await client.GET("/recall/export", { params: { query: { q: "peanut" } }, headers: keyed, parseAs: "text" }), 200);
expect("suggest", await client.GET("/recall/suggest", { params: { query: { q: "pea" } }, headers: keyed }), 200);
expect("getProducts", await client.GET("/recall/products", { params: { query: { id: first.recall_id } }, headers: keyed }), 200);

// A barcode and a VIN from the data, when the first pages hold them.
const food = await client.GET("/recall", { params: { query: { recall_type: "food", limit: 50 } }, headers: keyed });
expect("searchRecalls (food)", food, 200);
const upc = food.data?.results.flatMap((r) => r.product_list ?? []).find((p) => p.upc !== "")?.upc ?? "036000291452";
const byUPC = await client.GET("/recall/upc", { params: { query: { upc } }, headers: keyed });
expect("getByBarcode", byUPC, 200);
expect("getByVIN", await client.GET("/recall/vin", { params: { query: { vin: "1HGCM82633A004352" } }, headers: keyed }), 200);

// Screening a catalog.
const match = await client.POST("/recall/match", {
  body: { items: [{ id: "sku-1", name: first.translations.en?.title ?? "peanut butter", gtin: upc }, { id: 2, name: "garden hose" }] },
  headers: keyed,
});
expect("matchCatalog", match, 200);
if (match.data !== undefined && match.data.items.length !== 2) fail(`matchCatalog: ${match.data.items.length} answers for 2 items`);

// E-mail alerts: subscribe, then confirm and unsubscribe with the tokens
// from the confirmation e-mail in the mail dir.
const sub = await client.POST("/recall/alerts/subscribe", { body: { email: "client-ts@example.ca", q: "peanut" }, headers: keyed });
expect("subscribe", sub, 200);
const unsubToken = need(sub.data, "subscribe gave no body").unsubscribe_token;
const confirmToken = await confirmationToken("client-ts@example.ca");
const json = { accept: "application/json" };
expect("confirm", await client.GET("/recall/alerts/confirm", { params: { query: { token: confirmToken } }, headers: json }), 200);
expect("confirmPost", await client.POST("/recall/alerts/confirm", { params: { query: { token: confirmToken } }, headers: json }), 200);
expect("confirm (unknown token)", await client.GET("/recall/alerts/confirm", { params: { query: { token: "AAAAAAAAAAAAAAAAAAAAAA" } }, headers: json }), 404);
expect("unsubscribe", await client.GET("/recall/alerts/unsubscribe", { params: { query: { token: unsubToken } }, headers: json }), 200);
expect("unsubscribeOneClick", await client.POST("/recall/alerts/unsubscribe", { params: { query: { token: unsubToken } }, headers: json }), 200);

// Webhooks, posting to the node itself over loopback (the node runs with
// --webhooks-allow-http-loopback): what it answers does not matter here.
const hook = await client.POST("/recall/webhooks", { body: { url: `${baseUrl}/livez`, q: "peanut", events: ["recall.created"] }, headers: keyed });
expect("createWebhook", hook, 201);
const hookId = need(hook.data, "createWebhook gave no body").id;
if (!hook.data?.secret.startsWith("whsec_")) fail("createWebhook: the secret does not start with whsec_");
expect("listWebhooks", await client.GET("/recall/webhooks", { headers: keyed }), 200);
expect("getWebhook", await client.GET("/recall/webhooks/{id}", { params: { path: { id: hookId } }, headers: keyed }), 200);
const test = await client.POST("/recall/webhooks/{id}/test", { params: { path: { id: hookId } }, headers: keyed });
expect("testWebhook", test, 202);
if (test.data !== undefined && test.data.type !== "webhook.test") fail(`testWebhook: type ${test.data.type}`);
expect("deleteWebhook", await client.DELETE("/recall/webhooks/{id}", { params: { path: { id: hookId } }, headers: keyed }), 204);
expect("getWebhook (deleted)", await client.GET("/recall/webhooks/{id}", { params: { path: { id: hookId } }, headers: keyed }), 404);

// Watchlists: a hit arises only from a refresh, so marking one is tried on
// an id the watchlist does not have.
const wl = await client.POST("/recall/watchlists", { body: { name: "ts", items: [{ id: "sku-1", name: "peanut butter", gtin: upc }] }, headers: keyed });
expect("createWatchlist", wl, 201);
const wlId = need(wl.data, "createWatchlist gave no body").id;
expect("listWatchlists", await client.GET("/recall/watchlists", { headers: keyed }), 200);
expect("getWatchlist", await client.GET("/recall/watchlists/{id}", { params: { path: { id: wlId } }, headers: keyed }), 200);
expect("listWatchlistItems", await client.GET("/recall/watchlists/{id}/items", { params: { path: { id: wlId } }, headers: keyed }), 200);
const hits = await client.GET("/recall/watchlists/{id}/hits", { params: { path: { id: wlId } }, headers: keyed });
expect("listWatchlistHits", hits, 200);
const hitId = hits.data?.hits[0]?.id ?? "hit_none";
expect(
  "handleWatchlistHit",
  await client.PATCH("/recall/watchlists/{id}/hits/{hit_id}", { params: { path: { id: wlId, hit_id: hitId } }, body: { handled: true }, headers: keyed }),
  hits.data?.hits[0] === undefined ? 404 : 200,
);
expect("deleteWatchlist", await client.DELETE("/recall/watchlists/{id}", { params: { path: { id: wlId } }, headers: keyed }), 204);

// The admin routes, with the admin key. The node's live feeds are off (no
// network), so the routes that act on feeds and plugins answer their
// documented 503; the backup and the metrics are real.
expect("getMetrics", await client.GET("/metrics", { headers: admin, parseAs: "text" }), 200);
expect("getMetrics (no admin key)", await client.GET("/metrics", { parseAs: "text" }), 403);
expect("adminBackup", await client.POST("/admin/backup", { headers: admin, parseAs: "arrayBuffer" }), 200);
expect("adminRefresh", await client.POST("/admin/refresh", { headers: admin }), 503);
expect("adminPlugins", await client.GET("/admin/plugins", { headers: admin }), 503);
expect(
  "adminApprovePlugin",
  await client.POST("/admin/plugins/{source}/approve", { params: { path: { source: "hcdump" } }, body: { sha256: "0".repeat(64) }, headers: admin }),
  503,
);
const form = new FormData();
form.append("plugin", new Blob([new Uint8Array([0, 97, 115, 109])]), "hcdump.wasm");
expect(
  "adminPutPlugin",
  await client.PUT("/admin/plugins/{source}", {
    params: { path: { source: "hcdump" } },
    body: { plugin: "" },
    bodySerializer: () => form,
    headers: admin,
  }),
  503,
);
expect(
  "adminDeletePlugin",
  await client.DELETE("/admin/plugins/{source}", { params: { path: { source: "hcdump" } }, body: { reason: "client test" }, headers: admin }),
  503,
);

// confirmationToken reads the confirmation link of the newest e-mail to
// addr in the mail dir, waiting for the sender to write it.
async function confirmationToken(addr: string): Promise<string> {
  for (let i = 0; i < 100; i++) {
    // The mail dir is made with the first e-mail.
    const names = existsSync(mailDir) ? readdirSync(mailDir) : [];
    for (const name of names.filter((n) => n.endsWith(".eml")).sort().reverse()) {
      // Quoted-printable: soft line breaks out, =3D back to =.
      const text = readFileSync(join(mailDir, name), "utf8").replace(/=\r?\n/g, "").replace(/=3D/g, "=");
      if (!text.includes(addr)) continue;
      const m = /\/recall\/alerts\/confirm\?token=([A-Za-z0-9_-]+)/.exec(text);
      if (m?.[1] !== undefined) return m[1];
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no confirmation e-mail to ${addr} in ${mailDir} after 10 s`);
}

// Every operation of the document was called.
const missing = ops.filter((op) => !called.has(op.id)).map((op) => `${op.id} (${op.method} ${op.template})`);
if (missing.length > 0) {
  fail(`operations of the document this program does not call (add a call to clients/ts/live.ts): ${missing.join(", ")}`);
}
const calls = [...called.values()].reduce((n, s) => n + s.length, 0);
if (failures.length > 0) {
  console.error(`${failures.length} failure(s) over ${calls} calls of ${called.size} of ${ops.length} operations`);
  process.exit(1);
}
console.log(`ok: ${ops.length} operations, ${calls} calls, every answer's status documented and every JSON body valid`);
