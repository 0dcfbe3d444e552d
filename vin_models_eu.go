package rappel

// VDS patterns of the European manufacturers and of motorcycles; sources as
// for vin_models_na.go. Rows are tried in order; see vdsRow for the syntax.

// vwRules: Volkswagen and Audi write the vehicle type in positions 7-8
// (9M Jetta 1999-2005, 1K Jetta 2005-2010, AJ Jetta 2011-2018, BU Jetta
// 2019-, AT Beetle, 5N and AX Tiguan, A3 Passat from Chattanooga; 8D/8E/8K/
// FL/F4 A4, 8R/FP/FY Q5, 4L Q7, 8N/8J/FV TT), e.g. 3VWSD29M Jetta,
// 3VV4B7AX Tiguan, 1VWBN7A3 Passat, WAULF78K A4, WA1EAAFY Q5.
var vwRules = []vdsRow{
	{"3VW", "...9M", 1999, 2005, "", "JETTA"},
	{"3VW", "...1K", 2005, 2010, "", "JETTA"},
	{"3VW", "...AJ", 2011, 2018, "", "JETTA"},
	{"3VW", "...BU", 2019, 0, "", "JETTA"},
	{"3VW WVW", ".[12R].AU", 2015, 2021, "", "GOLF"},
	{"3VW", "...1[CY]", 1998, 2010, "", "BEETLE"},
	{"3VW", "...AT", 2012, 2019, "", "BEETLE"},
	{"WVG 3VV", "...5N", 2009, 2011, "", "TIGUAN"},
	{"WVG 3VV", "...AX", 2012, 0, "", "TIGUAN"},
	{"1VW", "...A3", 2012, 2022, "", "PASSAT"},
	{"WVW", "...3B", 1998, 2005, "", "PASSAT"},
	{"WVW", "...3C", 2006, 2008, "", "PASSAT"},
	{"WVG", "...7L", 2004, 2010, "", "TOUAREG"},
	{"WVG", "...BP", 2011, 2017, "", "TOUAREG"},

	{"WAU", "...8[DEK]", 1996, 2016, "", "A4"},
	{"WAU", "...FL", 2013, 2016, "", "A4"},
	{"WAU", "...F4", 2017, 0, "", "A4"},
	{"WAU", "...FR", 2008, 2017, "", "A5"},
	{"WAU", "...F5", 2018, 0, "", "A5"},
	{"WAU", "...FF", 2015, 2020, "", "A3"},
	{"WA1", "...8R", 2009, 2012, "", "Q5"},
	{"WA1", "...FP", 2009, 2017, "", "Q5"},
	{"WA1", "...FY", 2018, 0, "", "Q5"},
	{"WA1", "...4L", 2007, 2015, "", "Q7"},
	{"WA1", "...FS", 2015, 2018, "", "Q3"},
	{"WA1", "...F3", 2019, 0, "", "Q3"},
	{"WA1", "...GE", 2019, 2024, "", "E-TRON"},
	{"TRU", "...8N", 2000, 2006, "", "TT"},
	{"TRU", "...8J", 2008, 2015, "", "TT"},
	{"TRU", "...FV", 2016, 2023, "", "TT"},
}

// bmwRules: BMW's positions 4-7 are its type code, of which the first two
// name the model: VA-VD (E90), PH/PK/PM/PN and the coupes and convertibles
// WB/WC/WL/WR, 3A-3D and 8A-8E (F30), 5R (G20, also 3MW from Mexico) are
// the 3 Series; PA/PC (E83), WX/WZ (F25), TR/TS/TY (G01) the X3; FA/FB
// (E53), FE and ZV (E70), KR/KS (F15), CR (G05) the X5.
var bmwRules = []vdsRow{
	{"WBA", "V[A-D]", 2006, 2011, "", "3 SERIES"},
	{"WBA", "P[HKMN]", 2007, 2011, "", "3 SERIES"},
	{"WBA", "W[BCLR]", 2007, 2013, "", "3 SERIES"},
	{"WBA", "3[A-D]", 2012, 2018, "", "3 SERIES"},
	{"WBA", "8[ABDE]", 2016, 2019, "", "3 SERIES"},
	{"WBA 3MW", "5R", 2019, 0, "", "3 SERIES"},
	{"WBX", "P[AC]", 2004, 2010, "", "X3"},
	{"5UX", "W[XZ]", 2011, 2017, "", "X3"},
	{"5UX", "T[RSY]", 2018, 2021, "", "X3"},
	{"5UX", "F[AB]", 2000, 2006, "", "X5"},
	{"5UX", "FE", 2007, 2013, "", "X5"},
	{"5UX", "ZV", 2011, 2013, "", "X5"},
	{"5UX", "K[RS]", 2014, 2018, "", "X5"},
	{"5UX", "CR", 2019, 0, "", "X5"},
}

// mercedesRules: positions 4-5 are the model series: HA (W202), RF/RH/RN
// (W203), GF/GJ (W204), WF/WJ/WK (W205), AF (W206) C-Class; 0G/0J GLC;
// GG GLK; TG GLA; AB/BB/DA ML-Class, then DA/FB/FD GLE; UF/HF/KJ/KK/ZF
// E-Class; NG/UG S-Class; PE/PF/FF Sprinter vans (e.g. WDDGF4HB C-Class,
// W1N0G8EB GLC, 4JGAB54E ML320, WD3PE7CD Sprinter).
var mercedesRules = []vdsRow{
	{"WDB", "HA", 1994, 2000, "", "C-CLASS"},
	{"WDB", "R[FHN]", 2001, 2007, "", "C-CLASS"},
	{"WDD", "G[FJ]", 2008, 2015, "", "C-CLASS"},
	{"WDD 55S W1K", "W[FJK]", 2015, 2023, "", "C-CLASS"},
	{"W1K", "AF", 2022, 0, "", "C-CLASS"},
	{"WDC W1N", "0[GJ]", 2016, 2023, "", "GLC"},
	{"WDC", "GG", 2010, 2015, "", "GLK"},
	{"WDC W1N", "TG", 2015, 2020, "", "GLA"},
	{"4JG", "AB", 1998, 2005, "", "ML-CLASS"},
	{"4JG", "BB", 2006, 2011, "", "ML-CLASS"},
	{"4JG", "DA", 2012, 2015, "", "ML-CLASS"},
	{"4JG", "DA", 2016, 2019, "", "GLE"},
	{"4JG", "F[BD]", 2020, 0, "", "GLE"},
	{"WDB", "UF", 2003, 2009, "", "E-CLASS"},
	{"WDD", "HF", 2010, 2016, "", "E-CLASS"},
	{"WDD", "K[JK]", 2010, 2017, "", "E-CLASS"},
	{"WDD W1K", "ZF", 2017, 0, "", "E-CLASS"},
	{"WDB", "NG", 2000, 2006, "", "S-CLASS"},
	{"WDD", "NG", 2007, 2013, "", "S-CLASS"},
	{"WDD W1K", "UG", 2014, 2020, "", "S-CLASS"},
	{"WD3 WD4", "[FP][DEF]", 2010, 2018, "", "SPRINTER"},
}

// motorcycleRules: Honda writes its frame code in positions 4-7: SC47,
// SC68 and SC79 are the GL1800 Gold Wing, PC37 and PC40 the CBR600RR.
var motorcycleRules = []vdsRow{
	{"1HF JH2", "SC47", 2001, 2010, "", "GOLD WING"},
	{"JH2", "SC68", 2012, 2017, "", "GOLD WING"},
	{"JH2", "SC79", 2018, 0, "", "GOLD WING"},
	{"JH2", "PC37", 2003, 2006, "", "CBR600RR"},
	{"JH2", "PC40", 2007, 2024, "", "CBR600RR"},
}
