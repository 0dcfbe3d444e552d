package clients

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// adminKey is the node's --admin-key: 32 characters, the shortest a node
// takes without --admin-key-allow-short.
const adminKey = "clients-test-admin-key-0123456789"

// node is a live rappel serve process on 127.0.0.1 with a data dir of its
// own, the embedded bundle and an issued key.
type node struct {
	url     string
	key     string
	mailDir string
}

// binary is the rappel binary the tests run: CLIENTS_RAPPEL_BIN (not
// RAPPEL_…, which rappel reads as its own settings), or bin/rappel of
// the checkout (make clients-test builds it first). Without one the tests
// skip, and fail under RAPPEL_CI.
func binary(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("CLIENTS_RAPPEL_BIN")
	if bin == "" {
		bin = filepath.Join("..", "..", "bin", "rappel")
	}
	if _, err := os.Stat(bin); err != nil {
		if os.Getenv("RAPPEL_CI") != "" {
			t.Fatalf("no rappel binary at %s (RAPPEL_CI is set): run make clients-test, which builds it", bin)
		}
		t.Skipf("no rappel binary at %s: run make clients-test, or set CLIENTS_RAPPEL_BIN", bin)
	}
	abs, err := filepath.Abs(bin)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// startNode issues a key with `rappel keys add`, as docs/api.md says, then
// starts `rappel serve` on that data dir with the admin key, e-mails
// written to a mail dir, webhooks allowed to post to loopback and the live
// feeds off (the bundle's data, no network), and waits for it to serve.
func startNode(t *testing.T) *node {
	t.Helper()
	bin := binary(t)
	dir := t.TempDir()
	data, mail := filepath.Join(dir, "data"), filepath.Join(dir, "mail")
	keys := exec.Command(bin, "keys", "add", "--plan", "pro", "--label", "client test", "--data-dir", data)
	var stderr strings.Builder
	keys.Stderr = &stderr
	out, err := keys.Output()
	if err != nil {
		t.Fatalf("rappel keys add: %v\n%s%s", err, out, stderr.String())
	}
	key, _, _ := strings.Cut(string(out), "\n")
	if !strings.HasPrefix(key, "rk_") {
		t.Fatalf("rappel keys add printed no key first:\n%s", out)
	}
	// The log goes to a file, read while the node writes it.
	logPath := filepath.Join(dir, "serve.log")
	logs, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logs.Close()
	cmd := exec.Command(bin, "serve", "--data-dir", data, "--addr", "127.0.0.1:0", "--min-free-mib", "0",
		"--log-format", "json", "--feeds", "off", "--admin-key", adminKey, "--mail-dir", mail,
		"--webhooks-allow-http-loopback")
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	deadline := time.Now().Add(60 * time.Second)
	for {
		b, _ := os.ReadFile(logPath)
		if addr, ok := logAddr(string(b), "serving"); ok {
			return &node{url: "http://" + addr, key: key, mailDir: mail}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the node did not serve within 60 s:\n%s", b)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// logAddr returns the addr of the first JSON log line msg in logs.
func logAddr(logs, msg string) (string, bool) {
	sc := bufio.NewScanner(strings.NewReader(logs))
	for sc.Scan() {
		var l struct{ Msg, Addr string }
		if json.Unmarshal(sc.Bytes(), &l) == nil && l.Msg == msg && l.Addr != "" {
			return l.Addr, true
		}
	}
	return "", false
}

// confirmLink matches a confirmation link's token in an e-mail whose
// quoted-printable soft breaks were removed and =3D decoded.
var confirmLink = regexp.MustCompile(`/recall/alerts/confirm\?token=([A-Za-z0-9_-]+)`)

// confirmationToken waits for the confirmation e-mail to addr in the
// node's mail dir and returns its token.
func (n *node) confirmationToken(t *testing.T, addr string) string {
	t.Helper()
	for range 100 {
		names, _ := filepath.Glob(filepath.Join(n.mailDir, "*.eml"))
		slices.Sort(names)
		slices.Reverse(names)
		for _, name := range names {
			b, err := os.ReadFile(name)
			if err != nil {
				continue
			}
			text := strings.NewReplacer("=\r\n", "", "=\n", "", "=3D", "=").Replace(string(b))
			if !strings.Contains(text, addr) {
				continue
			}
			if m := confirmLink.FindStringSubmatch(text); m != nil {
				return m[1]
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("no confirmation e-mail to %s in %s after 10 s", addr, n.mailDir)
	return ""
}

// operation is one operation of the served document.
type operation struct {
	id, method, template string
	re                   *regexp.Regexp
	literals             int
	statuses             []string
}

// operations reads the document the node serves and lists its operations,
// each with the statuses it documents.
func operations(t *testing.T, url string) []operation {
	t.Helper()
	res, err := http.Get(url + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("GET /openapi.json: %d %v", res.StatusCode, err)
	}
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	methods := []string{"get", "put", "post", "delete", "patch", "options", "head", "trace"}
	param := regexp.MustCompile(`^\{.+\}$`)
	var ops []operation
	for template, item := range doc.Paths {
		for method, raw := range item {
			if !slices.Contains(methods, method) {
				continue
			}
			var op struct {
				OperationID string                     `json:"operationId"`
				Responses   map[string]json.RawMessage `json:"responses"`
			}
			if err := json.Unmarshal(raw, &op); err != nil {
				t.Fatalf("%s %s: %v", method, template, err)
			}
			o := operation{id: op.OperationID, method: strings.ToUpper(method), template: template}
			if o.id == "" {
				o.id = o.method + " " + template
			}
			segs := strings.Split(template, "/")
			for i, s := range segs {
				switch {
				case !param.MatchString(s):
					o.literals++
					segs[i] = regexp.QuoteMeta(s)
				case i == len(segs)-1:
					segs[i] = ".+"
				default:
					segs[i] = "[^/]+"
				}
			}
			o.re = regexp.MustCompile("^" + strings.Join(segs, "/") + "$")
			for s := range op.Responses {
				o.statuses = append(o.statuses, s)
			}
			ops = append(ops, o)
		}
	}
	if len(ops) == 0 {
		t.Fatal("the served document has no operations")
	}
	return ops
}

// recorder is the generated client's HTTP doer: it sends each request and
// notes which operation of the document it was and the status answered.
type recorder struct {
	ops    []operation
	mu     sync.Mutex
	called map[string][]int
	wrong  []string
}

func (r *recorder) Do(req *http.Request) (*http.Response, error) {
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	var best *operation
	for i := range r.ops {
		op := &r.ops[i]
		if op.method == req.Method && op.re.MatchString(req.URL.Path) && (best == nil || op.literals > best.literals) {
			best = op
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	what := req.Method + " " + req.URL.RequestURI()
	switch {
	case best == nil:
		r.wrong = append(r.wrong, what+": no operation of the document has this method and path")
	case !slices.Contains(best.statuses, fmt.Sprint(res.StatusCode)) && !slices.Contains(best.statuses, "default"):
		r.wrong = append(r.wrong, fmt.Sprintf("%s (%s) answered %d, which the document does not list (%s)", best.id, what, res.StatusCode, strings.Join(best.statuses, ", ")))
	}
	if best != nil {
		r.called[best.id] = append(r.called[best.id], res.StatusCode)
	}
	return res, nil
}

// check fails t unless every answer's status was documented and every
// operation of the document was called.
func (r *recorder) check(t *testing.T, program string) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, w := range r.wrong {
		t.Error(w)
	}
	var missing []string
	for _, op := range r.ops {
		if _, ok := r.called[op.id]; !ok {
			missing = append(missing, fmt.Sprintf("%s (%s %s)", op.id, op.method, op.template))
		}
	}
	slices.Sort(missing)
	if len(missing) > 0 {
		t.Errorf("operations of the document %s does not call (add a call): %s", program, strings.Join(missing, ", "))
	}
	calls := 0
	for _, s := range r.called {
		calls += len(s)
	}
	t.Logf("%d operations, %d calls", len(r.ops), calls)
}
