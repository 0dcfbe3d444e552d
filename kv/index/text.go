package index

import (
	"hash/maphash"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"
	"github.com/kljensen/snowball/french"
	"golang.org/x/text/unicode/norm"

	"github.com/rappel-ca/rappel"
)

// Streams of the text index. English text is indexed with English stems,
// French text with French stems; language-neutral text (names, firms,
// identifiers) goes into both, so a query word is looked up as its English
// stem in the English stream and its French stem in the French one.
const (
	streamEN = 0
	streamFR = 1
)

// tokens splits s into lower-case words of letters and digits. Everything
// else (spaces, punctuation, apostrophes, dashes) separates words, so
// "F-150" is two tokens and "l'huile" is "l" and "huile".
func tokens(s string, fn func(word string)) {
	start := -1
	for i, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			fn(s[start:i])
			start = -1
		}
	}
	if start >= 0 {
		fn(s[start:])
	}
}

// analyzer turns words into index terms, caching each distinct word of the
// corpus: there are far fewer distinct words than words, and stemming is
// the cost.
type analyzer struct {
	mu     sync.RWMutex
	cache  [2]map[string]forms
	frozen atomic.Bool // set once the index is built; queries are not cached
	// recent holds the forms of words queries asked for once the index
	// is built, a word per slot of its hash, the last one asked for: a
	// bounded cache, so that the words every search repeats (and those
	// of a client sending the same expensive search again and again,
	// which is estimated each time) are stemmed once.
	recent [2][recentForms]atomic.Pointer[recentForm]
}

// recentForms is the number of slots of analyzer.recent per stream.
const recentForms = 4096

type recentForm struct {
	word string
	f    forms
}

// forms are a word's index terms. French words have two: the stem of the
// accented word, folded (accurate: "rappelées" and "rappelé" meet at
// "rappel"), and the stem of the folded word (what a client typing without
// accents gets: "securite" meets "sécurité" at "securit"). Both are indexed
// at the same position, and a query word matches either of its own.
type forms struct{ main, alt string }

func newAnalyzer() *analyzer {
	return &analyzer{cache: [2]map[string]forms{{}, {}}}
}

// term returns the main index term of word in stream.
func (a *analyzer) term(stream int, word string) string { return a.forms(stream, word).main }

// forms returns word's index terms in stream: lower-cased, stemmed in the
// stream's language, accents folded; alt is "" when it equals main.
func (a *analyzer) forms(stream int, word string) forms {
	a.mu.RLock()
	f, ok := a.cache[stream][word]
	a.mu.RUnlock()
	if ok {
		return f
	}
	slot := &a.recent[stream][maphash.String(recentSeed, word)%recentForms]
	if r := slot.Load(); r != nil && r.word == word {
		return r.f
	}
	lw := strings.ToLower(word)
	switch {
	case rappel.IsDigits(lw) || utf8.RuneCountInString(lw) <= maxUnstemmed:
		f.main = fold(lw)
	case stream == streamEN:
		f.main = english.Stem(fold(lw), false)
	default:
		f.main = frenchPlural(fold(french.Stem(lw, false)))
		if alt := frenchPlural(french.Stem(fold(lw), false)); alt != f.main {
			f.alt = alt
		}
	}
	if a.frozen.Load() {
		slot.Store(&recentForm{word: strings.Clone(word), f: f})
		return f
	}
	a.mu.Lock()
	a.cache[stream][strings.Clone(word)] = f
	a.mu.Unlock()
	return f
}

var recentSeed = maphash.MakeSeed()

// stem returns the main form of a folded, lower-case word in stream, as
// forms does, without the cache and the second French form.
func stem(stream int, w string) string {
	switch {
	case rappel.IsDigits(w) || utf8.RuneCountInString(w) <= maxUnstemmed:
		return w
	case stream == streamEN:
		return english.Stem(w, false)
	}
	return frenchPlural(fold(french.Stem(w, false)))
}

// maxUnstemmed is the longest word, in characters, that is indexed and
// matched as it is: the stemmers take a short word for a longer one's
// root and cut it ("aed" became "a", so a search for AED matched every
// "a"), and the short words of notices are acronyms (AED, ABS, SUV),
// codes and whole words that have no suffix to remove.
const maxUnstemmed = 3

// frenchPlural removes the plural -s or -x the French stemmer leaves on
// a stem ending in -us or -ux of four characters or more ("pneus",
// "feux", "bijoux"), so that the plural meets the singular; the stemmer
// removes every other plural itself ("jouets", "gâteaux"). A singular
// such as "virus" loses its s too, in records and queries alike.
func frenchPlural(stem string) string {
	if len(stem) >= 4 && (strings.HasSuffix(stem, "us") || strings.HasSuffix(stem, "ux")) {
		return stem[:len(stem)-1]
	}
	return stem
}

// fold removes diacritics and expands ligatures, so that "élevé" and
// "eleve" meet and "œufs" is "oeufs".
func fold(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return s
	}
	var b strings.Builder
	for _, r := range norm.NFD.String(s) {
		switch {
		case unicode.Is(unicode.Mn, r):
		case r == 'œ':
			b.WriteString("oe")
		case r == 'æ':
			b.WriteString("ae")
		case r == 'ß':
			b.WriteString("ss")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
