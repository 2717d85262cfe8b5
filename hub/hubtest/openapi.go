package hubtest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/wshub/wshub/api"
)

// The API's OpenAPI document, loaded once: every response a test receives from
// /v1/api is validated against it (status declared, body matching its schema), so the
// document and the code cannot drift.
var openapiDoc = sync.OnceValues(func() (routers.Router, error) {
	doc, err := LoadOpenAPI()
	if err != nil {
		return nil, err
	}
	doc.Servers = nil // match any host: tests listen on random loopback ports
	return legacy.NewRouter(doc)
})

// LoadOpenAPI loads and validates the served document.
func LoadOpenAPI() (*openapi3.T, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(api.OpenAPIYAML())
	if err != nil {
		return nil, fmt.Errorf("load openapi.yaml: %w", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("openapi.yaml is not a valid OpenAPI document: %w", err)
	}
	return doc, nil
}

// CheckResponse validates an answer to method path against the document. Paths the
// document does not describe (health, metrics, chat endpoints, an unknown route or
// method) are not checked.
func CheckResponse(method, rawURL string, status int, header http.Header, body []byte) error {
	router, err := openapiDoc()
	if err != nil {
		return err
	}
	u, err := url.Parse(rawURL)
	if err != nil || !strings.HasPrefix(u.Path, "/v1/api/") {
		return nil
	}
	req, err := http.NewRequest(method, u.String(), nil)
	if err != nil {
		return nil
	}
	route, params, err := router.FindRoute(req)
	// The legacy router lets a trailing parameter match nothing ("/webhooks" as
	// "/webhooks/{webhookId}"): the segment counts must agree too.
	if err != nil || strings.Count(strings.Trim(route.Path, "/"), "/") != strings.Count(strings.Trim(u.Path, "/"), "/") {
		return nil // not a documented operation
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
			Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}},
		Status: status, Header: header, Body: io.NopCloser(bytes.NewReader(body)),
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		return fmt.Errorf("%s %s answered %d, which openapi.yaml does not allow: %v\nbody: %.500s", method, u.Path, status, err, body)
	}
	return nil
}
