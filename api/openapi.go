package api

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/gofiber/fiber/v2"
	"go.yaml.in/yaml/v3"
)

// openapiYAML is the API's OpenAPI 3.1 document, written by hand beside api.md: it is
// the contract stated for tools (client generators, validators), and hand-writing it
// keeps the descriptions, limits and enums as api.md words them instead of as Go
// types happen to be shaped. The tests validate every response they receive against
// it, so it cannot drift from the code.
//
//go:embed openapi.yaml
var openapiYAML []byte

// OpenAPIYAML returns the document as written.
func OpenAPIYAML() []byte { return openapiYAML }

var openapiJSON = sync.OnceValues(func() ([]byte, error) {
	var doc any
	if err := yaml.Unmarshal(openapiYAML, &doc); err != nil {
		return nil, fmt.Errorf("openapi.yaml: %w", err)
	}
	return json.Marshal(doc)
})

// OpenAPIJSON returns the document as served at GET /openapi.json.
func OpenAPIJSON() ([]byte, error) { return openapiJSON() }

// serveOpenAPI answers GET /openapi.json; it needs no key (it describes the API, it
// holds no data).
func serveOpenAPI(c *fiber.Ctx) error {
	doc, err := OpenAPIJSON()
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSONCharsetUTF8)
	c.Set(fiber.HeaderCacheControl, "public, max-age=300")
	return c.Send(doc)
}
