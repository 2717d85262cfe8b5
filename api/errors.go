package api

import (
	"errors"
	"log/slog"

	"github.com/gofiber/fiber/v2"

	"github.com/wshub/wshub/core"
)

type errorBody struct {
	Error  string `json:"error"`
	Detail string `json:"detail,omitempty"`
}

// writeError answers err as an error body. Anything that is not a core.Error is logged
// and shown only as internal_error (or service_unavailable when the store is down).
func writeError(c *fiber.Ctx, log *slog.Logger, err error) error {
	var ce *core.Error
	if !errors.As(err, &ce) {
		if errors.Is(err, core.ErrUnavailable) || errors.Is(err, core.ErrContended) {
			log.Warn("store unavailable", "method", c.Method(), "path", c.Path(), "err", err)
			ce = &core.Error{Code: core.CodeServiceUnavailable, Detail: "the service is temporarily unavailable; retry"}
		} else {
			log.Error("request failed", "method", c.Method(), "path", c.Path(), "err", err)
			ce = &core.Error{Code: core.CodeInternal, Detail: "an unexpected error occurred"}
		}
	}
	status, ok := core.HTTPStatus(ce.Code)
	if !ok {
		log.Error("error code without status", "code", ce.Code)
		status = 500
	}
	return c.Status(status).JSON(errorBody{Error: ce.Code, Detail: ce.Detail})
}
