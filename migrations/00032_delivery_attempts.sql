-- +goose Up
-- The delivery log: one row per settled webhook delivery attempt, written in the
-- transaction that settles the attempt under its lease. The summary columns on
-- webhook_deliveries (attempts, last_status_code, last_error) stay as they are: the
-- worker and the operator view read them without this table.
CREATE TABLE webhook_delivery_attempts (
    -- Attempts go with their delivery: deleting an endpoint, the retention sweep's
    -- delete of settled deliveries and an account's deletion all cascade here.
    delivery_id      text NOT NULL REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
    -- The service-delivery-attempt header's value. Only a settlement under the lease
    -- writes a row, and it also sets the delivery's attempts to this number, so a
    -- delivery never records one number twice.
    attempt          integer NOT NULL CHECK (attempt >= 1),
    started_at       timestamptz NOT NULL,
    duration_ms      integer NOT NULL CHECK (duration_ms >= 0),
    -- NULL when no response arrived (refused, timed out, connection closed).
    status_code      integer,
    error            text NOT NULL DEFAULT '' CHECK (octet_length(error) <= 1024),
    -- The start of the response body, valid UTF-8 (core bounds and cleans it).
    response_excerpt text NOT NULL DEFAULT '' CHECK (octet_length(response_excerpt) <= 1024),
    -- Also the index of the log's read (a page's deliveries' attempts, in order) and
    -- of the cascade.
    PRIMARY KEY (delivery_id, attempt)
);

-- ListWebhookDeliveries: one endpoint's deliveries, newest first, paged by
-- (created_at, id).
CREATE INDEX webhook_deliveries_webhook ON webhook_deliveries (webhook_id, created_at DESC, id DESC);

-- +goose Down
DROP INDEX webhook_deliveries_webhook;
DROP TABLE webhook_delivery_attempts;
