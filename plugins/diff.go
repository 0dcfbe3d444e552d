package plugins

import (
	"fmt"
	"slices"
	"sort"

	"github.com/rappel-ca/rappel"
)

// DefaultMaxChange is the share of the records both plugins make that a
// candidate may change in any one compared field and still be activated
// without an operator's approval: a parser fix touches a few records, a
// plugin that rewrites every hazard sentence touches them all.
const DefaultMaxChange = 0.05

// maxDiffExamples is how many record_ids a DiffSummary names per field.
const maxDiffExamples = 3

// FieldChange is how many of the records both plugins made differ in one
// field, with a few of their record_ids.
type FieldChange struct {
	Field    string   `json:"field"`
	Changed  int      `json:"changed"`
	Examples []string `json:"examples"`
}

// DiffSummary compares what two plugins made of the same payload, field
// by field: Compared records have a record_id both made; Gained are the
// candidate's alone and Lost the active plugin's alone.
type DiffSummary struct {
	Compared       int           `json:"compared"`
	Gained         int           `json:"gained"`
	Lost           int           `json:"lost"`
	GainedExamples []string      `json:"gained_examples"`
	LostExamples   []string      `json:"lost_examples"`
	Fields         []FieldChange `json:"fields"`
}

// diffField is a compared field: its name and whether two records differ
// in it.
type diffField struct {
	name    string
	differs func(a, b *rappel.Record) bool
}

// diffFields are the fields a reader acts on: what the recall is, what is
// wrong, what to do, and when. Fields only rearranged by a parser fix
// (URLs, images) are left out.
var diffFields = []diffField{
	{"title_en", func(a, b *rappel.Record) bool { return text(a.Translations.EN).Title != text(b.Translations.EN).Title }},
	{"title_fr", func(a, b *rappel.Record) bool { return text(a.Translations.FR).Title != text(b.Translations.FR).Title }},
	{"hazard_description", func(a, b *rappel.Record) bool {
		return text(a.Translations.EN).HazardDescription != text(b.Translations.EN).HazardDescription ||
			text(a.Translations.FR).HazardDescription != text(b.Translations.FR).HazardDescription
	}},
	{"what_to_do", func(a, b *rappel.Record) bool {
		return text(a.Translations.EN).WhatToDo != text(b.Translations.EN).WhatToDo ||
			text(a.Translations.FR).WhatToDo != text(b.Translations.FR).WhatToDo
	}},
	{"allergens", func(a, b *rappel.Record) bool { return !slices.Equal(a.Allergens, b.Allergens) }},
	{"units_affected", func(a, b *rappel.Record) bool {
		return (a.UnitsAffected == nil) != (b.UnitsAffected == nil) || a.UnitsAffected != nil && *a.UnitsAffected != *b.UnitsAffected
	}},
	{"dates", func(a, b *rappel.Record) bool { return a.EventDate != b.EventDate || a.RecallDate != b.RecallDate }},
	{"recall_type", func(a, b *rappel.Record) bool { return a.RecallType != b.RecallType }},
	{"agency", func(a, b *rappel.Record) bool { return a.Agency != b.Agency }},
	{"category", func(a, b *rappel.Record) bool { return a.Category != b.Category }},
}

// text returns t, or an empty translation for a language a record lacks.
func text(t *rappel.Translation) *rappel.Translation {
	if t == nil {
		return &rappel.Translation{}
	}
	return t
}

// Diff compares the candidate's records with the active plugin's on the
// same payload, field by field, matching records by record_id. Examples
// are the smallest record_ids, so that a summary is the same run after run.
func Diff(active, candidate []*rappel.Record) DiffSummary {
	before := make(map[string]*rappel.Record, len(active))
	for _, r := range active {
		before[r.RecordID] = r
	}
	d := DiffSummary{GainedExamples: []string{}, LostExamples: []string{}, Fields: make([]FieldChange, len(diffFields))}
	changed := make([][]string, len(diffFields))
	seen := make(map[string]bool, len(candidate))
	var gained []string
	for _, c := range candidate {
		seen[c.RecordID] = true
		a, ok := before[c.RecordID]
		if !ok {
			gained = append(gained, c.RecordID)
			continue
		}
		d.Compared++
		for i, f := range diffFields {
			if f.differs(a, c) {
				changed[i] = append(changed[i], c.RecordID)
			}
		}
	}
	var lost []string
	for id := range before {
		if !seen[id] {
			lost = append(lost, id)
		}
	}
	d.Gained, d.GainedExamples = len(gained), examples(gained)
	d.Lost, d.LostExamples = len(lost), examples(lost)
	for i, f := range diffFields {
		d.Fields[i] = FieldChange{Field: f.name, Changed: len(changed[i]), Examples: examples(changed[i])}
	}
	return d
}

// examples returns the first few of ids in order.
func examples(ids []string) []string {
	sort.Strings(ids)
	return append([]string{}, ids[:min(len(ids), maxDiffExamples)]...)
}

// Exceeds says which field changed in more than maxChange of the compared
// records, in a phrase that completes "the candidate was held: ", or ""
// when none did. Gained and lost records are Accept's to judge.
func (d DiffSummary) Exceeds(maxChange float64) string {
	if d.Compared == 0 {
		return ""
	}
	for _, f := range d.Fields {
		if share := float64(f.Changed) / float64(d.Compared); share > maxChange {
			return fmt.Sprintf("it changed the %s of %d of the %d records both plugins made from the same input (%.1f%%, more than the %.1f%% allowed without approval), %s among them",
				f.Field, f.Changed, d.Compared, 100*share, 100*maxChange, f.Examples[0])
		}
	}
	return ""
}
