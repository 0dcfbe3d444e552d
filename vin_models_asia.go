package rappel

// VDS patterns of the Japanese and Korean manufacturers; sources as for
// vin_models_na.go. Rows are tried in order; see vdsRow for the syntax.

// toyotaRules: on North American Toyotas since about 1997 position 8 is the
// vehicle line: E Corolla (K in position 4: Matrix), K Camry, V RAV4, N
// Tacoma, 1 (2000-2021) and B (2022-) Tundra, C Sienna, H Highlander (A
// before 2008), R 4Runner, U Prius, X C-HR; for Lexus A (U before 2010) RX,
// Z NX, G and 1 ES, 2 IS. E.g. 4T1BE46K Camry, 2T1BR30E Corolla,
// 2T3B1RFV RAV4, 3TMCZ5AN Tacoma, 5TFLA5DB Tundra, 2T2BAMCA RX.
var toyotaRules = []vdsRow{
	{"2T1", "K...E", 2003, 2014, "", "MATRIX"},
	{"2T1 1NX 5YF JTD JTN JT2", "....E", 1998, 0, "", "COROLLA"},
	{"4T1 4T4 JT2 JTN JTD", "....K", 1997, 0, "", "CAMRY"},
	{"4T1", "....B", 1995, 2022, "", "AVALON"},
	{"2T3 JTM JT3 4T3", "....V", 1996, 0, "", "RAV4"},
	{"5TE 5TF 4TA 3TM 3TY JT4", "....N", 1995, 0, "", "TACOMA"},
	{"5TB 5TF", "....1", 2000, 2021, "", "TUNDRA"},
	{"5TF", "....B", 2022, 0, "", "TUNDRA"},
	{"4T3 5TD", "....C", 1998, 0, "", "SIENNA"},
	{"JTE", "....A", 2001, 2007, "", "HIGHLANDER"},
	{"5TD JTE 4T3", "....H", 2008, 0, "", "HIGHLANDER"},
	{"5TD", "....A", 2001, 2007, "", "SEQUOIA"},
	{"5TD", "....1", 2008, 2022, "", "SEQUOIA"},
	{"JT3 JTE", "....R", 1996, 0, "", "4RUNNER"},
	{"JTD JT2", "....U", 2001, 0, "", "PRIUS"},
	{"JTD", ".T.23", 2000, 2005, "", "ECHO"},
	{"JTD", ".T923", 2006, 2011, "", "YARIS"},
	{"JTN NMT", "....X", 2018, 2022, "", "C-HR"},
	{"4T3", "....B", 2009, 2015, "", "VENZA"},
	{"JTJ 2T2 JT6", "....U", 1999, 2009, "", "RX"},
	{"JTJ 2T2", "....A", 2010, 0, "", "RX"},
	{"JTJ 2T2", "....Z", 2015, 0, "", "NX"},
	{"JTH JT8", "....G", 1992, 2018, "", "ES"},
	{"58A", "", 2019, 0, "", "ES"},
	{"JTH", "....1", 2019, 0, "", "ES"},
	{"JTH", "....2", 2001, 0, "", "IS"},
}

// hondaRules: positions 4-6 are Honda's model and body code and the first
// two name the model line: FC2 is a Civic sedan of 2016-2021, CM5 an Accord
// of 2003-2007, RW1 a CR-V of 2017-2022, YF5 a Pilot of 2016-2022. Civic:
// EJ/EK/EM/ES (1996-2005), FA/FD/FG (2006-2011), FB (2012-2015), FC/FK
// (2016-2021), FE/FL (2022-). Accord: CA ... CY. Acura uses the same
// scheme (DC Integra, KA Legend, UA TL, UB TLX, YD/YE MDX, TB/TC RDX).
var hondaRules = []vdsRow{
	{"JHM 1HG 2HG 3HG 19X SHH", "E[JKMPS]", 1996, 2005, "", "CIVIC"},
	{"JHM 1HG 2HG 3HG 19X SHH", "F[ABCDEGKL]", 2006, 0, "", "CIVIC"},
	{"JHM 1HG 2HG 3HG 19X", "C[ABDEFGMPRSTVY]", 1986, 0, "", "ACCORD"},
	{"JHL 2HK 5J6 7FA SHS", "R[DEMSTW]", 1997, 0, "", "CR-V"},
	{"5FN 2HK", "YF[1-6]", 2003, 2022, "", "PILOT"},
	{"5FN", "YG", 2023, 0, "", "PILOT"},
	{"5FN", "YF[78]", 2019, 0, "", "PASSPORT"},
	{"5FN 2HK", "RL", 1999, 0, "", "ODYSSEY"},
	{"JHM", "RA", 1995, 1998, "", "ODYSSEY"},
	{"3CZ", "RU", 2016, 2022, "", "HR-V"},
	{"JHM", "G[DE]", 2007, 2014, "", "FIT"},
	{"3HG", "GK", 2015, 2020, "", "FIT"},
	{"2HJ 5FP", "YK", 2006, 0, "", "RIDGELINE"},
	{"5J6", "YH", 2003, 2011, "", "ELEMENT"},
	{"5J6", "TF", 2010, 2015, "", "CROSSTOUR"},
	{"JHM", "B[AB]", 1988, 2001, "", "PRELUDE"},
	{"JHM 19X", "ZE", 2000, 0, "", "INSIGHT"},

	{"JH4", "D[ABC]", 1986, 2001, "", "INTEGRA"},
	{"JH4", "DC", 2002, 2006, "", "RSX"},
	{"19U", "DE[45]", 2023, 0, "", "INTEGRA"},
	{"19U 19V", "DE[123]", 2013, 2022, "", "ILX"},
	{"JH4", "KA", 1986, 1995, "", "LEGEND"},
	{"JH4 19U", "UA", 1996, 2014, "", "TL"},
	{"19U", "UB", 2015, 0, "", "TLX"},
	{"JH4", "C[LUW]", 2004, 2014, "", "TSX"},
	{"2HN 5FR 5J8", "Y[DE]", 2001, 0, "", "MDX"},
	{"5J8 JH4", "T[BC]", 2007, 0, "", "RDX"},
	{"2HH", "FD", 2006, 2011, "", "CSX"},
	{"2HH", "MB", 1997, 2000, "", "EL"},
	{"2HH", "ES", 2001, 2005, "", "EL"},
}

// nissanBrandRules tell Infinitis from Nissans on the WMIs they share:
// JN1 with V or Y in position 5 (the G, Q50/Q60 and M lines), 5N1 with L
// (JX35/QX60, e.g. 5N1AL0MM), JN8 with Z in 5 and N in 7 (QX56/QX80).
var nissanBrandRules = []vdsRow{
	{"JN1", ".[VY]", 2008, 0, "INFINITI", ""},
	{"5N1", ".L", 2013, 0, "INFINITI", ""},
	{"JN8", ".Z.N", 2011, 0, "INFINITI", ""},
}

// nissanRules: position 5 is the model line, the first letter of Nissan's
// chassis codes: L Altima (L30-L34), B Sentra (B13-B18), A Maxima, D
// Frontier, T Rogue (S for the first Rogue), R Pathfinder, Z Murano (and
// the Leaf with 0 or 1 in position 6), N Versa, P Kicks, J Qashqai.
var nissanRules = []vdsRow{
	{"1N4 JN1 3N1", ".L", 1993, 0, "", "ALTIMA"},
	{"3N1 1N4 JN1", ".B", 1982, 0, "", "SENTRA"},
	{"1N4 JN1", ".A", 1995, 0, "", "MAXIMA"},
	{"1N4 JN1", ".Z[01]", 2011, 0, "", "LEAF"},
	{"3N1", ".N", 2012, 0, "", "VERSA"},
	{"3N1", ".C1", 2007, 2012, "", "VERSA"},
	{"3N1 3N8", ".P", 2018, 0, "", "KICKS"},
	{"3N1", ".K", 2015, 2019, "", "MICRA"},
	{"JN8 5N1 KNM", ".T", 2014, 0, "", "ROGUE"},
	{"JN8", ".S", 2008, 2013, "", "ROGUE"},
	{"JN1", ".J1", 2017, 0, "", "QASHQAI"},
	{"5N1 JN8", ".R", 1996, 0, "", "PATHFINDER"},
	{"1N6", ".D", 1998, 0, "", "FRONTIER"},
	{"1N6", ".A", 2004, 0, "", "TITAN"},
	{"JN8", ".Z..W", 2003, 2014, "", "MURANO"},
	{"5N1", ".Z", 2015, 0, "", "MURANO"},
	{"JN8", ".F", 2011, 2017, "", "JUKE"},
	{"5N1", ".N", 2005, 2015, "", "XTERRA"},
	{"JN8", ".E", 2011, 2017, "", "QUEST"},
	{"5N1", ".V", 2004, 2009, "", "QUEST"},

	// Infiniti.
	{"JN1", ".V7A", 2014, 0, "", "Q50"},
	{"JN1", ".J0", 2014, 2017, "INFINITI", "QX50"},
	{"JNK", ".V5", 2003, 2006, "", "G35"},
	{"JNK", ".V61", 2007, 2008, "", "G35"},
	{"JNK", ".A", 1996, 2001, "", "I30"},
	{"JNR", "AS", 2003, 2012, "", "FX35"},
	{"5N1", ".L", 2013, 2013, "", "JX35"},
	{"5N1", ".L", 2014, 0, "", "QX60"},
	{"5N3", ".A", 2004, 2013, "", "QX56"},
	{"JN8", ".Z.N", 2011, 2013, "", "QX56"},
	{"JN8", ".Z.N", 2014, 0, "", "QX80"},
}

// hyundaiBrandRules: Kia's Mexican (3KP) and Georgian (5XY) plants also
// build Hyundais: the Accent (3KPC) and the Santa Fe Sport (5XYZ).
// Genesis was a Hyundai model until 2016 and a make from 2017.
var hyundaiBrandRules = []vdsRow{
	{"3KP", "C", 0, 0, "HYUNDAI", ""},
	{"5XY", "Z", 0, 0, "HYUNDAI", ""},
	{"3KP 5XY", "", 0, 0, "KIA", ""},
	{"KMH", "G", 2017, 0, "GENESIS", ""},
}

// hyundaiKiaRules: position 4 is the vehicle line (Hyundai D and, from
// 2021, L Elantra; E Sonata; J Tucson; S Santa Fe; K and H Kona; R
// Palisade and Venue. Kia F Forte, P Sportage, J Soul, K/P/R Sorento, P
// with a digit Telluride, G Optima/K5, M Sedona, N Carnival, C Niro).
var hyundaiKiaRules = []vdsRow{
	{"KMH 5NP", "D", 2001, 2020, "", "ELANTRA"},
	{"KMH 5NP", "L[A-Z]", 2021, 0, "", "ELANTRA"},
	{"KMH", "J", 1992, 2000, "", "ELANTRA"},
	{"KMH 5NP", "E", 2006, 0, "", "SONATA"},
	{"KMH", "L[0-9]", 2020, 0, "", "SONATA"},
	{"KMH", "C[A-Z]", 2000, 2017, "", "ACCENT"},
	{"3KP", "C", 2018, 2022, "", "ACCENT"},
	{"KMH", "T", 2012, 2022, "", "VELOSTER"},
	{"KMH", "R", 2020, 0, "", "VENUE"},
	{"KM8 5NM", "J", 2005, 0, "", "TUCSON"},
	{"KM8 5NM", "S", 2001, 0, "", "SANTA FE"},
	{"5XY", "Z", 2013, 2018, "", "SANTA FE SPORT"},
	{"KM8", "K[0-9]", 2018, 2023, "", "KONA"},
	{"KM8", "K[A-Z]", 2022, 0, "", "IONIQ 5"},
	{"KM8", "H", 2024, 0, "", "KONA"},
	{"KM8", "R", 2020, 0, "", "PALISADE"},

	{"KNA", "F[^G]", 2004, 2009, "", "SPECTRA"},
	{"KNA", "F[^G]", 2010, 2018, "", "FORTE"},
	{"3KP", "F[0-9]", 2019, 0, "", "FORTE"},
	{"3KP", "A", 2018, 0, "", "RIO"},
	{"KNA", "D", 2001, 2017, "", "RIO"},
	{"KNA 5XX", "G", 2001, 2020, "", "OPTIMA"},
	{"KNA 5XX", "G", 2021, 0, "", "K5"},
	{"KND", "J.[^7]", 2010, 0, "", "SOUL"},
	{"KND", "P[A-Z]", 2011, 0, "", "SPORTAGE"},
	{"5XY", "K[A-Z]", 2011, 2015, "", "SORENTO"},
	{"5XY", "P[A-Z]", 2016, 2020, "", "SORENTO"},
	{"5XY KND", "R", 2021, 0, "", "SORENTO"},
	{"5XY", "P[0-9]", 2020, 0, "", "TELLURIDE"},
	{"KND", "M", 2002, 2021, "", "SEDONA"},
	{"KND", "N", 2022, 0, "", "CARNIVAL"},
	{"KND", "C[A-Z]", 2017, 0, "", "NIRO"},
	{"KND", "C[0-9]", 2022, 0, "", "EV6"},
	{"KND", "E", 2021, 0, "", "SELTOS"},
}

// mazdaBrandRules: Mazda's Mexican plant built the Scion iA (2016) and the
// Toyota Yaris sedan (2017-2020) under 3MY.
var mazdaBrandRules = []vdsRow{
	{"3MY", "", 0, 2016, "SCION", ""},
	{"3MY", "", 2017, 0, "TOYOTA", ""},
}

// mazdaRules: positions 4-5 are Mazda's platform code (BK/BL/BM/BP
// Mazda3, KE/KF CX-5, TB/TC CX-9, NA-ND MX-5, GJ/GL Mazda6), e.g.
// JM1BL1SF Mazda3, JM3KE4BY CX-5.
var mazdaRules = []vdsRow{
	{"JM1 3MZ", "B[KLMNP]", 2004, 0, "", "MAZDA3"},
	{"JM1", "B[AGJ]", 1990, 2003, "", "PROTEGE"},
	{"JM3", "K[EF]", 2013, 0, "", "CX-5"},
	{"JM3", "T[BC]", 2007, 2023, "", "CX-9"},
	{"JM3", "ER", 2007, 2012, "", "CX-7"},
	{"JM1 JM3", "DK", 2016, 0, "", "CX-3"},
	{"3MV", "DM", 2020, 0, "", "CX-30"},
	{"7MM", "VA", 2023, 0, "", "CX-50"},
	{"JM1", "N[A-D]", 1990, 0, "", "MX-5"},
	{"JM1", "G[JL]", 2014, 2021, "", "MAZDA6"},
	{"1YV", "[FGH]P", 2003, 2008, "", "MAZDA6"},
	{"1YV", "HZ", 2009, 2013, "", "MAZDA6"},
	{"1YV", "G[EF]", 1993, 2002, "", "626"},
	{"JM1", "C[RW]", 2006, 2017, "", "MAZDA5"},
	{"JM3", "L[VW]", 1989, 2006, "", "MPV"},
	{"JM1", "FE", 2004, 2011, "", "RX-8"},
	{"4F2", "", 2001, 2011, "", "TRIBUTE"},
	{"4F4", ".R", 1986, 2009, "", "B-SERIES"},
}

// subaruRules: positions 4-5 are Subaru's chassis code: S Forester (SF to
// SL), G Impreza (GC ... GU) and, on the SUV WMIs, Crosstrek; B Legacy
// and Outback (BR, BS, BT on 4S4); VA/VB WRX; WM Ascent; ZC/ZD BRZ, ZN the
// Toyota 86 and Scion FR-S it builds.
var subaruRules = []vdsRow{
	{"JF1 JF2 4S4", "S[F-L]", 1998, 0, "", "FORESTER"},
	{"JF2 4S4", "G", 2013, 0, "", "CROSSTREK"},
	{"JF1 4S3", "G", 1993, 0, "", "IMPREZA"},
	{"JF1", "V[AB]", 2015, 0, "", "WRX"},
	{"4S3 JF1", "B[CDELMNW]", 1990, 0, "", "LEGACY"},
	{"4S4", "B[PRST]", 2005, 0, "", "OUTBACK"},
	{"4S4", "WM", 2019, 0, "", "ASCENT"},
	{"4S4", "WX", 2006, 2014, "", "TRIBECA"},
	{"JF1", "Z[CD]", 2013, 0, "", "BRZ"},
	{"JF1", "ZN", 2013, 2016, "SCION", "FR-S"},
	{"JF1", "ZN", 2017, 2021, "TOYOTA", "86"},
	{"JF1", "ZN", 2022, 0, "TOYOTA", "GR86"},
}
