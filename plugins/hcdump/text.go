package hcdump

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// unquote removes the literal quotes the dump wrapped some values in until
// 2024: a pair around the whole value (`"Unauthorized products may pose
// serious health risks"`), or a lone opening quote with no other quote in
// the value. A value that only starts with a quoted name (`"Festin" soft
// cheese`) keeps its quotes.
func unquote(s string) string {
	if len(s) < 2 || s[0] != '"' {
		return s
	}
	inner := s[1:]
	if strings.HasSuffix(inner, `"`) {
		inner = inner[:len(inner)-1]
		if !strings.Contains(inner, `"`) {
			return strings.TrimSpace(inner)
		}
		return s
	}
	if !strings.Contains(inner, `"`) {
		return strings.TrimSpace(inner)
	}
	return s
}

// sentenceStarts are words that begin the sentences of the agencies'
// advice ("What you should do"), in English and French, as written at the
// start of a sentence. A capital glued to a lower-case letter
// ("productsDo") is taken for a lost paragraph break only when its word is
// one of these, or starts a sentence elsewhere in the same text: a brand
// written in one word ("SharkNinja", "DeckWise") is never split.
var sentenceStarts = wordSet(
	// English: function words and the advice's verbs and subjects.
	"A", "All", "Also", "Always", "Any", "As", "Ask", "Avoid", "Be", "Call", "Check", "Consult",
	"Consumers", "Contact", "Continue", "Discard", "Dispose", "Do", "Don't", "Even", "Find",
	"Follow", "Food", "For", "Health", "How", "If", "In", "Inspect", "It", "Keep", "Learn",
	"Look", "Monitor", "More", "Never", "Note", "Only", "Parents", "Patients", "People",
	"Please", "Read", "Recalled", "Register", "Remove", "Report", "Retailers", "Return",
	"Review", "See", "Seek", "Sign", "Speak", "Stay", "Stop", "Store", "Symptoms", "Take",
	"Talk", "The", "These", "This", "Throw", "To", "Until", "Use", "Users", "Verify", "View",
	"Visit", "Wear", "What", "When", "Where", "Why", "You", "Your",
	// French.
	"Appelez", "Au", "Cessez", "Ce", "Ces", "Cette", "Communiquez", "Conservez", "Consultez",
	"Continuez", "Demandez", "Des", "Discutez", "En", "Gardez", "Il", "Informez", "Jetez",
	"La", "Le", "Les", "Lisez", "Ne", "Parlez", "Pour", "Rapportez", "Retournez", "Santé",
	"Si", "Signalez", "Suivez", "Veuillez", "Visitez", "Vous", "Vérifiez", "Évitez",
)

// mixedCaseNames are names written with a capital inside, which the glue
// rule must never split even where their second part is a word of
// sentenceStarts.
var mixedCaseNames = wordSet("eBay", "iPad", "iPhone", "iPod", "iMac", "iCloud", "iOS", "macOS",
	"McCain", "McDonald", "PowerBook", "YouTube", "WeCheck", "myHealth")

func wordSet(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// restoreParagraphs puts back the paragraph breaks the dump lost when it
// stripped the paragraphs of a text without a separator ("…your
// pharmacy.Consult a health care…", "…recalled productsDo not consume…").
// A glue point is a capitalized word (a capital, then lower-case letters,
// then no letter) written right after
//
//   - a period that ends a word of two or more letters or digits, or a
//     one-letter abbreviation ("p.m."), possibly closed by a parenthesis or
//     quote: the period says a sentence ended; or
//   - a lower-case word of two or more letters, when the capitalized word
//     is a sentence start (sentenceStarts, or a word that starts a sentence
//     elsewhere in the same text): two words written as one, as brands are
//     ("SharkNinja", "McCain"), never split otherwise.
//
// A word of mixedCaseNames, and a capitalized word followed by a period
// and a lower-case letter (a domain: "www.Canada.ca"), are never glue
// points. A glue
// point becomes ". " after a letter and " " after a period. It returns the
// text and the number of glue points restored.
func restoreParagraphs(s string) (string, int) {
	points := gluePoints(s)
	if len(points) == 0 {
		return s, 0
	}
	var b strings.Builder
	last := 0
	for _, i := range points {
		b.WriteString(s[last:i])
		if s[i-1] == '.' {
			b.WriteByte(' ')
		} else {
			b.WriteString(". ")
		}
		last = i
	}
	b.WriteString(s[last:])
	return b.String(), len(points)
}

// gluePoints returns the offsets in s of the capitalized words glued to the
// sentence before them (see restoreParagraphs).
func gluePoints(s string) []int {
	var starts map[string]bool // the text's own sentence starts, read on first need
	var points []int
	for i := 1; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if !unicode.IsUpper(r) {
			i += size
			continue
		}
		word := capitalWord(s[i:])
		if word == "" || !glued(s, i, word, &starts) {
			i += size
			continue
		}
		points = append(points, i)
		i += len(word)
	}
	return points
}

// capitalWord returns the capitalized word s starts with (a capital and at
// least one lower-case letter, ending at a non-letter), or "".
func capitalWord(s string) string {
	_, size := utf8.DecodeRuneInString(s)
	end := size
	for end < len(s) {
		r, sz := utf8.DecodeRuneInString(s[end:])
		if unicode.IsLower(r) || r == '\'' && end+sz < len(s) && s[end+sz] == 't' {
			end += sz
			continue
		}
		if unicode.IsLetter(r) {
			return "" // a capital inside: a name ("LoGest"), not a word
		}
		break
	}
	if end == size {
		return ""
	}
	if rest := s[end:]; len(rest) > 1 && rest[0] == '.' && isLower(rest[1:]) {
		return "" // a domain label: "Canada.ca"
	}
	return s[:end]
}

// glued reports whether word, at s[i:], starts a sentence glued to what
// precedes it (see restoreParagraphs). starts caches the text's own
// sentence starts.
func glued(s string, i int, word string, starts *map[string]bool) bool {
	if inName(s, i) {
		return false
	}
	if s[i-1] == '.' {
		return endsWord(s[:i-1])
	}
	left := lowerRun(s[:i])
	if utf8.RuneCountInString(left) < 2 {
		return false
	}
	if c, _ := utf8.DecodeLastRuneInString(s[:i-len(left)]); unicode.IsLetter(c) {
		return false // the letters before are not all lower case: "SharkNinja"
	}
	if sentenceStarts[word] {
		return true
	}
	if *starts == nil {
		*starts = ownStarts(s)
	}
	return (*starts)[word]
}

// inName reports whether the word at s[i:] completes a name of
// mixedCaseNames.
func inName(s string, i int) bool {
	for name := range mixedCaseNames {
		for j := 1; j < len(name); j++ {
			if i-j >= 0 && strings.HasPrefix(s[i-j:], name) && (i-j == 0 || !isLetter(s[i-j-1:i-j])) {
				return true
			}
		}
	}
	return false
}

// endsWord reports whether s ends with a word of two or more letters or
// digits, or a one-letter abbreviation ("p.m"), possibly closed by a
// parenthesis or quote: what a sentence's final period follows.
func endsWord(s string) bool {
	s = strings.TrimRight(s, `)"'”’`)
	n := 0
	for n < len(s) {
		r, size := utf8.DecodeLastRuneInString(s[:len(s)-n])
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			break
		}
		n += size
	}
	switch {
	case n == 0:
		return false
	case utf8.RuneCountInString(s[len(s)-n:]) >= 2:
		return true
	}
	return len(s) > n && s[len(s)-n-1] == '.'
}

// lowerRun returns the lower-case letters s ends with.
func lowerRun(s string) string {
	n := 0
	for n < len(s) {
		r, size := utf8.DecodeLastRuneInString(s[:len(s)-n])
		if !unicode.IsLower(r) {
			break
		}
		n += size
	}
	return s[len(s)-n:]
}

// isLetter reports whether s starts with a letter.
func isLetter(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsLetter(r)
}

// isLower reports whether s starts with a lower-case letter.
func isLower(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsLower(r)
}

// ownStarts returns the capitalized words that start a sentence of s: its
// first word, a word after ". ", "! ", "? " or ": ", and a word glued to a
// period that ends a word (which restoreParagraphs separates).
func ownStarts(s string) map[string]bool {
	out := map[string]bool{}
	add := func(t string) {
		t = strings.TrimLeft(t, `"“(«' `)
		if w := capitalWord(t); w != "" {
			out[w] = true
		}
	}
	add(s)
	for i := 0; i < len(s); i++ {
		switch {
		case i+1 < len(s) && s[i+1] == ' ' && strings.IndexByte(".!?:", s[i]) >= 0:
			add(s[i+2:])
		case s[i] == '.' && endsWord(s[:i]):
			add(s[i+1:])
		}
	}
	return out
}
