-- +goose Up
-- Stop a turn (issue 16): when someone asked to stop it. The runtime running the turn
-- (in any replica, or a remote machine) ends it interrupted; a turn asked to stop
-- before it started ends so as soon as it is taken.
ALTER TABLE messages ADD COLUMN stop_requested_at timestamptz;

-- +goose Down
ALTER TABLE messages DROP COLUMN stop_requested_at;
