package match

// Classes of evidence a candidate is made of (its evidence field). A
// candidate's confidence is its class's: how often a candidate of that
// class names a notice of the item's product. The values are calibrated
// on the judged matching set (testdata/judged-match/items.tsv): the share
// of the set's candidates of the class (those a notice covers or may
// cover; one that does not cover the item's lot or year has confidence 0)
// whose notice is one the row names, smoothed toward one half by one
// candidate each way, (right + 1) / (all + 2), and rounded to two places.
// TestMatch_JudgedReal in edge recomputes the shares and fails when a
// class of five candidates or more is off by more than 0.15. A class the
// set has fewer of keeps a value set by hand, below the classes that are
// stronger evidence of the same kind. Confidence says whether the notice
// is the product's; status says what to do about it: a possible candidate
// may well be the product's notice, and still needs a person to say so.
const (
	classGTIN                 = "gtin"                    // the barcode, and the brand if given
	classGTINOtherBrand       = "gtin_other_brand"        // the barcode, under another brand
	classGTINPrefix           = "gtin_prefix"             // an in-store prefix of the barcode
	classGTINPrefixOtherBrand = "gtin_prefix_other_brand" // the same, under another brand
	classBrandModel           = "brand_model"             // the brand and a model the notice prints
	classModelOnly            = "model_only"              // a model the notice prints, no brand given
	classVehicle              = "vehicle"                 // make, model and model year
	classVehicleNoYear        = "vehicle_no_year"         // make and model, no year given
	classVehicleNear          = "vehicle_near"            // the make and a model beginning alike
	classBrandName            = "brand_name"              // the brand and half the name's words or more
	classNameOnly             = "name_only"               // every word of the name, no brand given
	classBrandOnly            = "brand_only"              // the brand, nothing else given
)

// confidences are the calibrated values, class by class.
var confidences = map[string]float64{
	classGTIN:                 0.97,
	classGTINOtherBrand:       0.6,
	classGTINPrefix:           0.9,
	classGTINPrefixOtherBrand: 0.4,
	classBrandModel:           0.96,
	classModelOnly:            0.6,
	classVehicle:              0.96,
	classVehicleNoYear:        0.85,
	classVehicleNear:          0.45,
	classBrandName:            0.93,
	classNameOnly:             0.5,
	classBrandOnly:            0.3,
}

// confidence returns the calibrated confidence of class.
func confidence(class string) float64 { return confidences[class] }

// Classes lists every class of evidence.
func Classes() []string {
	return []string{classGTIN, classGTINOtherBrand, classGTINPrefix, classGTINPrefixOtherBrand, classBrandModel, classModelOnly,
		classVehicle, classVehicleNoYear, classVehicleNear, classBrandName, classNameOnly, classBrandOnly}
}

// Confidence returns the calibrated confidence of a class of evidence.
func Confidence(class string) float64 { return confidences[class] }
