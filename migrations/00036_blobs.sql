-- +goose Up
-- Attachment bytes when WSHUB_BLOBS=postgres: replicas that share no disk read what
-- any of them wrote. The bytes arrive sealed by core, so this table never sees
-- plaintext. size is kept beside data so an operator can sum what the table holds
-- without reading (and detoasting) every value.
CREATE TABLE blobs (
    key        text PRIMARY KEY,
    data       bytea NOT NULL,
    size       bigint NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
-- Sealed bytes are indistinguishable from random, so the default (EXTENDED) would try
-- pglz on every value over 2 kB and throw the attempt away: EXTERNAL still moves large
-- values out of line into TOAST, without the wasted compression.
ALTER TABLE blobs ALTER COLUMN data SET STORAGE EXTERNAL;

-- +goose Down
DROP TABLE blobs;
