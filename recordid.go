package rappel

// The record_id rule, in one place: a record of Health Canada's notices
// (the dump, the recall pages, the detail documents, CFIA's notices among
// them) is hc-<NID>, the notice's node ID; a record of Transport Canada's
// vehicle recall database is tc-<recall number>. A vehicle notice of the
// dump that names its Transport Canada recall number (TransportRecallNumber)
// takes that number's id, so that it and the database's record merge into
// one.

// HealthRecordID is the record_id of the Health Canada notice nid.
func HealthRecordID(nid string) string { return "hc-" + nid }

// TransportRecordID is the record_id of Transport Canada's recall number.
func TransportRecordID(number string) string { return "tc-" + number }

// DumpRecordID is the record_id a notice of Health Canada's dump becomes:
// a vehicle notice whose texts (its URLs and titles) name a Transport
// Canada recall number is that recall's, any other notice its NID's.
func DumpRecordID(nid string, vehicle bool, texts ...string) string {
	if vehicle {
		if rn := TransportRecallNumber(texts...); rn != "" {
			return TransportRecordID(rn)
		}
	}
	return HealthRecordID(nid)
}
