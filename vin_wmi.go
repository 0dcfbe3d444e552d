package rappel

import (
	"strings"
	"sync"
)

// vehicleKind is what a WMI's vehicles are, as far as decoding the model
// year is concerned.
type vehicleKind uint8

const (
	kindOther vehicleKind = iota // unknown WMI, trailers, motor homes
	kindLight                    // position 7 chooses the year cycle (see vinModelYear)
	kindHeavy                    // heavier trucks, buses, incomplete vehicles
	kindMoto                     // motorcycles and other powersports
)

// wmiEntry is one world manufacturer identifier.
type wmiEntry struct {
	wmi     string      // 3 characters, or 6 (positions 1-3 and 12-14) for small makers
	make    string      // as Transport Canada writes it; "" when brands share the WMI
	mfr     string      // the company the WMI is assigned to
	kind    vehicleKind // chooses the model-year rule
	country string      // set where the WMI is not in its ISO 3780 country block
	rules   []vdsRule   // brand and model patterns, in order (vin_models.go)
}

func (w *wmiEntry) kindOf() vehicleKind {
	if w == nil {
		return kindOther
	}
	return w.kind
}

// wmiGroup lists WMIs that share a make, manufacturer and kind.
type wmiGroup struct {
	make, mfr string
	kind      vehicleKind
	wmis      string // space separated
}

// Manufacturer names, shared by several groups.
const (
	mfrFord     = "Ford Motor Company"
	mfrGM       = "General Motors"
	mfrFCA      = "FCA US LLC (Stellantis)"
	mfrToyota   = "Toyota Motor Corporation"
	mfrHonda    = "Honda Motor Co."
	mfrNissan   = "Nissan Motor Co."
	mfrHyundai  = "Hyundai Motor Company"
	mfrKia      = "Kia Corporation"
	mfrMazda    = "Mazda Motor Corporation"
	mfrVW       = "Volkswagen AG"
	mfrBMW      = "BMW AG"
	mfrDaimler  = "Mercedes-Benz AG"
	mfrDTNA     = "Daimler Truck North America"
	mfrPaccar   = "PACCAR Inc"
	mfrNavistar = "Navistar"
	mfrVolvoCar = "Volvo Car Corporation"
	mfrJLR      = "Jaguar Land Rover"
	mfrSubaru   = "Subaru Corporation"
	mfrMitsu    = "Mitsubishi Motors Corporation"
	mfrSuzuki   = "Suzuki Motor Corporation"
	mfrIsuzu    = "Isuzu Motors"
	mfrTesla    = "Tesla, Inc."
)

// wmiGroups is the WMI table. The assignments are public: NHTSA's vPIC
// database lists every WMI registered for vehicles sold in the United States
// (most of which are sold in Canada too), SAE administers them, and
// manufacturers publish their VIN guides to NHTSA (49 CFR 565). Only WMIs
// whose make is not in doubt are listed; a WMI shared by several brands has
// make "" and its brand comes from the VDS (vin_models.go).
var wmiGroups = []wmiGroup{
	// Ford: 1 = USA, 2 = Canada (Oakville, St. Thomas), 3 = Mexico; A car,
	// M MPV, T truck, B bus/passenger van. 1ZV is AutoAlliance (Mustang
	// 2005-2014), NM0 Ford Otosan (Transit Connect), MAJ Ford India
	// (EcoSport). 1FD/1FC/3FR are incomplete and medium-duty trucks, whose
	// position 7 Ford writes by the light-vehicle convention all the same
	// (1FDXE45S 2001, 1FDUF5HT 2026), as GM (1GB, 1GD) and Ram (3C7) do.
	{"FORD", mfrFord, kindLight, "1FA 1FB 1FM 1FT 2FA 2FM 2FT 3FA 3FM 3FT 1ZV NM0 MAJ WF0"},
	{"FORD", mfrFord, kindLight, "1FD 1FC 3FD 3FR"},
	{"LINCOLN", mfrFord, kindLight, "1LN 2LM 3LN 5LM 5LT"},
	{"MERCURY", mfrFord, kindLight, "1ME 2ME 3ME 4M2"},

	// General Motors: 1G/2G/3G + brand digit or letter (1 Chevrolet, 2
	// Pontiac, 3 Oldsmobile, 4 Buick, 6 Cadillac, 8 Saturn; C/N Chevrolet
	// truck/MPV, T/K GMC truck/MPV, Y Cadillac MPV, M Pontiac MPV, H
	// Oldsmobile MPV), CAMI (2CN, 2CK), GM Korea (KL), Holden (6G2), NUMMI
	// (5Y2), Opel (W04, W06, W08). B/D are incomplete (chassis cabs).
	{"CHEVROLET", mfrGM, kindLight, "1G1 1GC 1GN 1GA 2G1 2GC 2GN 2CN 3G1 3GC 3GN KL1 KL7 KL8"},
	{"CHEVROLET", mfrGM, kindLight, "1GB"},
	{"GMC", mfrGM, kindLight, "1GT 1GK 1GJ 2GT 2GK 3GT 3GK"},
	{"GMC", mfrGM, kindLight, "1GD"},
	{"BUICK", mfrGM, kindLight, "1G4 2G4 3G5 5GA KL4 LRB W04"},
	{"CADILLAC", mfrGM, kindLight, "1G6 1GY 2G6 3GY W06"},
	{"PONTIAC", mfrGM, kindLight, "1G2 2G2 1GM 2CK 5Y2 6G2 KL2"},
	{"OLDSMOBILE", mfrGM, kindLight, "1G3 1GH"},
	{"SATURN", mfrGM, kindLight, "1G8 5GZ 3GS W08"},
	{"HUMMER", mfrGM, kindLight, "5GR 5GT"},
	{"HUMMER", "AM General", kindLight, "137"},
	{"DAEWOO", "Daewoo Motor", kindLight, "KLA"},

	// Chrysler/FCA/Stellantis. Until model year 2010 the second and third
	// characters name the brand (B/D Dodge, J Jeep, P Plymouth, A/C
	// Chrysler); from 2011 C3/C4/C6 are shared and position 5 names the
	// brand (see vin_models.go). ZAC (Melfi) builds the Jeep Renegade and
	// the Fiat 500X; ZFB the Ram ProMaster City and the Fiat 500L.
	{"", mfrFCA, kindLight, "1C3 1C4 1C6 2C3 2C4 3C3 3C4 3C6 ZAC ZFB"},
	{"RAM", mfrFCA, kindLight, "3C7"},
	{"CHRYSLER", mfrFCA, kindLight, "1A4 1A8 2A3 2A4 2A8 3A4 3A8 1C8 2C8 3C8"},
	{"DODGE", mfrFCA, kindLight, "1B3 1B4 1B7 2B3 2B4 2B7 3B3 3B4 3B7 1D3 1D4 1D7 1D8 2D3 2D4 2D8 3D3 3D4 3D7"},
	{"JEEP", mfrFCA, kindLight, "1J4 1J8 2J4 1JC 1JT"},
	{"PLYMOUTH", mfrFCA, kindLight, "1P3 1P4 2P4 3P3"},
	{"EAGLE", mfrFCA, kindLight, "2E3"},
	{"FIAT", mfrFCA, kindLight, "ZFA"},
	{"FIAT", mfrMazda, kindLight, "JC1"}, // 124 Spider, built by Mazda
	{"ALFA ROMEO", "Alfa Romeo", kindLight, "ZAR ZAS"},
	{"MASERATI", "Maserati", kindLight, "ZAM ZN6"},
	{"FERRARI", "Ferrari", kindLight, "ZFF"},
	{"LAMBORGHINI", "Automobili Lamborghini", kindLight, "ZHW ZPB"},

	// Toyota: J = Japan, 2 = Canada (Cambridge, Woodstock), 4/5 = USA, 3 =
	// Mexico, 7MU = Mazda Toyota Alabama, NMT = Turkey, 1NX = NUMMI.
	// Lexus: JT6/JT8 (older), JTH cars, JTJ SUVs, 2T2 RX from Cambridge,
	// 58A ES from Kentucky. JTK/JTL built Scions.
	{"TOYOTA", mfrToyota, kindLight, "JT2 JT3 JT4 JTD JTE JTM JTN 2T1 2T3 4T1 4T3 4T4 4TA 5TB 5TD 5TE 5TF 5YF 3TM 3TY 7MU NMT 1NX VNK"},
	{"LEXUS", mfrToyota, kindLight, "JT6 JT8 JTH JTJ 2T2 58A"},
	{"SCION", mfrToyota, kindLight, "JTK JTL"},
	{"HINO", "Hino Motors", kindHeavy, "5PV 2AY 2AZ JHA"},

	// Honda: 1HG/19X/5FN/5J6/5FP/7FA USA, 2HG/2HK/2HJ Canada (Alliston),
	// 3HG/3CZ Mexico, JHM/JHL Japan, SHH/SHS UK. Acura: JH4, 19U/19V/5J8/5FR
	// USA, 2HH/2HN Canada. Motorcycles JH2, 1HF (Marysville), MLH
	// (Thailand); ATVs JH3 and 478.
	{"HONDA", mfrHonda, kindLight, "JHM JHL 1HG 19X 5FN 5FP 5J6 7FA 2HG 2HK 2HJ 3HG 3CZ SHH SHS"},
	{"ACURA", mfrHonda, kindLight, "JH4 19U 19V 5J8 5FR 2HH 2HN"},
	{"HONDA", mfrHonda, kindMoto, "JH2 JH3 1HF 478 MLH"},

	// Nissan: JN Japan, 1N USA (Smyrna, Canton), 3N Mexico, 5N USA MPVs,
	// KNM Renault Samsung (Rogue 2014-2020), 4N2 Ford (Quest 1993-2002).
	// Infiniti: JNK/JNR Japan, 5N3 USA, 3PC Mexico, SJK UK (QX30); JN1,
	// JN8 and 5N1 also carry Infinitis (vin_models.go tells them apart).
	{"NISSAN", mfrNissan, kindLight, "JN1 JN6 JN8 1N4 1N6 3N1 3N6 3N8 5N1"},
	{"NISSAN", "Renault Samsung Motors", kindLight, "KNM"},
	{"NISSAN", mfrFord, kindLight, "4N2"},
	{"INFINITI", mfrNissan, kindLight, "JNK JNR 5N3 3PC SJK"},

	// Hyundai Motor Group: KMH cars, KM8 SUVs, 5NP/5NM/5NT Alabama, 2HM
	// Bromont (Quebec, 1989-1993); Genesis KMT/KMU. Kia: KNA cars, KND SUVs,
	// 5XX Georgia cars, U5Y Slovakia. 3KP (Kia Mexico) and 5XY (Kia Georgia)
	// build Hyundais too (Accent, Santa Fe Sport).
	{"HYUNDAI", mfrHyundai, kindLight, "KMH KM8 KMF 5NP 5NM 5NT 2HM"},
	{"GENESIS", mfrHyundai, kindLight, "KMT KMU"},
	{"KIA", mfrKia, kindLight, "KNA KND KNC 5XX U5Y"},
	{"", mfrKia, kindLight, "3KP 5XY"},

	// Mazda: JM1 cars, JM3 SUVs, 3MZ/3MV Mexico, 1YV AutoAlliance (626,
	// Mazda6), 4F2/4F4 built by Ford (Tribute, B-Series), 7MM Alabama.
	// 3MY (Mazda Mexico) built the Scion iA and Toyota Yaris sedan.
	{"MAZDA", mfrMazda, kindLight, "JM1 JM2 JM3 3MZ 3MV 3MD 1YV 7MM JMZ"},
	{"MAZDA", mfrFord, kindLight, "4F2 4F4"},
	{"", mfrMazda, kindLight, "3MY"},

	{"SUBARU", mfrSubaru, kindLight, "JF1 JF2 JF3 JF4 4S3 4S4"},
	{"MITSUBISHI", mfrMitsu, kindLight, "JA3 JA4 JA7 4A3 4A4 4P3 ML3"},
	{"DODGE", mfrMitsu, kindLight, "JB3 JB4 JB7"},
	{"MITSUBISHI FUSO", "Mitsubishi Fuso Truck and Bus", kindHeavy, "JL6 JW6"},
	{"SUZUKI", mfrSuzuki, kindLight, "JS2 JS3 JS4 2S2 2S3 KL5"},
	{"SUZUKI", mfrSuzuki, kindMoto, "JS1 JSA"},
	{"ISUZU", mfrIsuzu, kindLight, "JAA JAB JAC JAE 4S1 4S2 4S6"},
	{"ISUZU", mfrIsuzu, kindHeavy, "JAL 54D"},

	// Volkswagen group: W Germany, 3VW/3VV Mexico, 1VW/1V2 Chattanooga,
	// 9BW Brazil. Audi WAU cars, WA1 SUVs, WUA Audi Sport, TRU Hungary.
	{"VOLKSWAGEN", mfrVW, kindLight, "WVW WVG WV1 WV2 1VW 1V2 3VW 3VV 9BW"},
	{"AUDI", mfrVW, kindLight, "WAU WA1 WUA WU1 TRU"},
	{"PORSCHE", "Porsche AG", kindLight, "WP0 WP1"},
	{"BMW", mfrBMW, kindLight, "WBA WBS WBX WBY 4US 5UX 5UM 5YM 3MW 3MF"},
	{"BMW", mfrBMW, kindMoto, "WB1"},
	{"MINI", mfrBMW, kindLight, "WMW WMZ"},
	{"MERCEDES-BENZ", mfrDaimler, kindLight, "WDB WDC WDD WD3 WD4 4JG 55S W1K W1N W1W W1Y W1Z 8BT 8BU"},
	{"SMART", mfrDaimler, kindLight, "WME"},
	{"VOLVO", mfrVolvoCar, kindLight, "YV1 YV4 7JR LVY LYV"},
	{"POLESTAR", "Polestar Performance AB", kindLight, "LPS YSM YSR"},
	{"SAAB", "Saab Automobile", kindLight, "YS3 YK1"},
	{"JAGUAR", mfrJLR, kindLight, "SAJ SAD"},
	{"LAND ROVER", mfrJLR, kindLight, "SAL"},
	{"ASTON MARTIN", "Aston Martin Lagonda", kindLight, "SCF SD7"},
	{"BENTLEY", "Bentley Motors", kindLight, "SCB SJA"},
	{"ROLLS-ROYCE", "Rolls-Royce Motor Cars", kindLight, "SCA SLA"},
	{"LOTUS", "Lotus Cars", kindLight, "SCC"},
	{"MCLAREN", "McLaren Automotive", kindLight, "SBM"},

	// Electric-vehicle makers: Tesla (5YJ Fremont, 7SA Austin, 7G2
	// Cybertruck, LRW Shanghai, XP7 Berlin, SFZ Roadster), Rivian, Lucid,
	// Fisker.
	{"TESLA", mfrTesla, kindLight, "5YJ 7SA 7G2 LRW XP7 SFZ"},
	{"RIVIAN", "Rivian Automotive", kindLight, "7FC 7PD"},
	{"LUCID", "Lucid USA", kindLight, "50E"},
	{"FISKER", "Fisker", kindLight, "VCF"},

	// Motorcycles.
	{"HARLEY-DAVIDSON", "Harley-Davidson Motor Company", kindMoto, "1HD 5HD MEG"},
	{"YAMAHA", "Yamaha Motor Co.", kindMoto, "JYA JY4 5Y4"},
	{"KAWASAKI", "Kawasaki Motors", kindMoto, "JKA JKB ML5"},
	{"DUCATI", "Ducati Motor Holding", kindMoto, "ZDM"},
	{"APRILIA", "Piaggio & C.", kindMoto, "ZD4"},
	{"MOTO GUZZI", "Piaggio & C.", kindMoto, "ZGU"},
	{"TRIUMPH", "Triumph Motorcycles", kindMoto, "SMT"},
	{"KTM", "KTM AG", kindMoto, "VBK"},
	{"INDIAN", "Polaris Industries", kindMoto, "56K"},
	{"VICTORY", "Polaris Industries", kindMoto, "5VP"},

	// Heavy trucks and buses.
	{"FREIGHTLINER", mfrDTNA, kindHeavy, "1FU 1FV 2FU 3AK 3AL 4UZ"},
	{"WESTERN STAR", mfrDTNA, kindHeavy, "5KJ 2WK 2WL 2WE 5CK"},
	{"STERLING", mfrDTNA, kindHeavy, "2FW 2FZ 49H"},
	{"PETERBILT", mfrPaccar, kindHeavy, "1XP 2XP 1NP 3WP"},
	{"KENWORTH", mfrPaccar, kindHeavy, "1XK 2XK 1NK 2NK 3WK 3NM 3XK"},
	{"INTERNATIONAL", mfrNavistar, kindHeavy, "1HT 1HS 2HS 2HT 3HS 3HT 3HA"},
	{"IC BUS", mfrNavistar, kindHeavy, "4DR 4KA"},
	{"MACK", "Mack Trucks", kindHeavy, "1M1 1M2 2M1"},
	{"VOLVO TRUCK", "Volvo Trucks North America", kindHeavy, "4V1 4V2 4V3 4V4 4V5 4V6 4VA 4VD 4VG 4VJ 4VM 4VZ"},
	{"BLUE BIRD", "Blue Bird Corporation", kindHeavy, "1BA 1BB 1BC"},
	{"NEW FLYER", "New Flyer Industries", kindHeavy, "2FY 5FY"},
	{"PREVOST", "Prevost", kindHeavy, "2PC"},
	{"MOTOR COACH INDUSTRIES", "Motor Coach Industries", kindHeavy, "1M8"},
	{"GILLIG", "Gillig", kindHeavy, "15G"},

	// Trailers and recreational vehicles.
	{"FOREST RIVER", "Forest River", kindOther, "4X4"},
	{"JAYCO", "Jayco", kindOther, "1UJ"},
	{"KEYSTONE", "Keystone RV", kindOther, "4YD"},
	{"WINNEBAGO", "Winnebago Industries", kindOther, "1WT 1WV 1WW"},

	// Small manufacturers (fewer than 1,000 vehicles a year) have a 9 in
	// position 3 and their own code in positions 12-14.
	{"SEAGRAVE", "Seagrave Fire Apparatus", kindHeavy, "1F9FT1 1F9FT2 1F9ST1 1F9ST2"},
	{"SUTPHEN", "Sutphen Corporation", kindHeavy, "1S9003"},
	{"KME", "Kovatch Mobile Equipment", kindHeavy, "1K9058"},
	{"SPARTAN", "Spartan Fire", kindHeavy, "4S9559"},
	{"NIKOLA", "Nikola Corporation", kindHeavy, "1N9393"},
	{"GREENPOWER", "GreenPower Motor Company", kindHeavy, "1G9619"},
}

// wmiCountries are WMIs assigned outside the country block their first two
// characters fall in: Tesla's Berlin plant has XP7 (XL-XR is the
// Netherlands).
var wmiCountries = map[string]string{"XP7": "Germany"}

var (
	wmiOnce sync.Once
	wmi3    map[string]*wmiEntry  // 3-character WMIs
	wmi6    map[[6]byte]*wmiEntry // small makers: positions 1-3 and 12-14
)

// loadWMIs builds the WMI maps and attaches the VDS rules; it runs once, on
// the first decode, so that programs that never decode a VIN (the plugins)
// do not pay for it.
func loadWMIs() {
	wmi3 = make(map[string]*wmiEntry, 512)
	wmi6 = make(map[[6]byte]*wmiEntry, 16)
	for _, g := range wmiGroups {
		for _, code := range strings.Fields(g.wmis) {
			e := &wmiEntry{wmi: code, make: g.make, mfr: g.mfr, kind: g.kind, country: wmiCountries[code]}
			switch len(code) {
			case 3:
				wmi3[code] = e
			case 6:
				var k [6]byte
				copy(k[:], code)
				wmi6[k] = e
			}
		}
	}
	attachRules()
}

// lookupWMI finds the WMI of a 17-character VIN, or nil.
func lookupWMI(s string) *wmiEntry {
	wmiOnce.Do(loadWMIs)
	if s[2] == '9' {
		if e := wmi6[[6]byte{s[0], s[1], s[2], s[11], s[12], s[13]}]; e != nil {
			return e
		}
	}
	return wmi3[s[:3]]
}

// isoOrder is the order of the second character in ISO 3780's country
// ranges: letters without I, O and Q, then 1-9, then 0.
const isoOrder = "ABCDEFGHJKLMNPRSTUVWXYZ1234567890"

// isoRank maps a character to its place in isoOrder, 0 if it has none.
var isoRank = func() (r [256]uint8) {
	for i := 0; i < len(isoOrder); i++ {
		r[isoOrder[i]] = uint8(i + 1)
	}
	return r
}()

// countryRange is a block of country codes: first character, and the
// inclusive range of second characters in isoOrder.
type countryRange struct {
	first  byte
	lo, hi byte
	name   string
}

// countryRanges are the country codes of ISO 3780 as SAE assigns them; the
// region digits 1, 4 and 5 (USA) and 2 (Canada) need no second character.
// 7F-70 were moved from New Zealand to the United States in 2019.
var countryRanges = []countryRange{
	{'1', 'A', '0', "United States"}, {'4', 'A', '0', "United States"}, {'5', 'A', '0', "United States"},
	{'2', 'A', '0', "Canada"},
	{'3', 'A', 'W', "Mexico"}, {'3', 'X', '7', "Costa Rica"}, {'3', '8', '0', "Cayman Islands"},
	{'6', 'A', '0', "Australia"},
	{'7', 'A', 'E', "New Zealand"}, {'7', 'F', '0', "United States"},
	{'8', 'A', 'E', "Argentina"}, {'8', 'F', 'K', "Chile"}, {'8', 'L', 'R', "Ecuador"},
	{'8', 'S', 'W', "Peru"}, {'8', 'X', '2', "Venezuela"},
	{'9', 'A', 'E', "Brazil"}, {'9', 'F', 'K', "Colombia"}, {'9', 'L', 'R', "Paraguay"},
	{'9', 'S', 'W', "Uruguay"}, {'9', 'X', '2', "Trinidad and Tobago"}, {'9', '3', '9', "Brazil"},
	{'A', 'A', 'H', "South Africa"}, {'A', 'J', 'N', "Ivory Coast"},
	{'J', 'A', '0', "Japan"},
	{'K', 'A', 'E', "Sri Lanka"}, {'K', 'F', 'K', "Israel"}, {'K', 'L', 'R', "South Korea"}, {'K', 'S', '0', "Kazakhstan"},
	{'L', 'A', '0', "China"},
	{'M', 'A', 'E', "India"}, {'M', 'F', 'K', "Indonesia"}, {'M', 'L', 'R', "Thailand"}, {'M', 'S', '0', "Myanmar"},
	{'N', 'A', 'E', "Iran"}, {'N', 'F', 'K', "Pakistan"}, {'N', 'L', 'R', "Turkey"},
	{'P', 'A', 'E', "Philippines"}, {'P', 'F', 'K', "Singapore"}, {'P', 'L', 'R', "Malaysia"},
	{'R', 'A', 'E', "United Arab Emirates"}, {'R', 'F', 'K', "Taiwan"}, {'R', 'L', 'R', "Vietnam"}, {'R', 'S', '0', "Saudi Arabia"},
	{'S', 'A', 'M', "United Kingdom"}, {'S', 'N', 'T', "Germany"}, {'S', 'U', 'Z', "Poland"}, {'S', '1', '4', "Latvia"},
	{'T', 'A', 'H', "Switzerland"}, {'T', 'J', 'P', "Czech Republic"}, {'T', 'R', 'V', "Hungary"}, {'T', 'W', '1', "Portugal"},
	{'U', 'H', 'M', "Denmark"}, {'U', 'N', 'T', "Ireland"}, {'U', 'U', 'Z', "Romania"}, {'U', '5', '7', "Slovakia"},
	{'V', 'A', 'E', "Austria"}, {'V', 'F', 'R', "France"}, {'V', 'S', 'W', "Spain"}, {'V', 'X', '2', "Serbia"},
	{'V', '3', '5', "Croatia"}, {'V', '6', '0', "Estonia"},
	{'W', 'A', '0', "Germany"},
	{'X', 'A', 'E', "Bulgaria"}, {'X', 'F', 'K', "Greece"}, {'X', 'L', 'R', "Netherlands"}, {'X', 'S', 'W', "Russia"},
	{'X', 'X', '2', "Luxembourg"}, {'X', '3', '0', "Russia"},
	{'Y', 'A', 'E', "Belgium"}, {'Y', 'F', 'K', "Finland"}, {'Y', 'L', 'R', "Malta"}, {'Y', 'S', 'W', "Sweden"},
	{'Y', 'X', '2', "Norway"}, {'Y', '3', '5', "Belarus"}, {'Y', '6', '0', "Ukraine"},
	{'Z', 'A', 'R', "Italy"}, {'Z', 'X', '2', "Slovenia"}, {'Z', '3', '5', "Lithuania"},
}

// vinCountry is the country of manufacture that the first two characters
// of a VIN name, or "".
func vinCountry(a, b byte) string {
	r := isoRank[b]
	if r == 0 {
		return ""
	}
	for i := range countryRanges {
		c := &countryRanges[i]
		if c.first == a && r >= isoRank[c.lo] && r <= isoRank[c.hi] {
			return c.name
		}
	}
	return ""
}
