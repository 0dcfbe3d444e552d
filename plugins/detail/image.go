package detail

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/rappel-ca/rappel"
	"github.com/rappel-ca/rappel/plugins/guest"
)

// image is one element of the images panel's data: the detail API gives
// the picture and its thumbnail, the older shape one url.
type image struct {
	FullURL  string `json:"fullUrl"`
	ThumbURL string `json:"thumbUrl"`
	URL      string `json:"url"`
	Title    string `json:"title"`
}

// images reads the images panel: the images, each its full picture, else
// its only url, else its thumbnail, a path relative to the site resolved
// against the document's address; and the first one's URL when it is an
// absolute https URL, which is all a page may embed.
func (n *notice) images(d *document, file string) ([]rappel.Image, string) {
	p := d.panel("images")
	if p == nil || len(p.Data) == 0 || string(p.Data) == "null" {
		return nil, ""
	}
	var in []image
	if err := json.Unmarshal(p.Data, &in); err != nil {
		var typ *json.UnmarshalTypeError
		why := "it is not a list of images, {fullUrl, thumbUrl, title} or {url, title}"
		if errors.As(err, &typ) && typ.Field != "" {
			why = fmt.Sprintf("its %s is a JSON %s, not a string", typ.Field, typ.Value)
		}
		n.problem("The images panel of %s was left out: %s.", file, why)
		return nil, ""
	}
	var out []rappel.Image
	base := n.base(d)
	for _, im := range in {
		if u := cmp.Or(guest.CleanText(im.FullURL), guest.CleanText(im.URL), guest.CleanText(im.ThumbURL)); u != "" {
			out = append(out, rappel.Image{URL: resolve(base, u), Title: guest.CleanText(im.Title)})
		}
	}
	if len(out) == 0 {
		return nil, ""
	}
	if u, err := url.Parse(out[0].URL); err == nil && u.Scheme == "https" && u.Host != "" {
		return out, out[0].URL
	}
	return out, ""
}

// base is what the document's relative paths resolve against: its own url
// when that is an absolute web address, the site otherwise (the detail
// API's url may be a path on it).
func (n *notice) base(d *document) *url.URL {
	if u, err := url.Parse(strings.TrimSpace(d.URL)); err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" {
		return u
	}
	return n.site
}

// resolve makes ref, an address or a path, absolute against base. What is
// no address at all is kept as written, as the older shape had it.
func resolve(base *url.URL, ref string) string {
	u, err := url.Parse(ref)
	if err != nil || u.IsAbs() {
		return ref
	}
	return base.ResolveReference(u).String()
}
