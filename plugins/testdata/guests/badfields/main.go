// Command badfields writes well-formed record lines whose fields break the
// record's rules, and one good record.
package main

import "fmt"

func main() {
	const ok = `"recall_id":"%d","recall_type":"food","agency":"CFIA","status":"active","event_date":"2024-05-01","recall_date":"2024-05-01","translations":{"en":{"title":"T"}}`
	fmt.Printf(`{"record_id":"hc-1",`+ok+"}\n", 1)
	fmt.Printf(`{"record_id":"hc-2",`+ok+`,"hazard_class":"class_9"}`+"\n", 2)
	fmt.Println(`{"record_id":"hc-3","recall_id":"3","recall_type":"food","agency":"Nobody","status":"active","event_date":"2024-05-01","recall_date":"2024-05-01","translations":{"en":{"title":"T"}}}`)
	fmt.Println(`{"record_id":"hc-4","recall_id":"4","recall_type":"food","agency":"CFIA","status":"active","event_date":"2024-02-30","recall_date":"2024-05-01","translations":{"en":{"title":"T"}}}`)
	fmt.Printf(`{"record_id":"hc-5",`+ok+`,"allergens":["gluten","kryptonite"]}`+"\n", 5)
}
