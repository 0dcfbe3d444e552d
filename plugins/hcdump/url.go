package hcdump

import (
	"net/url"
	"strings"
)

// site is the recalls site every notice of the dump lives on, which its
// relative addresses ("/en/alert-recall/…", "/fr/node/73841") are
// relative to.
var site = &url.URL{Scheme: "https", Host: "recalls-rappels.canada.ca", Path: "/"}

// absoluteURL returns the absolute web address a URL value of the dump
// means: an absolute http(s) address as it is; a path, with or without its
// leading slash, on the recalls site; a scheme-relative "//host/path" or a
// bare "host/path" over https. ok is false for anything else (another
// scheme, a value that does not parse), which is no address to give a
// client.
func absoluteURL(raw string) (abs string, ok bool) {
	if raw == "" {
		return "", true
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", false
	}
	switch {
	case u.Scheme == "https" || u.Scheme == "http":
		if u.Host == "" {
			return "", false
		}
		return raw, true
	case u.Scheme != "":
		return "", false
	case u.Host != "":
		u.Scheme = "https"
		return u.String(), true
	case looksLikeHost(u.Path):
		return absoluteURL("https://" + raw)
	}
	return site.ResolveReference(u).String(), true
}

// looksLikeHost reports whether a relative path starts with a host name
// ("recalls-rappels.canada.ca/en/…") rather than a path segment: its first
// segment ends in a top-level domain the agencies' sites use, which a page
// name ("recall.php") does not.
func looksLikeHost(path string) bool {
	if strings.HasPrefix(path, "/") {
		return false
	}
	first, _, _ := strings.Cut(path, "/")
	i := strings.LastIndexByte(first, '.')
	if i <= 0 || i == len(first)-1 {
		return false
	}
	switch tld := strings.ToLower(first[i+1:]); tld {
	case "ca", "com", "org", "net", "gov":
		return true
	}
	return false
}
