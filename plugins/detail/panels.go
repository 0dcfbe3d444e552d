package detail

import (
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/rappel-ca/rappel/plugins/guest"
)

// Panel names, as documents write them (compared in lower case). The
// detail API's shape names its panels after the site's page sections; the
// older shape has summary, details, what_to_do, product_<n> and images.
const (
	panelSummary      = "summary"
	panelBasicDetails = "basic_details"
	panelDetails      = "details" // key/value lines in the older shape, prose in the API's
	panelIssue        = "cms_issue_problem"
	panelReason       = "cms_reason_reason_recall"
	panelConsumer     = "cms_who_what_consumer"
	panelAffected     = "cms_who_what_affected"
	panelIDNumbers    = "id_numbers"
	panelImages       = "images"
	panelWhatToDo     = "what_to_do" // the older shape's
	productPrefix     = "product_"
)

var (
	// whatToDoPanels give what_to_do, the first with text.
	whatToDoPanels = []string{panelConsumer, panelWhatToDo}
	// affectedPanels give product_description.
	affectedPanels = []string{panelAffected}
	// hazardPanels give hazard_description, joined; the summary only
	// when none of them has text.
	hazardPanels = []string{panelIssue, panelReason, panelDetails}
	// keyValuePanels hold "<b>Key:</b> value" lines of details.
	keyValuePanels = []string{panelBasicDetails, panelDetails, panelIDNumbers}
)

// knownPanels are the panel names the normalizer knows besides
// product_<n>: those it reads, and those known to hold nothing a record has
// a field for (the contacts and links at the end of a notice, and a
// background the product panels repeat). Any other is reported.
var knownPanels = map[string]bool{
	panelSummary: true, panelBasicDetails: true, panelDetails: true, panelIssue: true,
	panelReason: true, panelConsumer: true, panelAffected: true, panelIDNumbers: true,
	panelImages: true, panelWhatToDo: true,
	"cms_product_details_background": true, "more_information": true,
	"media_enquiries": true, "public_enquiries": true,
}

// panelName is a panelName in the form it is compared in.
func panelName(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

// productNumber returns n for a panel named product_<n>, in any case.
func productNumber(name string) (int, bool) {
	num, ok := strings.CutPrefix(panelName(name), productPrefix)
	if !ok || num == "" || len(num) > 6 || strings.Trim(num, "0123456789") != "" {
		return 0, false
	}
	k, err := strconv.Atoi(num)
	return k, err == nil
}

// checkPanels reports, once each, the document's panels the normalizer
// does not know: their content reaches no record, and an upstream change of
// names must not pass as documents without data.
func (n *notice) checkPanels(d *document, file string) {
	var seen []string
	for _, p := range d.Panels {
		name := panelName(p.Name)
		if knownPanels[name] || slices.Contains(seen, name) {
			continue
		}
		if _, ok := productNumber(name); ok {
			continue
		}
		seen = append(seen, name)
		if name == "" {
			n.problem("%s has a panel without a panelName (titled %q); it was left out.", file, truncate(guest.CleanText(p.Title)))
			continue
		}
		n.problem("%s has a panel %q this normalizer does not know; it was left out.", file, truncate(strings.TrimSpace(p.Name)))
	}
}

// hazard is the notice's hazard: the issue, the reason for the recall and
// a details panel in prose, in that order and without repeats; when none
// has text, the summary, which is the hazard in the older shape and
// otherwise sums up the others.
func (d *document) hazard() string {
	var parts []string
	for _, name := range hazardPanels {
		p := d.panel(name)
		if p == nil || name == panelDetails && len(p.pairs()) > 0 {
			continue // key/value details are data, not prose
		}
		if t := guest.CleanText(p.Text); t != "" && !slices.Contains(parts, t) {
			parts = append(parts, t)
		}
	}
	if len(parts) == 0 {
		return d.firstText(panelSummary)
	}
	return joinSentences(parts)
}

// joinSentences joins texts with a space, ending each but the last with a
// full stop when it has no closing punctuation, so that a label such as
// "Chemical - lead" does not run into the next sentence.
func joinSentences(parts []string) string {
	var b strings.Builder
	for i, p := range parts {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(p)
		if last, _ := utf8.DecodeLastRuneInString(p); i < len(parts)-1 && !strings.ContainsRune(".!?:;…", last) {
			b.WriteByte('.')
		}
	}
	return b.String()
}
