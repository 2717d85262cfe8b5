package api

import (
	"bytes"
	"encoding/json"
	"slices"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"github.com/wshub/wshub/core"
)

// requestBody returns the body exactly as sent. Fiber's Ctx.Body decodes a
// Content-Encoding (gzip, deflate, br) in memory with no size limit, so a small encoded
// body could expand far past the 20 MiB limit, and when decoding fails it returns the
// error text in place of the body. Bodies are taken as they are: an encoded one is
// refused with code.
func requestBody(c *fiber.Ctx, code string) ([]byte, error) {
	if Encoded(c) {
		return nil, core.Errorf(code, "Content-Encoding is not supported; send the body unencoded")
	}
	return c.Request().Body(), nil
}

// jsonObject splits a request body into its fields. Malformed JSON is invalid_json; a
// body that is not an object is invalid_request. Unknown fields are ignored.
func jsonObject(body []byte, required bool) (map[string]json.RawMessage, error) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		if required {
			return nil, core.Errorf(core.CodeInvalidJSON, "a JSON body is required")
		}
		return map[string]json.RawMessage{}, nil
	}
	if !json.Valid(body) {
		return nil, core.Errorf(core.CodeInvalidJSON, "the body is not valid JSON")
	}
	// encoding/json would turn bytes that are not UTF-8 into U+FFFD without a word.
	if !utf8.Valid(body) {
		return nil, core.Errorf(core.CodeInvalidRequest, "the body is not valid UTF-8 text")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil || fields == nil {
		return nil, core.Errorf(core.CodeInvalidRequest, "the body must be a JSON object")
	}
	for name, raw := range fields {
		if err := plainJSON(name, raw); err != nil {
			return nil, err
		}
	}
	return fields, nil
}

// plainJSON refuses a field whose name, or any string within its value, holds a NUL
// character: in valid JSON a NUL is only ever the escape \u0000, so a value without
// that text is read no further.
func plainJSON(name string, raw json.RawMessage) error {
	if err := core.CheckText("the field name", name); err != nil {
		return err
	}
	if !bytes.Contains(raw, []byte(`\u0000`)) {
		return nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return core.Errorf(core.CodeInvalidJSON, "the body is not valid JSON")
	}
	return plainValue(name, v)
}

func plainValue(name string, v any) error {
	switch v := v.(type) {
	case string:
		return core.CheckText(name, v)
	case []any:
		for _, e := range v {
			if err := plainValue(name, e); err != nil {
				return err
			}
		}
	case map[string]any:
		for k, e := range v {
			if err := core.CheckText(name+"'s field name", k); err != nil {
				return err
			}
			if err := plainValue(name, e); err != nil {
				return err
			}
		}
	}
	return nil
}

// optString reads an optional string field; null counts as absent.
func optString(fields map[string]json.RawMessage, name string) (*string, error) {
	raw, ok := fields[name]
	if !ok || string(raw) == "null" {
		return nil, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, core.Errorf(core.CodeInvalidRequest, "%s must be a string", name)
	}
	return &s, nil
}

// optStrings reads an optional array of strings; null counts as absent.
func optStrings(fields map[string]json.RawMessage, name string) ([]string, error) {
	raw, ok := fields[name]
	if !ok || string(raw) == "null" {
		return nil, nil
	}
	var elems []*string // a null element is not a string (Unmarshal would make it "")
	if err := json.Unmarshal(raw, &elems); err != nil || slices.Contains(elems, nil) {
		return nil, core.Errorf(core.CodeInvalidRequest, "%s must be an array of strings", name)
	}
	s := make([]string, len(elems))
	for i, e := range elems {
		s[i] = *e
	}
	return s, nil
}

// stringFields reads several optional string fields at once.
func stringFields(fields map[string]json.RawMessage, names ...string) (map[string]*string, error) {
	out := make(map[string]*string, len(names))
	for _, n := range names {
		v, err := optString(fields, n)
		if err != nil {
			return nil, err
		}
		out[n] = v
	}
	return out, nil
}

// decodeCreateWorkspace turns a create body into core input (fuzzed).
func decodeCreateWorkspace(body []byte, headerKey *string) (core.CreateWorkspaceInput, error) {
	fields, err := jsonObject(body, false)
	if err != nil {
		return core.CreateWorkspaceInput{}, err
	}
	f, err := stringFields(fields, "prompt", "projectId", "providerId", "agent", "model", "runtimeMode", "baseRef", "branch", "idempotencyKey")
	if err != nil {
		return core.CreateWorkspaceInput{}, err
	}
	return core.CreateWorkspaceInput{
		Prompt: f["prompt"], ProjectID: f["projectId"], ProviderID: f["providerId"], Agent: f["agent"],
		Model: f["model"], RuntimeMode: f["runtimeMode"], BaseRef: f["baseRef"], Branch: f["branch"],
		HeaderKey: headerKey, BodyKey: f["idempotencyKey"], Origin: core.OriginAPI,
	}, nil
}

// decodeSendMessage turns a send body into core input (fuzzed).
func decodeSendMessage(body []byte, headerKey *string) (core.SendMessageInput, error) {
	fields, err := jsonObject(body, true)
	if err != nil {
		return core.SendMessageInput{}, err
	}
	f, err := stringFields(fields, "text", "idempotencyKey")
	if err != nil {
		return core.SendMessageInput{}, err
	}
	attachments, err := optStrings(fields, "attachments")
	if err != nil {
		return core.SendMessageInput{}, err
	}
	return core.SendMessageInput{Text: f["text"], Attachments: attachments, HeaderKey: headerKey, BodyKey: f["idempotencyKey"]}, nil
}

// decodeCreateWebhook turns a webhook body into core input (fuzzed).
func decodeCreateWebhook(body []byte) (core.CreateWebhookInput, error) {
	fields, err := jsonObject(body, true)
	if err != nil {
		return core.CreateWebhookInput{}, err
	}
	f, err := stringFields(fields, "url", "description")
	if err != nil {
		return core.CreateWebhookInput{}, err
	}
	if f["url"] == nil {
		return core.CreateWebhookInput{}, core.Errorf(core.CodeInvalidRequest, "url is required")
	}
	return core.CreateWebhookInput{URL: f["url"], Description: f["description"]}, nil
}
