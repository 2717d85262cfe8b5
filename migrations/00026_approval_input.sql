-- +goose Up
-- What is approved is what runs: the hash (sha256, hex) of the tool input shown for
-- an ask. The input itself is in the ask's approval_requested turn event, sealed
-- there; the hash is no secret. '' for an ask that carried no input.
ALTER TABLE approvals ADD COLUMN input_sha256 text NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE approvals DROP COLUMN input_sha256;
