// Command garbage writes one valid record line among invalid ones.
package main

import "fmt"

func main() {
	fmt.Println(`not json at all`)
	fmt.Println(`{"record_id":"hc-1","surprise":true}`)
	fmt.Println(`{"record_id":"Has Spaces"}`)
	fmt.Println(`{"record_id":"hc-2"} {"record_id":"hc-3"}`)
	fmt.Println(`{"record_id":"hc-4","recall_id":"4","translations":{"en":{"title":"Ok"}}}`)
	fmt.Println(`{"record_id":"hc-5","units_affected":"many"}`)
	println(`{"record_id":"hc-9","reason":"row 9 has no title"}`)
	println(`plain log line`)
}
