// Package edge serves the recall API over HTTP.
//
// One routes table (routes.go) declares every endpoint: its methods, its
// net/http path pattern, whether it needs an API key, the query parameters it
// accepts and its handler. Handlers have the shape
//
//	func(w http.ResponseWriter, r *http.Request) error
//
// after tailscale's tsweb: they write a response only on success and return
// an error otherwise, and one function (Server.fail, error.go) turns every
// error into a JSON response {"detail": ...} with the status of its
// rappel.Error code. A rappel.Error's message goes to the client; any other
// error, and any panic, becomes a 500 with a safe sentence, its cause logged.
//
// A request goes through, in order: request id, access log, panic recovery,
// then the router, which answers 404 for an unknown path and 405 for a known
// path with the wrong method, then checks the API key (403), parses the query
// (400 when malformed) and calls the handler, which validates the parameters'
// values (422) before doing its work.
//
// Record bodies are written from the bytes the snapshot encoded when it was
// built; nothing is JSON-encoded per request on that path.
package edge
