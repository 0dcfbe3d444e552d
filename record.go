package rappel

import (
	"fmt"
	"regexp"
	"strings"
	"time"
)

// Record is one recall as the API serves it. Field order and names follow the
// spec's Resources table. A field with no value is omitted when encoded, never
// sent as null.
type Record struct {
	RecordID     string       `json:"record_id"`
	RecallID     string       `json:"recall_id"`
	RecallType   string       `json:"recall_type"`
	Agency       string       `json:"agency"`
	Status       string       `json:"status"`
	EventDate    string       `json:"event_date"`
	RecallDate   string       `json:"recall_date"`
	Translations Translations `json:"translations"`
	FetchedAt    string       `json:"fetched_at"`

	URLEn                    string         `json:"url_en,omitempty"`
	URLFr                    string         `json:"url_fr,omitempty"`
	Category                 string         `json:"category,omitempty"`
	AlertType                string         `json:"alert_type,omitempty"`
	IdentificationNumber     string         `json:"identification_number,omitempty"`
	Categories               []string       `json:"categories,omitempty"`
	ProductList              []Product      `json:"product_list,omitempty"`
	HazardClass              string         `json:"hazard_class,omitempty"`
	DateModified             string         `json:"date_modified,omitempty"`
	AffectedModels           []VehicleModel `json:"affected_models,omitempty"`
	LastUpdated              string         `json:"last_updated,omitempty"`
	NotificationType         string         `json:"notification_type,omitempty"`
	System                   string         `json:"system,omitempty"`
	UnitsAffected            *int           `json:"units_affected,omitempty"`
	VehicleCategory          string         `json:"vehicle_category,omitempty"`
	VehicleSlugs             []string       `json:"vehicle_slugs,omitempty"`
	VehicleMake              string         `json:"vehicle_make,omitempty"`
	VehicleModel             string         `json:"vehicle_model,omitempty"`
	ManufacturerRecallNumber string         `json:"manufacturer_recall_number,omitempty"`
	Images                   []Image        `json:"images,omitempty"`
	ImageURL                 string         `json:"image_url,omitempty"`
	RecallClassPage          string         `json:"recall_class_page,omitempty"`
	RecallingFirm            string         `json:"recalling_firm,omitempty"`

	Allergens      []string `json:"allergens,omitempty"`
	Companies      []string `json:"companies,omitempty"`
	Distribution   []string `json:"distribution,omitempty"`
	PlaceOfOrigin  string   `json:"place_of_origin,omitempty"`
	UnitsSold      string   `json:"units_sold,omitempty"`
	TimePeriodSold string   `json:"time_period_sold,omitempty"`
	Manufacturer   string   `json:"manufacturer,omitempty"`
	Importer       string   `json:"importer,omitempty"`
	CFIAID         string   `json:"cfia_id,omitempty"`
	DIN            string   `json:"din,omitempty"`
	Municipality   string   `json:"municipality,omitempty"`
	NPN            string   `json:"npn,omitempty"`
	UPC            string   `json:"upc,omitempty"`
}

// Translations holds a record's language-dependent text, keyed by language
// code. A language may hold fewer fields than the other, or be absent.
type Translations struct {
	EN *Translation `json:"en,omitempty"`
	FR *Translation `json:"fr,omitempty"`
}

// Translation is a record's text in one language.
type Translation struct {
	Title              string `json:"title,omitempty"`
	ProductDescription string `json:"product_description,omitempty"`
	HazardDescription  string `json:"hazard_description,omitempty"`
	WhatToDo           string `json:"what_to_do,omitempty"`
	URL                string `json:"url,omitempty"`
	Category           string `json:"category,omitempty"`
	System             string `json:"system,omitempty"`
	VehicleCategory    string `json:"vehicle_category,omitempty"`
	NotificationType   string `json:"notification_type,omitempty"`
}

// Product is one element of a record's product_list. Name and UPC are always
// present (UPC may be empty when the source printed none); UPC keeps the
// source's printing, for example "0 41798 00145 9". UPCPrefix holds, in
// digits, the start every barcode of the product shares when the notice
// lists only that ("Starting with 0235278"): items sold by weight carry
// in-store codes whose last digits encode the price. Applicability is what
// its printed codes (LotCodes) say it covers, read when the sources are
// assembled (Assemble); nil when it prints none.
type Product struct {
	Name          string         `json:"name"`
	UPC           string         `json:"upc"`
	UPCPrefix     string         `json:"upc_prefix,omitempty"`
	LotCodes      []string       `json:"lot_codes,omitempty"`
	Size          string         `json:"size,omitempty"`
	Applicability *Applicability `json:"applicability,omitempty"`
}

// VehicleModel is one element of affected_models: a make, model and model
// year covered by a vehicle recall.
type VehicleModel struct {
	Make  string `json:"make"`
	Model string `json:"model"`
	Year  int    `json:"year,omitempty"`
}

// Image is one element of images.
type Image struct {
	URL   string `json:"url"`
	Title string `json:"title,omitempty"`
}

// Lang returns the record's translation in lang, or nil.
func (t Translations) Lang(lang string) *Translation {
	switch lang {
	case LangEN:
		return t.EN
	case LangFR:
		return t.FR
	}
	return nil
}

// Title returns the record's title in lang, falling back to the other
// language when lang has none.
func (r *Record) Title(lang string) string {
	if tr := r.Translations.Lang(lang); tr != nil && tr.Title != "" {
		return tr.Title
	}
	for _, tr := range []*Translation{r.Translations.EN, r.Translations.FR} {
		if tr != nil && tr.Title != "" {
			return tr.Title
		}
	}
	return ""
}

// ForLang returns a shallow copy of r whose translations hold only lang.
// An empty lang returns r itself.
func (r *Record) ForLang(lang string) *Record {
	if lang == "" {
		return r
	}
	c := *r
	switch lang {
	case LangEN:
		c.Translations = Translations{EN: r.Translations.EN}
	case LangFR:
		c.Translations = Translations{FR: r.Translations.FR}
	}
	return &c
}

var (
	recordIDPattern = regexp.MustCompile(`^[a-z0-9]+-[a-z0-9][a-z0-9._-]{0,63}$`)
	datePattern     = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)
)

// ValidDate reports whether s is a real calendar date written YYYY-MM-DD.
func ValidDate(s string) bool {
	if !datePattern.MatchString(s) {
		return false
	}
	_, err := time.Parse(time.DateOnly, s)
	return err == nil
}

// Validate reports the first reason r cannot be served: a missing required
// field, a value outside its vocabulary, or a malformed date. The reason is a
// sentence fit for a problem report.
func (r *Record) Validate() error {
	switch {
	case !recordIDPattern.MatchString(r.RecordID):
		return fmt.Errorf("record_id %q is not <source>-<id> in lower-case URL-safe characters", r.RecordID)
	case strings.TrimSpace(r.RecallID) == "":
		return fmt.Errorf("recall_id is missing")
	case !RecallTypes.Has(r.RecallType):
		return fmt.Errorf("recall_type %q is not one of %s", r.RecallType, RecallTypes)
	case !IsAgency(r.Agency):
		return fmt.Errorf("agency %q is not one of %s", r.Agency, KnownAgencies())
	case !Statuses.Has(r.Status):
		return fmt.Errorf("status %q is not one of %s", r.Status, Statuses)
	case !ValidDate(r.EventDate):
		return fmt.Errorf("event_date %q is not a YYYY-MM-DD date", r.EventDate)
	case !ValidDate(r.RecallDate):
		return fmt.Errorf("recall_date %q is not a YYYY-MM-DD date", r.RecallDate)
	case r.Translations.EN == nil && r.Translations.FR == nil:
		return fmt.Errorf("translations hold neither en nor fr")
	case r.HazardClass != "" && !HazardClasses.Has(r.HazardClass):
		return fmt.Errorf("hazard_class %q is not one of %s", r.HazardClass, HazardClasses)
	case r.UnitsAffected != nil && *r.UnitsAffected < 0:
		return fmt.Errorf("units_affected %d is negative", *r.UnitsAffected)
	}
	if _, err := time.Parse(time.RFC3339, r.FetchedAt); err != nil {
		return fmt.Errorf("fetched_at %q is not an RFC 3339 time", r.FetchedAt)
	}
	for _, d := range []struct{ name, v string }{{"date_modified", r.DateModified}, {"last_updated", r.LastUpdated}} {
		if d.v != "" && !ValidDate(d.v) {
			return fmt.Errorf("%s %q is not a YYYY-MM-DD date", d.name, d.v)
		}
	}
	for _, a := range r.Allergens {
		if !Allergens.Has(a) {
			return fmt.Errorf("allergen %q is not one of %s", a, Allergens)
		}
	}
	return nil
}
