package page

import (
	"bytes"
	"html"
	"strings"

	"github.com/rappel-ca/rappel/plugins/guest"
	xhtml "golang.org/x/net/html"
)

// node is an element or text of a parsed page.
type node = xhtml.Node

// parse parses a page as a browser does: any bytes give a tree.
func parse(b []byte) (*node, error) { return xhtml.Parse(bytes.NewReader(b)) }

// match says whether an element is the one looked for.
type match func(*node) bool

// isTag matches elements named name (lower case).
func isTag(name string) match {
	return func(n *node) bool { return n.Type == xhtml.ElementNode && n.Data == name }
}

// hasClass matches elements with class c among their classes.
func hasClass(c string) match {
	return func(n *node) bool { return n.Type == xhtml.ElementNode && classOf(n, c) }
}

// both matches elements both a and b match.
func both(a, b match) match { return func(n *node) bool { return a(n) && b(n) } }

// classOf reports whether n has class c.
func classOf(n *node, c string) bool {
	for _, f := range strings.Fields(attr(n, "class")) {
		if f == c {
			return true
		}
	}
	return false
}

// classes returns n's classes.
func classes(n *node) []string { return strings.Fields(attr(n, "class")) }

// attr returns n's attribute key, or "".
func attr(n *node, key string) string {
	if n == nil {
		return ""
	}
	for _, a := range n.Attr {
		if a.Namespace == "" && a.Key == key {
			return a.Val
		}
	}
	return ""
}

// find returns the first element below n (n excluded), in document order,
// that m matches, or nil.
func find(n *node, m match) *node {
	if n == nil {
		return nil
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if m(c) {
			return c
		}
		if f := find(c, m); f != nil {
			return f
		}
	}
	return nil
}

// findAll returns every element below n that m matches, in document order,
// without looking inside a match.
func findAll(n *node, m match) []*node {
	var out []*node
	var walk func(*node)
	walk = func(n *node) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if m(c) {
				out = append(out, c)
				continue
			}
			walk(c)
		}
	}
	if n != nil {
		walk(n)
	}
	return out
}

// children returns n's child elements.
func children(n *node) []*node {
	var out []*node
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == xhtml.ElementNode {
			out = append(out, c)
		}
	}
	return out
}

// blockTags end a line when rendered.
var blockTags = map[string]bool{
	"br": true, "p": true, "div": true, "li": true, "ul": true, "ol": true, "tr": true, "td": true,
	"th": true, "table": true, "h1": true, "h2": true, "h3": true, "h4": true, "h5": true, "h6": true,
	"hr": true, "dt": true, "dd": true, "section": true, "details": true, "summary": true, "caption": true,
}

// lines returns n's text cut at its line breaks and blocks, each line
// cleaned (guest.CleanText), empty ones left out.
func lines(n *node) []string {
	var out []string
	var b strings.Builder
	flush := func() {
		// The parser decoded the entities: escape the text again so
		// that CleanText, which decodes them, reads it as written.
		if t := guest.CleanText(html.EscapeString(b.String())); t != "" {
			out = append(out, t)
		}
		b.Reset()
	}
	var walk func(*node)
	walk = func(n *node) {
		switch n.Type {
		case xhtml.TextNode:
			b.WriteString(n.Data)
		case xhtml.ElementNode:
			if n.Data == "script" || n.Data == "style" || n.Data == "template" {
				return
			}
			block := blockTags[n.Data]
			if block {
				flush()
			}
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				walk(c)
			}
			if block {
				flush()
			}
		default:
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				walk(c)
			}
		}
	}
	if n != nil {
		walk(n)
	}
	flush()
	return out
}

// text is n's text on one line.
func text(n *node) string { return strings.Join(lines(n), " ") }

// items returns the texts of the field--item elements of a field element
// with field--items, or the field's own text when it is an item itself.
func items(field *node) []string {
	if field == nil {
		return nil
	}
	if !classOf(field, "field--items") {
		if t := text(field); t != "" {
			return []string{t}
		}
		return nil
	}
	var out []string
	for _, it := range findAll(field, hasClass("field--item")) {
		if t := text(it); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// walkElements calls fn with every element below n, in document order.
func walkElements(n *node, fn func(*node)) {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == xhtml.ElementNode {
			fn(c)
		}
		walkElements(c, fn)
	}
}
