package clients

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// plantedDocument writes edge/openapi.json with one incompatible change the
// server does not follow: Health's records, an integer the node sends, said
// to be a string. It returns the file's path.
func plantedDocument(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "edge", "openapi.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	records, ok := dig(doc, "components", "schemas", "Health", "properties", "records").(map[string]any)
	if !ok {
		t.Fatal("edge/openapi.json has no components.schemas.Health.properties.records to change; plant the change in another field")
	}
	records["type"] = "string"
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "openapi.json")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// dig returns the value at keys in nested JSON objects, or nil.
func dig(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// TestPlantedChange proves that the client tests catch a document changed
// incompatibly while the server still answers as before: a Go client
// generated from the planted document fails to decode GET /health, and
// the TypeScript program checking answers against it exits 1 naming
// getHealth.
func TestPlantedChange(t *testing.T) {
	n := startNode(t)
	doc := plantedDocument(t, t.TempDir())

	t.Run("Go", func(t *testing.T) {
		if _, err := exec.LookPath("go"); err != nil {
			t.Skip("no go on PATH to generate the planted client with")
		}
		// Inside the module, so that it builds with its requirements; a
		// directory named with _ is outside ./... should one be left over.
		dir, err := os.MkdirTemp(".", "_planted")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.RemoveAll(dir) })
		overlay, err := filepath.Abs("overlay.yaml")
		if err != nil {
			t.Fatal(err)
		}
		cfg := "package: main\noutput: " + filepath.Join(dir, "client.gen.go") +
			"\ngenerate:\n  models: true\n  client: true\noutput-options:\n  overlay:\n    path: " + overlay + "\n"
		if err := os.WriteFile(filepath.Join(dir, "oapi-codegen.yaml"), []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("go", "tool", "oapi-codegen", "-config", filepath.Join(dir, "oapi-codegen.yaml"), doc).CombinedOutput(); err != nil {
			t.Fatalf("oapi-codegen on the planted document: %v\n%s", err, out)
		}
		main := `package main

import (
	"context"
	"fmt"
	"os"
)

func main() {
	c, err := NewClientWithResponses(os.Args[1])
	if err == nil {
		_, err = c.GetHealthWithResponse(context.Background())
	}
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
}
`
		if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(main), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command("go", "run", "./"+filepath.Base(dir), n.url).CombinedOutput()
		if err == nil || !strings.Contains(string(out), "records") {
			t.Fatalf("the client generated from the planted document read GET /health without an error naming records (err %v):\n%s", err, out)
		}
		t.Logf("the planted Go client fails as it should: %s", strings.TrimSpace(string(out)))
	})

	t.Run("TypeScript", func(t *testing.T) {
		program := filepath.Join("..", "ts", "out", "live.js")
		if _, err := os.Stat(program); err != nil {
			if os.Getenv("RAPPEL_CI") != "" {
				t.Fatalf("no %s (RAPPEL_CI is set): make clients-test compiles it", program)
			}
			t.Skipf("no %s: make clients-test compiles it", program)
		}
		out, err := runTypeScript(t, n, program, []string{"RAPPEL_OPENAPI=" + doc})
		if err == nil || !strings.Contains(string(out), "FAIL getHealth answered 200 with a body the schema refuses: data/records must be string") {
			t.Fatalf("the TypeScript program passed answers the planted document refuses (err %v):\n%s", err, out)
		}
	})
}
