package rappel

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// The documentation is read in a browser on the forge, where a relative link
// or an #anchor that points nowhere is a dead end. This test holds every
// relative link of README.md, RATIONALE.md and docs/*.md to a file of the
// repository and, when it names one, to a heading of that file.

// mdLink matches an inline markdown link or image: [text](target).
var mdLink = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)\)`)

// inlineCode matches a code span, whose text is not markdown.
var inlineCode = regexp.MustCompile("`[^`]*`")

func TestDocs_RelativeLinksResolve(t *testing.T) {
	files := docFiles(t)
	anchors := map[string]map[string]bool{}
	anchorsOf := func(path string) (map[string]bool, error) {
		if a, ok := anchors[path]; ok {
			return a, nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		anchors[path] = headingAnchors(string(b))
		return anchors[path], nil
	}
	checked := 0
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range markdownLinks(string(b)) {
			if err := resolveLink(file, l.target, anchorsOf); err != nil {
				t.Errorf("%s:%d: link %q: %v", file, l.line, l.target, err)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatalf("no relative links found in %v: the test reads nothing", files)
	}
}

// TestDocs_HeadingAnchors holds headingAnchors to the forge's rule, so that
// the link test checks what a reader's click does.
func TestDocs_HeadingAnchors(t *testing.T) {
	got := headingAnchors("# Rappel\n## Searching: GET /recall\n## 3 a.m.\n" +
		"## Which build is running: `rappel version`\n```sh\n# not a heading\n```\n" +
		"## Routes\n## Routes\n### Why may a VIN have a wrong \"check digit\"?\n## Café, crème\n")
	for _, want := range []string{"rappel", "searching-get-recall", "3-am", "which-build-is-running-rappel-version",
		"routes", "routes-1", "why-may-a-vin-have-a-wrong-check-digit", "café-crème"} {
		if !got[want] {
			t.Errorf("no anchor %q among %v", want, got)
		}
	}
	if got["not-a-heading"] {
		t.Errorf("a comment in a code block was taken for a heading")
	}
}

// docFiles lists the documentation whose links are checked.
func docFiles(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) == 0 {
		t.Fatal("docs/*.md matches no file; run the test from the repository's root")
	}
	return append([]string{"README.md", "RATIONALE.md", "BENCHMARKS.md", "CONTRIBUTING.md"}, docs...)
}

// link is one relative link target and the line it is on.
type link struct {
	target string
	line   int
}

// markdownLinks returns the relative links of a markdown text: not those in
// code blocks or code spans, not absolute URLs.
func markdownLinks(text string) []link {
	var links []link
	for i, line := range markdownLines(text) {
		line = inlineCode.ReplaceAllString(line, "")
		for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			links = append(links, link{target: target, line: i + 1})
		}
	}
	return links
}

// markdownLines returns text's lines with those inside fenced code blocks
// blanked, so that line numbers stay those of the file.
func markdownLines(text string) []string {
	lines := strings.Split(text, "\n")
	fenced := false
	for i, line := range lines {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			lines[i] = ""
			continue
		}
		if fenced {
			lines[i] = ""
		}
	}
	return lines
}

// resolveLink checks that target, a link of the file from, names a file of
// the repository and, after a #, one of its headings.
func resolveLink(from, target string, anchorsOf func(string) (map[string]bool, error)) error {
	path, anchor, _ := strings.Cut(target, "#")
	if path == "" {
		path = from
	} else {
		path = filepath.Join(filepath.Dir(from), path)
	}
	info, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("%s does not exist", path)
	}
	if anchor == "" {
		return nil
	}
	if info.IsDir() || !strings.HasSuffix(path, ".md") {
		return fmt.Errorf("#%s: %s is not a markdown file, whose headings an anchor could name", anchor, path)
	}
	anchors, err := anchorsOf(path)
	if err != nil {
		return err
	}
	if !anchors[anchor] {
		return fmt.Errorf("%s has no heading whose anchor is #%s", path, anchor)
	}
	return nil
}

// headingAnchors returns the anchors the forge gives the headings of a
// markdown text: lower case, letters, digits, hyphens and underscores kept,
// spaces made hyphens, everything else dropped, and -1, -2... after a
// repeated one.
func headingAnchors(text string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	for _, line := range markdownLines(text) {
		if !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.TrimLeft(line, "#")
		if !strings.HasPrefix(title, " ") {
			continue
		}
		slug := slugOf(strings.TrimSpace(title))
		if n := seen[slug]; n > 0 {
			anchors[fmt.Sprintf("%s-%d", slug, n)] = true
		} else {
			anchors[slug] = true
		}
		seen[slug]++
	}
	return anchors
}

// slugOf is the anchor of one heading's text.
func slugOf(title string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(title) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}
